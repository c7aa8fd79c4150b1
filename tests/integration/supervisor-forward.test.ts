// The supervisor against a real sshd: forwards carry data both ways, a killed ssh comes
// back, stop and shutdown leave no child behind.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSupervisor } from '../../src/supervisor/index.js';
import type { SupervisorApi, SupervisorEvent } from '../../src/supervisor/index.js';
import { alive, isFree, port, roundTrip, sharedServers, spec, tempDir, waitFor, waitState } from './supervisor-fixture.js';

const fx = sharedServers();

async function supervisor(stateDir = tempDir()): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir, mode: 'default' });
  fx.supervisors.push(sup);
  return sup;
}

describe('forwards', () => {
  it('remote_to_local (-L) carries data once RUNNING, and the forward is established when RUNNING is reported', async () => {
    const sup = await supervisor();
    const local = await port();
    const t = spec({ name: 'l', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'remote_to_local' });
    const report = await sup.apply([t]);
    expect(report.added).toEqual([t.hash]);
    const rec = await waitState(sup, t.hash, 'RUNNING');
    // RUNNING means established: the very first connection works, no retry needed.
    expect(await roundTrip(local)).toBe(true);
    expect(rec.pid).toBeGreaterThan(0);
    expect(rec.restarts).toBe(0);
    expect(rec.last_error).toBeNull();
    expect(sup.logs(t.hash)?.some((l) => l.includes('Entering interactive session'))).toBe(true);
  });

  it('local_to_remote (-R) carries data once RUNNING', async () => {
    const sup = await supervisor();
    const remote = await port();
    const t = spec({ name: 'r', remote_host: 'testhost', remote_port: remote, local_port: fx.echo.port, direction: 'local_to_remote' });
    await sup.apply([t]);
    await waitState(sup, t.hash, 'RUNNING');
    expect(await roundTrip(remote)).toBe(true);
  });

  it('binds the address of an ip:port listening side (127.0.0.2 for -L, 127.0.0.1 for -R)', async () => {
    const sup = await supervisor();
    const local = await port();
    const remote = await port();
    const l = spec({ name: 'l2', remote_host: 'testhost', remote_port: `127.0.0.1:${fx.echo.port}`, local_port: `127.0.0.2:${local}`, direction: 'remote_to_local' });
    const r = spec({ name: 'r2', remote_host: 'testhost', remote_port: `127.0.0.1:${remote}`, local_port: `127.0.0.1:${fx.echo.port}`, direction: 'local_to_remote' });
    await sup.apply([l, r]);
    await waitState(sup, l.hash, 'RUNNING');
    await waitState(sup, r.hash, 'RUNNING');
    expect(await roundTrip(local, '127.0.0.2')).toBe(true);
    expect(await isFree(local, '127.0.0.1')).toBe(true);
    expect(await roundTrip(remote, '127.0.0.1')).toBe(true);
  });

  it('ssh-standard mode swaps the flags: local_to_remote is -L', async () => {
    const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir: tempDir(), mode: 'ssh-standard' });
    fx.supervisors.push(sup);
    const local = await port();
    const t = spec({ name: 'std', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'local_to_remote' });
    await sup.apply([t]);
    await waitState(sup, t.hash, 'RUNNING');
    expect(await roundTrip(local)).toBe(true);
  });
});

describe('many tunnels to one host', () => {
  it('start together without sshd dropping any (logins are paced)', async () => {
    const sup = await supervisor();
    const specs = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => spec({ name: `m${i}`, remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' })),
    );
    await sup.apply(specs);
    for (const t of specs) await waitState(sup, t.hash, 'RUNNING', 30_000);
    // No attempt was lost to MaxStartups and retried.
    const retried = sup.statuses().filter((s) => s.restarts > 0);
    expect(retried.map((s) => sup.logs(s.hash)?.filter((l) => l.includes('exited')))).toEqual([]);
    expect(fx.server.log).not.toContain('drop connection');
    const results = await Promise.all(specs.map((t) => roundTrip(t.local_port.port)));
    expect(results.every(Boolean)).toBe(true);
  });
});

describe('supervision', () => {
  it('an ssh killed with SIGKILL is restarted: RUNNING again, data flows, restarts counted, events emitted', async () => {
    const sup = await supervisor();
    const events: SupervisorEvent[] = [];
    sup.subscribe((e) => events.push(e));
    const local = await port();
    const t = spec({ name: 'k', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'remote_to_local' });
    await sup.apply([t]);
    const first = await waitState(sup, t.hash, 'RUNNING');
    process.kill(first.pid as number, 'SIGKILL');
    const again = await waitFor('a new RUNNING child', () => {
      const s = sup.status(t.hash);
      return s?.status === 'RUNNING' && s.pid !== first.pid ? s : undefined;
    });
    expect(again.restarts).toBe(1);
    expect(again.last_exit?.signal).toBe('SIGKILL');
    expect(again.since).not.toBe(first.since);
    expect(await roundTrip(local)).toBe(true);
    expect(alive(first.pid as number)).toBe(false);
    const states = events.filter((e) => e.record.hash === t.hash).map((e) => e.record.status);
    expect(states).toContain('RETRYING');
    expect(states.slice(-2)).toEqual(['STARTING', 'RUNNING']);
  });

  it('stop() ends the child, frees the port and keeps the log; start() brings it back', async () => {
    const sup = await supervisor();
    const local = await port();
    const t = spec({ name: 's', remote_host: 'testhost', remote_port: fx.echo.port, local_port: local, direction: 'remote_to_local' });
    await sup.apply([t]);
    const running = await waitState(sup, t.hash, 'RUNNING');
    const stopped = await sup.stop(t.hash);
    expect(stopped.status).toBe('STOPPED');
    expect(stopped.pid).toBeNull();
    expect(stopped.last_error).toBeNull();
    expect(() => process.kill(running.pid as number, 0)).toThrow();
    expect(await isFree(local)).toBe(true);
    expect(sup.logs(t.hash)?.some((l) => l.includes('ssh stopped'))).toBe(true);

    const starting = await sup.start(t.hash);
    expect(['STARTING', 'RUNNING']).toContain(starting.status);
    await waitState(sup, t.hash, 'RUNNING');
    expect(await roundTrip(local)).toBe(true);
    expect(sup.logs(t.hash)?.some((l) => l.includes('ssh stopped'))).toBe(true);
  });

  it('shutdown() leaves no ssh child and refuses further changes', async () => {
    const sup = await supervisor();
    const specs = await Promise.all(
      [1, 2, 3].map(async (i) => spec({ name: `sh${i}`, remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' })),
    );
    await sup.apply(specs);
    const pids = await Promise.all(specs.map(async (s) => (await waitState(sup, s.hash, 'RUNNING')).pid as number));
    await sup.shutdown();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(sup.statuses().every((s) => s.status === 'STOPPED' && s.pid === null)).toBe(true);
    await expect(sup.apply([])).rejects.toThrow(/shut down/);
    await sup.shutdown();
  });
});

describe('a reload and the ssh config', () => {
  it('applies a new tunnel without waiting for the unchanged ones\' ssh -G, which is read again in the background', async () => {
    // An ssh whose `-G` for the kept tunnel (its ssh_options set ServerAliveCountMax=4)
    // waits while a `hold` file exists, writing its pid to `held`.
    const dir = tempDir('tm-sshg-');
    const bin = join(dir, 'ssh');
    writeFileSync(
      bin,
      `#!/bin/sh
case " $* " in
  *" -G "*ServerAliveCountMax=4*)
    if [ -e ${dir}/hold ]; then echo $$ > ${dir}/held; while [ -e ${dir}/hold ]; do sleep 0.05; done; fi ;;
esac
exec ssh "$@"
`,
    );
    chmodSync(bin, 0o755);
    const sup = await createSupervisor({ sshBin: bin, sshConfigPath: fx.server.sshConfigPath, stateDir: tempDir(), mode: 'default' });
    fx.supervisors.push(sup);
    const kept = spec({ name: 'kept', remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local', ssh_options: { ServerAliveCountMax: '4' } });
    const added = spec({ name: 'added', remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local' });
    await sup.apply([kept]);
    const keptPid = (await waitState(sup, kept.hash, 'RUNNING')).pid;
    writeFileSync(join(dir, 'hold'), '');
    try {
      const report = await sup.apply([kept, added]);
      expect(report).toMatchObject({ added: [added.hash], unchanged: [kept.hash] });
      // The kept tunnel's ssh -G has begun and is still waiting: the reload did not wait for it.
      const heldPid = Number(await waitFor('the kept tunnel\'s ssh -G', () => existsSync(join(dir, 'held')) && readFileSync(join(dir, 'held'), 'utf8').trim()));
      expect(alive(heldPid)).toBe(true);
      const rec = await waitState(sup, added.hash, 'RUNNING');
      expect(await roundTrip(Number(added.local_port.port))).toBe(true);
      expect(rec.pid).toBeGreaterThan(0);
      expect(sup.status(kept.hash)?.pid).toBe(keptPid);
    } finally {
      rmSync(join(dir, 'hold'), { force: true });
    }
  });
});


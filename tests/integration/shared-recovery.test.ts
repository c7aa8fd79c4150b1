// A shared connection's outages against real sshds (SPEC §5, §14): while the server is
// down its tunnels wait for the connection's backoff alone (no attempt of their own, no
// STARTING in between, `restarts` counting each death once), and after an ssh config
// edit moves the host to another server, the connection probes and dials that server,
// so data flows again within SPEC §5's 5 s of its return.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type SupervisorApi } from '../../src/supervisor/index.js';
import type { TunnelState } from '../../src/tunnel/status.js';
import { echoServer, port, roundTrip, sleep, spec, sshd, tempDir, waitFor, waitState, type Sshd } from './supervisor-fixture.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function started(): Promise<{ server: Sshd; echo: { port: number } }> {
  const server = await sshd();
  const echo = await echoServer();
  cleanups.push(() => server.kill(), () => echo.close());
  return { server, echo };
}

async function supervisor(sshConfigPath: string, log?: (entry: Record<string, unknown>) => void): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath, stateDir: tempDir(), mode: 'default', ...(log !== undefined ? { log } : {}) });
  cleanups.push(() => sup.shutdown());
  return sup;
}

/** A TCP listener on 127.0.0.1:`p` that counts the connections it accepts. */
async function countingListener(p: number): Promise<{ dials(): number; close(): Promise<void> }> {
  let dials = 0;
  const server = net.createServer((s) => {
    dials++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(p, '127.0.0.1', resolve));
  return { dials: () => dials, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Waits until data goes through `p` again; resolves with how long that took. */
async function dataBack(p: number, timeoutMs = 20_000): Promise<number> {
  const from = Date.now();
  await waitFor(`data through port ${p}`, () => roundTrip(p), timeoutMs);
  return Date.now() - from;
}

describe('a shared connection backing off owns its tunnels\' retries', () => {
  it('two outages of the server: RETRYING throughout each, no attempt that never starts an ssh, restarts 2', async () => {
    const { server, echo } = await started();
    const sup = await supervisor(server.sshConfigPath);
    const t = spec({ name: 'shared', remote_host: 'testhost', remote_port: echo.port, local_port: await port(), direction: 'remote_to_local' });
    await sup.apply([t]);
    await waitState(sup, t.hash, 'RUNNING');
    for (let death = 1; death <= 2; death++) {
      const seen: TunnelState[] = [];
      const unsubscribe = sup.subscribe((e) => {
        if (e.record.hash === t.hash) seen.push(e.record.status);
      });
      await server.kill();
      await waitState(sup, t.hash, 'RETRYING');
      // Long enough for the connection's backoff to grow past several seconds.
      await sleep(7_000);
      const whileDown = [...seen];
      await server.start();
      await waitState(sup, t.hash, 'RUNNING', 20_000);
      unsubscribe();
      // Out of RUNNING once, RETRYING until the connection is back: no STARTING flip-flop.
      expect(whileDown.slice(whileDown.indexOf('RETRYING'))).not.toContain('STARTING');
    }
    expect(sup.status(t.hash)).toMatchObject({ status: 'RUNNING', restarts: 2 });
    expect(sup.logs(t.hash)?.filter((l) => l.includes('ssh exited (not started)'))).toEqual([]);
    expect(await roundTrip(t.local_port.port)).toBe(true);
  }, 60_000);
});

describe('the connection reads the plan its tunnels read', () => {
  it('after an ssh config edit moves the host to another server, that server\'s outages end within 5 s of its return', async () => {
    const a = await started();
    const b = await sshd();
    cleanups.push(() => b.kill());
    // b lets in a's client key: the one key the config names for testhost.
    appendFileSync(join(b.dir, 'authorized_keys'), readFileSync(`${a.server.clientKey}.pub`, 'utf8'));
    const dir = tempDir();
    const config = join(dir, 'ssh_config');
    const hostBlock = (s: Sshd) =>
      ['Host testhost', '  HostName 127.0.0.1', `  Port ${s.port}`, `  IdentityFile ${a.server.clientKey}`, '  IdentitiesOnly yes', `  UserKnownHostsFile ${join(dir, 'known_hosts')}`, ''].join('\n');
    writeFileSync(config, hostBlock(a.server), { mode: 0o600 });
    const events: string[] = [];
    const sup = await supervisor(config, (entry) => events.push(String(entry.event)));
    const t = spec({ name: 'moved', remote_host: 'testhost', remote_port: a.echo.port, local_port: await port(), direction: 'remote_to_local' });
    await sup.apply([t]);
    const before = await waitState(sup, t.hash, 'RUNNING');

    // The edit (no config reload): the tunnel's plan is refreshed while it runs on a.
    writeFileSync(config, hostBlock(b), { mode: 0o600 });
    await waitFor('the edit to reach the tunnel\'s plan', () => events.includes('ssh_config_applied'));
    expect(sup.status(t.hash)).toMatchObject({ status: 'RUNNING', pid: before.pid });
    // a goes away for good: the next master logs in to b.
    await a.server.kill();
    await waitFor('RUNNING on a new master (on b)', () => {
      const r = sup.status(t.hash);
      return r?.status === 'RUNNING' && r.pid !== before.pid;
    }, 20_000);
    expect(await dataBack(t.local_port.port)).toBeLessThan(5_000);

    // Something answers at a's old address now: a probe that dialled it would be told the fault is over.
    const oldAddress = await countingListener(a.server.port);
    cleanups.push(() => oldAddress.close());
    const recoveries: number[] = [];
    for (let outage = 0; outage < 2; outage++) {
      await b.kill();
      await waitState(sup, t.hash, 'RETRYING');
      // Long enough for the backoff to grow past the 5 s bound without a probe.
      await sleep(8_000);
      await b.start();
      recoveries.push(await dataBack(t.local_port.port));
    }
    expect(oldAddress.dials()).toBe(0);
    for (const ms of recoveries) expect(ms).toBeLessThan(5_000);
  }, 120_000);
});

// Faults on the ssh side, with the built daemon, real ssh and a real sshd: the ssh
// child killed with -9, the whole server down and back, a frozen server. Each test
// checks recovery and that the status told the truth all along: it left RUNNING
// within the detection bound, and said RUNNING again only when data flowed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RECOVERY_BOUND_MS,
  RESTART_BOUND_MS,
  argvOf,
  childrenOf,
  configYaml,
  detectionBoundMs,
  echoServer,
  port,
  recordEvents,
  roundTrip,
  runningAgain,
  sleep,
  sshChildren,
  sshd,
  startDaemon,
  statusOf,
  until,
  type Daemon,
  type Sshd,
} from './helpers.js';

let echo: { close(): Promise<void> };
let echoPort: number;

beforeAll(async () => {
  echoPort = await port();
  echo = await echoServer(echoPort);
});
afterAll(async () => {
  await echo?.close();
});

describe('ssh child and server faults', () => {
  let server: Sshd;
  let d: Daemon;
  let lPort: number;
  let rPort: number;

  beforeAll(async () => {
    server = await sshd();
    lPort = await port();
    rPort = await port();
    d = await startDaemon({
      config: configYaml({
        bring: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local' },
        expose: { remote_host: server.alias, remote_port: `127.0.0.1:${rPort}`, local_port: echoPort, direction: 'local_to_remote' },
      }),
      sshConfigPath: server.sshConfigPath,
    });
    await d.waitState('bring', 'RUNNING');
    await d.waitState('expose', 'RUNNING');
  });
  afterAll(async () => {
    await d?.cleanup();
    await server?.stop();
  });

  it('kill -9 of an ssh child: status leaves RUNNING, a new child carries data within the restart bound, no duplicate child', async () => {
    const rec = await recordEvents(d);
    try {
      const before = await statusOf(d, 'bring');
      expect(before.status).toBe('RUNNING');
      const t0 = Date.now();
      process.kill(before.pid, 'SIGKILL');
      const { record, tookMs } = await runningAgain(d, 'bring', {
        oldPid: before.pid,
        sinceMs: t0,
        timeoutMs: RESTART_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(lPort, 'after kill -9')).toBe('after kill -9'),
      });
      expect(tookMs).toBeLessThan(RESTART_BOUND_MS);
      expect(record.restarts).toBeGreaterThan(before.restarts);
      expect(record.last_exit?.signal).toBe('SIGKILL');

      // The stream saw it leave RUNNING before the new child was RUNNING, and never
      // called the dead pid RUNNING after the kill.
      const after = rec.statuses('bring').filter((e) => e.at >= t0);
      const firstNotRunning = after.findIndex((e) => e.data.status !== 'RUNNING');
      const firstRunning = after.findIndex((e) => e.data.status === 'RUNNING');
      expect(firstNotRunning).toBeGreaterThanOrEqual(0);
      expect(firstNotRunning).toBeLessThan(firstRunning);
      expect(after.filter((e) => e.data.status === 'RUNNING' && e.data.pid === before.pid)).toEqual([]);

      // Both tunnels go to one host with the same options: one shared connection (SPEC §14), one ssh.
      // The other tunnel on the killed master comes back on the new one (its forward added after bring's, maybe).
      const expose = await d.waitFor('expose RUNNING on the new master', async () => {
        const e = await statusOf(d, 'expose');
        return e.status === 'RUNNING' && e.pid !== before.pid ? e : undefined;
      }, RESTART_BOUND_MS + 5_000);
      const kids = sshChildren(d.dir);
      expect(expose.pid).toBe(record.pid);
      expect(kids).toEqual([record.pid]);
      expect(childrenOf(d.child.pid!).filter((p) => kids.includes(p)).length).toBe(1);
    } finally {
      rec.close();
    }
  });

  it('sshd restarted (listener and sessions): both tunnels leave RUNNING at once, stay down while it is down, carry data again once it is back', async () => {
    const rec = await recordEvents(d);
    try {
      const old = { bring: await statusOf(d, 'bring'), expose: await statusOf(d, 'expose') };
      const t0 = Date.now();
      await server.kill();
      for (const name of ['bring', 'expose'] as const) {
        const left = await until(`${name} to leave RUNNING`, async () => {
          const t = await statusOf(d, name);
          return t.status !== 'RUNNING' ? t : undefined;
        }, 3_000 + 5_000, 25);
        expect(['RETRYING', 'STARTING']).toContain(left.status);
      }
      // While the server is down nothing can run: the status must not say otherwise.
      await sleep(2_000);
      for (const name of ['bring', 'expose'] as const) expect((await statusOf(d, name)).status).not.toBe('RUNNING');
      await expect(roundTrip(lPort, 'x', '127.0.0.1', 500)).rejects.toThrow();
      const bring = await statusOf(d, 'bring');
      expect(bring.last_error).toMatch(/refused|connection lost|closed/i);

      const t1 = Date.now();
      await server.start();
      const b = await runningAgain(d, 'bring', {
        oldPid: old.bring.pid, sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(lPort, 'server back -L')).toBe('server back -L'),
      });
      const e = await runningAgain(d, 'expose', {
        oldPid: old.expose.pid, sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(rPort, 'server back -R')).toBe('server back -R'),
      });
      expect(b.tookMs).toBeLessThan(RECOVERY_BOUND_MS);
      expect(e.tookMs).toBeLessThan(RECOVERY_BOUND_MS);

      for (const name of ['bring', 'expose']) {
        const down = rec.statuses(name).filter((x) => x.at > t0 + 200 && x.at < t1);
        expect(down.filter((x) => x.data.status === 'RUNNING')).toEqual([]);
      }
      // One shared connection carries both (SPEC §14).
      expect(sshChildren(d.dir).length).toBe(1);
    } finally {
      rec.close();
    }
  });

  it('sshd restarted at once (kill and start in one go): both tunnels come back with new children and data', async () => {
    const old = { bring: await statusOf(d, 'bring'), expose: await statusOf(d, 'expose') };
    const t0 = Date.now();
    await server.restart();
    const b = await runningAgain(d, 'bring', {
      oldPid: old.bring.pid, sinceMs: t0, timeoutMs: RECOVERY_BOUND_MS + 5_000,
      check: async () => expect(await roundTrip(lPort, 'restarted -L')).toBe('restarted -L'),
    });
    const e = await runningAgain(d, 'expose', {
      oldPid: old.expose.pid, sinceMs: t0, timeoutMs: RECOVERY_BOUND_MS + 5_000,
      check: async () => expect(await roundTrip(rPort, 'restarted -R')).toBe('restarted -R'),
    });
    expect(b.tookMs).toBeLessThan(RECOVERY_BOUND_MS);
    expect(e.tookMs).toBeLessThan(RECOVERY_BOUND_MS);
    expect(sshChildren(d.dir).length).toBe(1);
  });
});

describe('a frozen server (session stopped with SIGSTOP)', () => {
  // Fast keep-alives for this tunnel only, so detection takes seconds, not 15–20 s.
  const INTERVAL = 1;
  const COUNT_MAX = 2;
  let server: Sshd;
  let d: Daemon;
  let lPort: number;
  let frozen: number[] = [];

  beforeAll(async () => {
    server = await sshd();
    lPort = await port();
    d = await startDaemon({
      config: configYaml({
        frozen: {
          remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local',
          ssh_options: { ServerAliveInterval: INTERVAL, ServerAliveCountMax: COUNT_MAX },
        },
      }),
      sshConfigPath: server.sshConfigPath,
    });
    await d.waitState('frozen', 'RUNNING');
  });
  afterAll(async () => {
    for (const p of frozen) {
      try { process.kill(p, 'SIGCONT'); process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }
    await d?.cleanup();
    await server?.stop();
  });

  it('the ssh argv carries the per-tunnel ServerAlive options before the defaults', async () => {
    const t = await statusOf(d, 'frozen');
    const argv = argvOf(t.pid)!;
    const first = (key: string) => argv.find((a) => a.startsWith(`${key}=`));
    expect(first('ServerAliveInterval')).toBe(`ServerAliveInterval=${INTERVAL}`);
    expect(first('ServerAliveCountMax')).toBe(`ServerAliveCountMax=${COUNT_MAX}`);
  });

  it('leaves RUNNING within ServerAliveInterval × (CountMax + 1) plus a margin, and is RUNNING again only with data flowing', async () => {
    expect(await roundTrip(lPort, 'before')).toBe('before');
    const before = await statusOf(d, 'frozen');
    const rec = await recordEvents(d);
    try {
      frozen = server.allPids();
      expect(frozen.length).toBeGreaterThan(0);
      const t0 = Date.now();
      for (const p of frozen) process.kill(p, 'SIGSTOP');

      const bound = detectionBoundMs(INTERVAL, COUNT_MAX);
      const left = await until('the frozen tunnel to leave RUNNING', async () => {
        const e = rec.statuses('frozen').find((x) => x.at >= t0 && x.data.status !== 'RUNNING');
        return e;
      }, bound + 2_000, 25);
      expect(left.at - t0).toBeLessThan(bound);
      expect(left.data.last_error).toMatch(/not responding|timeout/i);

      // The listener is not frozen: a new session is a real recovery, and data must flow the moment it says RUNNING.
      const { tookMs } = await runningAgain(d, 'frozen', {
        oldPid: before.pid, sinceMs: left.at, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(lPort, 'after freeze')).toBe('after freeze'),
      });
      expect(tookMs).toBeLessThan(RECOVERY_BOUND_MS);
      expect(sshChildren(d.dir).length).toBe(1);
    } finally {
      rec.close();
    }
  });

  it('the whole server frozen (listener too): never RUNNING while frozen, RUNNING with data soon after it is thawed', async () => {
    const before = await d.waitState('frozen', 'RUNNING');
    const rec = await recordEvents(d);
    const whole = [server.pid, ...server.allPids()].filter((p) => !frozen.includes(p));
    try {
      const t0 = Date.now();
      for (const p of whole) process.kill(p, 'SIGSTOP');
      const bound = detectionBoundMs(INTERVAL, COUNT_MAX);
      const left = await until('the tunnel to leave RUNNING', () => rec.statuses('frozen').find((x) => x.at >= t0 && x.data.status !== 'RUNNING'), bound + 2_000, 25);
      expect(left.at - t0).toBeLessThan(bound);
      // New logins reach the kernel's backlog but no sshd answers them.
      await sleep(5_000);
      expect((await statusOf(d, 'frozen')).status).not.toBe('RUNNING');
      expect(rec.statuses('frozen').filter((x) => x.at > left.at && x.data.status === 'RUNNING')).toEqual([]);

      const t1 = Date.now();
      for (const p of whole) process.kill(p, 'SIGCONT');
      const { tookMs } = await runningAgain(d, 'frozen', {
        oldPid: before.pid, sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(lPort, 'thawed')).toBe('thawed'),
      });
      expect(tookMs).toBeLessThan(RECOVERY_BOUND_MS);
      expect(sshChildren(d.dir).length).toBe(1);
    } finally {
      for (const p of whole) {
        try { process.kill(p, 'SIGCONT'); } catch { /* gone */ }
      }
      rec.close();
    }
  });
});

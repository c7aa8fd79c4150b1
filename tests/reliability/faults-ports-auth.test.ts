// Faults a retry fixes once they end (our local port busy, the remote port held by
// an old session) and faults it never fixes (authentication refused, host key
// changed). The first kind is RETRYING, never RUNNING, until the port is free, then
// RUNNING with data; the second is FAILED with the reason and no retry storm.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RECOVERY_BOUND_MS,
  authRejections,
  configYaml,
  echoServer,
  holdPort,
  loginAttempts,
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

describe('busy ports', () => {
  let server: Sshd;
  let d: Daemon;
  let lPort: number;
  let rPort: number;
  let otherPort: number;
  let localHolder: { close(): Promise<void> };
  let other: { close(): Promise<void> };
  let oldSession: ChildProcess;

  beforeAll(async () => {
    server = await sshd();
    lPort = await port();
    rPort = await port();
    otherPort = await port();
    localHolder = await holdPort(lPort, '127.0.0.1', 'local squatter');
    other = await holdPort(otherPort, '127.0.0.1', 'old session');
    // An "old session" holding the remote port: a plain ssh -R of its own.
    oldSession = spawn('ssh', [
      '-N', '-F', server.sshConfigPath, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=accept-new', '-o', 'ExitOnForwardFailure=yes',
      '-R', `127.0.0.1:${rPort}:127.0.0.1:${otherPort}`, '--', server.alias,
    ], { stdio: 'ignore' });
    await until('the old session to hold the remote port', async () => (await roundTrip(rPort, 'probe', '127.0.0.1', 500)) === 'old session', 10_000, 100);
    d = await startDaemon({
      config: configYaml({
        bring: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local' },
        expose: { remote_host: server.alias, remote_port: `127.0.0.1:${rPort}`, local_port: echoPort, direction: 'local_to_remote' },
      }),
      sshConfigPath: server.sshConfigPath,
    });
  });
  afterAll(async () => {
    oldSession?.kill('SIGKILL');
    await d?.cleanup();
    await localHolder?.close();
    await other?.close();
    await server?.stop();
  });

  it('local port busy: RETRYING with the bind error, never RUNNING, until the port is freed; then RUNNING with data', async () => {
    const rec = await recordEvents(d);
    try {
      const t = await d.waitState('bring', 'RETRYING');
      expect(t.last_error).toMatch(/local port is busy: bind \[127\.0\.0\.1\]:\d+: Address already in use/);
      await sleep(2_500);
      expect((await statusOf(d, 'bring')).status).not.toBe('RUNNING');
      expect(await roundTrip(lPort, 'who')).toBe('local squatter');
      expect(rec.statuses('bring').filter((e) => e.data.status === 'RUNNING')).toEqual([]);

      const t1 = Date.now();
      await localHolder.close();
      const { tookMs } = await runningAgain(d, 'bring', {
        sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(lPort, 'ours now')).toBe('ours now'),
      });
      expect(tookMs).toBeLessThan(RECOVERY_BOUND_MS);
    } finally {
      rec.close();
    }
  });

  it('remote port held by an old session: RETRYING naming the refused remote forward, never RUNNING, until it is released; then RUNNING with data', async () => {
    const rec = await recordEvents(d);
    try {
      const t = await until('expose RETRYING with its error', async () => {
        const s = await statusOf(d, 'expose');
        return s.status === 'RETRYING' && s.last_error ? s : undefined;
      }, 15_000);
      expect(t.last_error).toMatch(/remote forward refused by the server: (Error: )?remote port forwarding failed for listen port \d+ \(the port may be taken on the server\)/);
      await sleep(2_500);
      expect((await statusOf(d, 'expose')).status).not.toBe('RUNNING');
      expect(await roundTrip(rPort, 'who')).toBe('old session');
      expect(rec.statuses('expose').filter((e) => e.data.status === 'RUNNING')).toEqual([]);

      const t1 = Date.now();
      oldSession.kill('SIGTERM');
      const { tookMs } = await runningAgain(d, 'expose', {
        sinceMs: t1, timeoutMs: RECOVERY_BOUND_MS + 5_000,
        check: async () => expect(await roundTrip(rPort, 'ours now -R')).toBe('ours now -R'),
      });
      expect(tookMs).toBeLessThan(RECOVERY_BOUND_MS);
      // Both tunnels share one connection to the host (SPEC §14).
      expect(sshChildren(d.dir).length).toBe(1);
    } finally {
      rec.close();
    }
  });
});

describe('permanent failures: authentication refused, host key changed', () => {
  let server: Sshd;
  let d: Daemon;
  let lPort: number;
  let deniedPort: number;

  beforeAll(async () => {
    server = await sshd();
    lPort = await port();
    deniedPort = await port();
    d = await startDaemon({
      config: configYaml({
        keyed: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local' },
        // `badkey` offers a key the server does not accept.
        denied: { remote_host: 'badkey', remote_port: echoPort, local_port: `127.0.0.1:${deniedPort}`, direction: 'remote_to_local' },
      }),
      sshConfigPath: server.sshConfigPath,
    });
    await d.waitState('keyed', 'RUNNING');
  });
  afterAll(async () => {
    await d?.cleanup();
    await server?.stop();
  });

  it('authentication failure: FAILED with the reason, one login attempt, no retry in 5 s; an explicit start tries exactly once more', async () => {
    const t = await d.waitState('denied', 'FAILED');
    expect(t.last_error).toMatch(/^authentication failed: .*Permission denied \(publickey\)/);
    expect(t.next_retry_at).toBeNull();
    expect(t.pid).toBeNull();
    // sshd logs the rejection as the client leaves, which may be a moment after ssh exited.
    await until('sshd to log the rejection', () => authRejections(server.log) >= 1, 5_000);
    expect(authRejections(server.log)).toBe(1);
    const attempts = loginAttempts(server.log);
    await sleep(5_000);
    expect(loginAttempts(server.log)).toBe(attempts);
    expect(authRejections(server.log)).toBe(1);
    expect((await statusOf(d, 'denied')).status).toBe('FAILED');

    const res = await d.api(`/start/${t.hash}`, { method: 'POST' });
    expect(res.status).toBe(200);
    await until('a second attempt', () => authRejections(server.log) === 2, 10_000);
    const again = await d.waitState('denied', 'FAILED');
    expect(again.last_error).toMatch(/authentication failed/);
    await sleep(2_000);
    expect(loginAttempts(server.log)).toBe(attempts + 1);
    expect(authRejections(server.log)).toBe(2);
  });

  it('a reload that leaves the FAILED tunnel unchanged does not retry it; changing its entry tries exactly once', async () => {
    const rejected = authRejections(server.log);
    const tunnels = {
      keyed: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${lPort}`, direction: 'remote_to_local' as const },
      denied: { remote_host: 'badkey', remote_port: echoPort, local_port: `127.0.0.1:${deniedPort}`, direction: 'remote_to_local' as const },
    };
    const keyedPid = (await statusOf(d, 'keyed')).pid;
    const extraPort = await port();
    d.writeConfig(configYaml({ ...tunnels, extra: { ...tunnels.keyed, local_port: `127.0.0.1:${extraPort}` } }));
    await d.waitState('extra', 'RUNNING');
    await sleep(1_500);
    expect(authRejections(server.log)).toBe(rejected);
    expect((await statusOf(d, 'denied')).status).toBe('FAILED');
    expect((await statusOf(d, 'keyed')).pid).toBe(keyedPid);

    const movedPort = await port();
    d.writeConfig(configYaml({ keyed: tunnels.keyed, denied: { ...tunnels.denied, local_port: `127.0.0.1:${movedPort}` } }));
    await until('one new attempt for the changed entry', () => authRejections(server.log) === rejected + 1, 10_000);
    const t = await d.waitState('denied', 'FAILED');
    expect(t.local_port).toBe(`127.0.0.1:${movedPort}`);
    await sleep(2_000);
    expect(authRejections(server.log)).toBe(rejected + 1);
    expect((await statusOf(d, 'keyed')).pid).toBe(keyedPid);
  });

  it('host key changed: FAILED naming the host key, no retry storm, and it is not accepted silently', async () => {
    const before = await statusOf(d, 'keyed');
    expect(before.status).toBe('RUNNING');
    await server.kill();
    await d.waitFor('keyed to leave RUNNING', async () => (await statusOf(d, 'keyed')).status !== 'RUNNING');
    // A new host key: what a man in the middle (or a reinstalled server) presents.
    rmSync(join(server.dir, 'host_key'));
    rmSync(join(server.dir, 'host_key.pub'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(server.dir, 'host_key')]);
    const attemptsBefore = loginAttempts(server.log);
    await server.start();

    const t = await d.waitState('keyed', 'FAILED', 20_000);
    expect(t.last_error).toMatch(/^host key verification failed: /);
    expect(t.pid).toBeNull();
    const attempts = loginAttempts(server.log);
    expect(attempts - attemptsBefore).toBeGreaterThanOrEqual(1);
    // Backoff starts at 0.5 s and doubles: a retrying tunnel would log in again within 3 s.
    await sleep(3_000);
    expect(loginAttempts(server.log)).toBe(attempts);
    expect((await statusOf(d, 'keyed')).status).toBe('FAILED');
    await expect(roundTrip(lPort, 'x', '127.0.0.1', 500)).rejects.toThrow();
    expect(sshChildren(d.dir)).toEqual([]);
  });
});

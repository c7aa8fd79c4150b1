// Faults of the daemon itself and of its config file: killed with -9 and started
// again, a file made invalid, deleted, or written half-way and then completed. The
// tunnels that should keep running keep the same ssh child (same pid) and carry data
// throughout; desired states survive.
import { closeSync, openSync, rmSync, writeFileSync, writeSync, fsyncSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiErrorBody, StatusRecord } from '../../src/api/types.js';
import {
  RECOVERY_BOUND_MS,
  argvOf,
  configYaml,
  echoServer,
  isAlive,
  port,
  recordEvents,
  roundTrip,
  sleep,
  socketRequest,
  sshChildren,
  sshd,
  startDaemon,
  statusOf,
  type Daemon,
  type Sshd,
  type TunnelFields,
} from './helpers.js';

let server: Sshd;
let echo: { close(): Promise<void> };
let echoPort: number;
let first: Daemon | undefined;
let d: Daemon;
let ports: { a: number; b: number; c: number; r: number };
let tunnels: Record<string, TunnelFields>;
let base: string;

const pidsOf = async (dd: Daemon) => Object.fromEntries((await dd.json<any[]>('/status')).map((t) => [t.name, t.pid]));

beforeAll(async () => {
  server = await sshd();
  echoPort = await port();
  echo = await echoServer(echoPort);
  ports = { a: await port(), b: await port(), c: await port(), r: await port() };
  tunnels = {
    alpha: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${ports.a}`, direction: 'remote_to_local' },
    beta: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${ports.b}`, direction: 'remote_to_local' },
    gamma: { remote_host: server.alias, remote_port: `127.0.0.1:${ports.r}`, local_port: echoPort, direction: 'local_to_remote' },
  };
  base = '# reliability: daemon and config faults\n' + configYaml(tunnels);
});
afterAll(async () => {
  await first?.stop('SIGKILL').catch(() => undefined);
  await d?.cleanup();
  await echo?.close();
  await server?.stop();
});

describe('daemon killed with -9 and started again', () => {
  it('ends the old children, starts each wanted tunnel once on the same ports, keeps a tunnel stopped by hand STOPPED', async () => {
    first = await startDaemon({ config: base, sshConfigPath: server.sshConfigPath });
    for (const n of ['alpha', 'beta', 'gamma']) await first.waitState(n, 'RUNNING');
    const beta = await statusOf(first, 'beta');
    expect((await first.api(`/stop/${beta.hash}`, { method: 'POST' })).status).toBe(200);
    await first.waitState('beta', 'STOPPED');
    const old = await pidsOf(first);
    expect(old.beta).toBeNull();

    expect(await first.stop('SIGKILL')).toBeNull();
    // kill -9 runs no exit handler: its children are still there, holding their ports.
    const orphans = [old.alpha, old.gamma].filter((p) => isAlive(p));
    expect(orphans.length).toBeGreaterThan(0);

    d = await startDaemon({ config: base, sshConfigPath: server.sshConfigPath, dir: first.dir, apiPort: first.apiPort });
    first = undefined;
    const alpha = await d.waitState('alpha', 'RUNNING', RECOVERY_BOUND_MS + 10_000);
    const gamma = await d.waitState('gamma', 'RUNNING', RECOVERY_BOUND_MS + 10_000);
    for (const p of [old.alpha, old.gamma]) expect(isAlive(p)).toBe(false);
    expect([alpha.pid, gamma.pid]).not.toContain(old.alpha);
    expect([alpha.pid, gamma.pid]).not.toContain(old.gamma);
    // Same ports, now served by the new children.
    expect(await roundTrip(ports.a, 'alpha after restart')).toBe('alpha after restart');
    expect(await roundTrip(ports.r, 'gamma after restart')).toBe('gamma after restart');
    // The desired state survived: beta stays stopped, with no child and its port free.
    await sleep(1_500);
    const betaNow = await statusOf(d, 'beta');
    expect(betaNow.status).toBe('STOPPED');
    expect(betaNow.pid).toBeNull();
    await expect(roundTrip(ports.b, 'x', '127.0.0.1', 500)).rejects.toThrow();
    // Exactly one ssh per connection, the new daemon's: alpha and gamma share their host's (SPEC §14).
    expect(gamma.pid).toBe(alpha.pid);
    expect(sshChildren(d.dir)).toEqual([alpha.pid]);
    // The stale socket was replaced and answers.
    const h = await socketRequest(d.socketPath, 'GET', '/health');
    expect(h.status).toBe(200);
    expect(d.stderr()).toMatch(/leftover_ssh_ended/);
  });
});

describe('config file faults', () => {
  it('an invalid file (syntax) or broken entries (semantics) change nothing that runs: same pids, data flows, the error names line and field until fixed', async () => {
    const before = await pidsOf(d);
    // Syntax: nothing in the file is applied (503). Semantics: the entry is left out, the rest applied (200, left_out).
    const invalids = [
      { text: base + '  - name: broken\n    remote_port: [unclosed\n', error: /line \d+, column \d+/, leftOut: null },
      {
        text: base + configYaml({ clash: { ...tunnels.alpha!, remote_port: echoPort + 0 } }).replace('tunnels:\n', '').replace('"clash"', 'clash'),
        error: /line \d+, column \d+: tunnels\[3\]/,
        leftOut: 1,
      },
      { text: base.replace(`remote_port: ${echoPort}`, 'remote_port: 70000'), error: /line \d+, column \d+: tunnels\[0\]\.remote_port: expected/, leftOut: 1 },
    ];
    for (const bad of invalids) {
      d.writeConfig(bad.text);
      const h = await d.waitFor('config invalid', async () => {
        const body = await d.json('/health/details');
        return body.config.valid === false ? body : undefined;
      });
      expect(h.config.error).toMatch(bad.error);
      const reload = await d.api('/reload', { method: 'POST' });
      if (bad.leftOut === null) {
        expect(reload.status).toBe(503);
        expect(((await reload.json()) as ApiErrorBody).error.code).toBe('config_invalid');
      } else {
        expect(reload.status).toBe(200);
        expect(await reload.json()).toMatchObject({ ok: true, left_out: bad.leftOut, removed: [], changed: [] });
      }
      expect(await pidsOf(d)).toEqual(before);
      expect(await roundTrip(ports.a, 'still up')).toBe('still up');
      d.writeConfig(base);
      await d.waitFor('config valid again', async () => (await d.json('/health')).config.valid === true);
      expect(await pidsOf(d)).toEqual(before);
    }
  });

  it('a deleted file keeps the last good config running; when it is back, nothing restarts', async () => {
    const before = await pidsOf(d);
    rmSync(d.configPath);
    await d.waitFor('missing reported', async () => (await d.json('/health')).config.missing === true);
    await sleep(1_000);
    expect(await pidsOf(d)).toEqual(before);
    expect(await roundTrip(ports.a, 'kept')).toBe('kept');
    expect(await roundTrip(ports.r, 'kept -R')).toBe('kept -R');
    writeFileSync(d.configPath, base);
    await d.waitFor('file back', async () => (await d.json('/health')).config.missing === false);
    expect(await pidsOf(d)).toEqual(before);
  });

  it('a file truncated and written in place in pieces within the debounce window: the half states are never applied', async () => {
    const before = await pidsOf(d);
    const deltaPort = await port();
    const full = base + configYaml({ delta: { remote_host: server.alias, remote_port: echoPort, local_port: `127.0.0.1:${deltaPort}`, direction: 'remote_to_local' } }).replace('tunnels:\n', '');
    // Cut right after alpha's entry: the half file is valid YAML with one tunnel,
    // and applying it would stop the others.
    const cut = full.indexOf('  - name: "beta"');
    expect(cut).toBeGreaterThan(0);
    const rec = await recordEvents(d);
    const t0 = Date.now();
    const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    // What an editor writing in place does: truncate (an empty file is a valid, empty
    // config), write some, write the rest.
    const fd = openSync(d.configPath, 'w');
    try {
      fsyncSync(fd);
      pause(30);
      writeSync(fd, full.slice(0, cut));
      fsyncSync(fd);
      pause(30);
      writeSync(fd, full.slice(cut));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      await d.waitState('delta', 'RUNNING', RECOVERY_BOUND_MS + 5_000);
      await sleep(500);
      const reloads = rec.reloads().filter((r) => r.at >= t0);
      expect(reloads.length).toBeGreaterThanOrEqual(1);
      for (const r of reloads) {
        expect(r.data.ok).toBe(true);
        expect(r.data.removed).toEqual([]);
      }
      const after = await pidsOf(d);
      for (const n of ['alpha', 'beta', 'gamma']) expect(after[n]).toBe(before[n]);
      for (const n of ['alpha', 'gamma']) {
        expect(rec.statuses(n).filter((e) => e.at >= t0)).toEqual([]);
      }
      expect(await roundTrip(deltaPort, 'delta')).toBe('delta');
      expect(argvOf(after.alpha)).not.toBeNull();
    } finally {
      rec.close();
    }
  });
});

describe('an ssh child that does not stop', () => {
  it('a stopped (SIGSTOP) child is killed after the grace period, on a stop and on daemon shutdown; none outlives the daemon', async () => {
    const alpha = await d.waitState('alpha', 'RUNNING');
    process.kill(alpha.pid, 'SIGSTOP');
    const t0 = Date.now();
    const res = await d.api(`/stop/${alpha.hash}`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as StatusRecord).status).toBe('STOPPED');
    // TERM stays pending on a stopped process; KILL follows after the 3 s grace period.
    expect(Date.now() - t0).toBeLessThan(3_000 + 5_000);
    expect(isAlive(alpha.pid)).toBe(false);

    const gamma = await d.waitState('gamma', 'RUNNING');
    process.kill(gamma.pid, 'SIGSTOP');
    const t1 = Date.now();
    expect(await d.stop('SIGTERM')).toBe(0);
    expect(Date.now() - t1).toBeLessThan(3_000 + 5_000);
    expect(isAlive(gamma.pid)).toBe(false);
    expect(sshChildren(d.dir)).toEqual([]);
  });
});

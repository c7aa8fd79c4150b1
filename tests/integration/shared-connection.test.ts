// Shared connections (SPEC §14) against a real sshd: tunnels to one host ride one
// ControlMaster; each tunnel's state stays true when its own forward fails, when
// another tunnel on the connection changes, and when the connection itself is lost
// (killed or frozen) and comes back; shared: false keeps an ssh of its own; a master
// left by a killed daemon is ended by the next one.
import { readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSupervisor, type SupervisorApi } from '../../src/supervisor/index.js';
import type { StatusRecord } from '../../src/tunnel/status.js';
import { alive, isFree, port, roundTrip, sharedServers, spec, tempDir, waitFor, waitState } from './supervisor-fixture.js';

const fx = sharedServers();

async function supervisor(stateDir = tempDir()): Promise<SupervisorApi> {
  const sup = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir, mode: 'default' });
  fx.supervisors.push(sup);
  return sup;
}

const tunnel = async (name: string, extra: Partial<Parameters<typeof spec>[0]> = {}) =>
  spec({ name, remote_host: 'testhost', remote_port: fx.echo.port, local_port: await port(), direction: 'remote_to_local', ...extra });

async function allRunning(sup: SupervisorApi, hashes: string[], timeoutMs = 15_000): Promise<StatusRecord[]> {
  return waitFor('every tunnel RUNNING', () => {
    const recs = hashes.map((h) => sup.status(h));
    return recs.every((r) => r?.status === 'RUNNING') ? (recs as StatusRecord[]) : undefined;
  }, timeoutMs);
}

describe('one login carries every tunnel to the host', () => {
  it('three tunnels (-L and -R) share one ssh and one sshd session; each carries data; the record names the connection', async () => {
    const sup = await supervisor();
    // Sessions are told apart by pid: one left by an earlier test may still be ending.
    const sessionsBefore = new Set(fx.server.sessionPids());
    const a = await tunnel('a');
    const b = await tunnel('b');
    const r = await tunnel('r', { direction: 'local_to_remote', remote_port: await port(), local_port: fx.echo.port });
    await sup.apply([a, b, r]);
    const recs = await allRunning(sup, [a.hash, b.hash, r.hash]);
    const pids = new Set(recs.map((x) => x.pid));
    expect(pids.size).toBe(1);
    const [pid] = [...pids];
    expect(pid).toBeGreaterThan(0);
    for (const rec of recs) expect(rec.connection).toEqual({ id: recs[0]!.connection!.id, pid, state: 'up' });
    expect(recs[0]!.connection!.id).toMatch(/^[0-9a-f]{16}$/);
    expect(fx.server.sessionPids().filter((p) => !sessionsBefore.has(p))).toHaveLength(1);
    expect(await roundTrip(a.local_port.port)).toBe(true);
    expect(await roundTrip(b.local_port.port)).toBe(true);
    expect(await roundTrip(r.remote_port.port)).toBe(true);
  });

  it('a forward that fails (local port taken, remote port taken) fails that tunnel alone; freed, it comes up on the same connection', async () => {
    const sup = await supervisor();
    const ok = await tunnel('ok');
    const blocker = net.createServer();
    const busyPort = await port();
    await new Promise<void>((resolve) => blocker.listen(busyPort, '127.0.0.1', resolve));
    const busy = await tunnel('busy', { local_port: busyPort });
    const takenRemote = await port();
    const remoteBlocker = net.createServer();
    await new Promise<void>((resolve) => remoteBlocker.listen(takenRemote, '127.0.0.1', resolve));
    const rbusy = await tunnel('rbusy', { direction: 'local_to_remote', remote_port: takenRemote, local_port: fx.echo.port });
    await sup.apply([ok, busy, rbusy]);
    const [running] = await allRunning(sup, [ok.hash]);
    const l = await waitState(sup, busy.hash, 'RETRYING');
    expect(l.last_error).toMatch(/^local port is busy: .*Address already in use/);
    expect(l.pid).toBeNull();
    const rr = await waitState(sup, rbusy.hash, 'RETRYING');
    expect(rr.last_error).toMatch(/^remote forward refused by the server: remote port forwarding failed for listen port \d+/);
    // The master and the other forward were never disturbed.
    expect(sup.status(ok.hash)).toMatchObject({ status: 'RUNNING', pid: running!.pid, restarts: 0 });
    expect(await roundTrip(ok.local_port.port)).toBe(true);
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    await new Promise<void>((resolve) => remoteBlocker.close(() => resolve()));
    const back = await allRunning(sup, [busy.hash, rbusy.hash]);
    expect(back.map((x) => x.pid)).toEqual([running!.pid, running!.pid]);
    expect(await roundTrip(busyPort)).toBe(true);
    expect(await roundTrip(takenRemote)).toBe(true);
  });

  it('stop, start, restart and edit one tunnel among many: the others keep their forward and their connection', async () => {
    const sup = await supervisor();
    const ts = await Promise.all(['t0', 't1', 't2', 't3', 't4'].map((n) => tunnel(n)));
    await sup.apply(ts);
    const before = await allRunning(sup, ts.map((t) => t.hash));
    const pid = before[0]!.pid;
    const [t0, t1, t2, t3, t4] = ts as [typeof ts[0], typeof ts[0], typeof ts[0], typeof ts[0], typeof ts[0]];
    const others = [t3, t4];
    const untouched = async () => {
      for (const t of others) {
        expect(sup.status(t.hash)).toMatchObject({ status: 'RUNNING', pid, restarts: 0 });
        expect(await roundTrip(t.local_port.port)).toBe(true);
      }
    };
    // Stop: its port is freed at once, its record STOPPED with no pid.
    const stopped = await sup.stop(t0.hash);
    expect(stopped).toMatchObject({ status: 'STOPPED', pid: null });
    expect(await isFree(t0.local_port.port)).toBe(true);
    await untouched();
    // Start again: same connection.
    await sup.start(t0.hash);
    expect((await waitState(sup, t0.hash, 'RUNNING')).pid).toBe(pid);
    expect(await roundTrip(t0.local_port.port)).toBe(true);
    // Restart: a new forward, never STOPPED, counted.
    await sup.restart(t1.hash);
    const restarted = await waitState(sup, t1.hash, 'RUNNING');
    expect(restarted).toMatchObject({ pid, restarts: 1 });
    expect(await roundTrip(t1.local_port.port)).toBe(true);
    await untouched();
    // Edit (a new option set): it moves to a connection of its own kind, the others stay.
    const edited = { ...t2, ssh_options: { ServerAliveInterval: '7' } };
    const report = await sup.apply([t0, t1, edited, t3, t4]);
    expect(report.changed).toEqual([t2.hash]);
    const moved = await waitState(sup, t2.hash, 'RUNNING');
    expect(moved.pid).not.toBe(pid);
    expect(moved.connection!.id).not.toBe(before[0]!.connection!.id);
    expect(await roundTrip(t2.local_port.port)).toBe(true);
    await untouched();
    // Removing every tunnel of a connection ends its master.
    await sup.apply([t0, t1, t3, t4]);
    await waitFor('the edited tunnel\'s master to end', () => !alive(moved.pid as number));
    await untouched();
  });

  it('shared: false gives a tunnel an ssh of its own, with no connection in its record', async () => {
    const sup = await supervisor();
    const shared = await tunnel('shared');
    const own = await tunnel('own', { shared: false });
    await sup.apply([shared, own]);
    const [s, o] = await allRunning(sup, [shared.hash, own.hash]);
    expect(o!.pid).not.toBe(s!.pid);
    expect(o!.connection).toBeNull();
    expect(s!.connection?.state).toBe('up');
    expect(await roundTrip(own.local_port.port)).toBe(true);
    // Its own ssh: killing it leaves the shared one alone.
    process.kill(o!.pid as number, 'SIGKILL');
    await waitFor('own tunnel back with a new ssh', () => {
      const r = sup.status(own.hash);
      return r?.status === 'RUNNING' && r.pid !== o!.pid;
    });
    expect(sup.status(shared.hash)).toMatchObject({ status: 'RUNNING', pid: s!.pid, restarts: 0 });
  });
});

describe('SOCKS (direction: socks)', () => {
  it('curl reaches an HTTP server through the SOCKS port, shared with an -L tunnel, and with an ssh of its own', async () => {
    const web = http.createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const webPort = (web.address() as net.AddressInfo).port;
    try {
      const sup = await supervisor();
      const plain = await tunnel('plain');
      const socks = spec({ name: 'socks', remote_host: 'testhost', remote_port: '', local_port: await port(), direction: 'socks' });
      const own = spec({ name: 'own-socks', remote_host: 'testhost', remote_port: '', local_port: await port(), direction: 'socks', shared: false });
      await sup.apply([plain, socks, own]);
      const [p, s, o] = await allRunning(sup, [plain.hash, socks.hash, own.hash]);
      expect(s!.pid).toBe(p!.pid);
      expect(o!.pid).not.toBe(p!.pid);
      expect(s!.remote_port).toBe('');
      for (const t of [socks, own]) {
        const out = await execa('curl', ['-sS', '--max-time', '5', '--socks5-hostname', `127.0.0.1:${t.local_port.port}`, `http://localhost:${webPort}/via-${t.name}`], { reject: false });
        expect(out.stderr).toBe('');
        expect(out.stdout).toBe(`hello /via-${t.name}`);
      }
      // Stopping the SOCKS tunnel closes its port and leaves the -L alone.
      await sup.stop(socks.hash);
      expect(await isFree(socks.local_port.port)).toBe(true);
      expect(sup.status(plain.hash)).toMatchObject({ status: 'RUNNING', pid: p!.pid });
      expect(await roundTrip(plain.local_port.port)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => web.close(() => resolve()));
    }
  });
});

describe('the connection is lost', () => {
  it('killed: every tunnel on it leaves RUNNING with the cause at once, then all come back together on a new master', async () => {
    const sup = await supervisor();
    const ts = await Promise.all(['k0', 'k1', 'k2', 'k3'].map((n) => tunnel(n)));
    const seen = new Map<string, string[]>();
    sup.subscribe((e) => seen.set(e.record.hash, [...(seen.get(e.record.hash) ?? []), e.record.status]));
    await sup.apply(ts);
    const before = await allRunning(sup, ts.map((t) => t.hash));
    const master = before[0]!.pid as number;
    const sessions = fx.server.sessionPids();
    // The sshd session of this supervisor's master: the newest one.
    process.kill(Math.max(...sessions), 'SIGKILL');
    const after = await waitFor('every tunnel RUNNING on a new master', () => {
      const recs = ts.map((t) => sup.status(t.hash)!);
      return recs.every((r) => r.status === 'RUNNING' && r.pid !== master) ? recs : undefined;
    });
    expect(new Set(after.map((r) => r.pid)).size).toBe(1);
    expect(after[0]!.pid).not.toBe(master);
    for (const t of ts) {
      const states = seen.get(t.hash) ?? [];
      // Out of RUNNING with the cause, then back.
      expect(states.slice(states.indexOf('RUNNING'))).toContain('RETRYING');
      expect(states[states.length - 1]).toBe('RUNNING');
      expect(await roundTrip(t.local_port.port)).toBe(true);
    }
    expect(after.every((r) => r.restarts === 1)).toBe(true);
    expect(alive(master)).toBe(false);
  });

  it('frozen (sshd session stopped): the master\'s keep-alives notice, every tunnel leaves RUNNING, and all come back', async () => {
    const sup = await supervisor();
    const opts = { ServerAliveInterval: '1', ServerAliveCountMax: '2' };
    const ts = await Promise.all(['f0', 'f1'].map((n) => tunnel(n, { ssh_options: opts })));
    await sup.apply(ts);
    const before = await allRunning(sup, ts.map((t) => t.hash));
    const session = Math.max(...fx.server.sessionPids());
    process.kill(session, 'SIGSTOP');
    const froze = Date.now();
    try {
      for (const t of ts) {
        const r = await waitState(sup, t.hash, 'RETRYING', 15_000);
        expect(r.last_error).toMatch(/not responding|connection lost|Timeout/i);
      }
      // ServerAliveInterval × (CountMax + 1), with room for a loaded machine.
      expect(Date.now() - froze).toBeLessThan(10_000);
    } finally {
      // Thaw and end it; gone already is fine (an error here would hide the one above).
      signalIfAlive(session, 'SIGCONT');
      signalIfAlive(session, 'SIGKILL');
    }
    const after = await allRunning(sup, ts.map((t) => t.hash));
    expect(after[0]!.pid).not.toBe(before[0]!.pid);
    for (const t of ts) expect(await roundTrip(t.local_port.port)).toBe(true);
  });
});

function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

describe('no master outlives its daemon', () => {
  it('shutdown ends the master and removes its socket', async () => {
    const stateDir = tempDir();
    const sup = await supervisor(stateDir);
    const a = await tunnel('a');
    await sup.apply([a]);
    const rec = await waitState(sup, a.hash, 'RUNNING');
    expect(readdirSync(join(stateDir, 'mux'))).toHaveLength(1);
    await sup.shutdown();
    expect(alive(rec.pid as number)).toBe(false);
    expect(readdirSync(join(stateDir, 'mux'))).toEqual([]);
  });

  it('a master left by a daemon that died (no shutdown) is ended by the next one on the state dir', async () => {
    const stateDir = tempDir();
    const first = await createSupervisor({ sshBin: 'ssh', sshConfigPath: fx.server.sshConfigPath, stateDir, mode: 'default' });
    const a = await tunnel('a');
    await first.apply([a]);
    const old = await waitState(first, a.hash, 'RUNNING');
    // `first` is not shut down: as after kill -9, its master is left running.
    const second = await supervisor(stateDir);
    expect(alive(old.pid as number)).toBe(false);
    // (In a real kill -9 the first daemon is gone; here its runners are ended before they retry.)
    await first.shutdown();
    await second.apply([a]);
    const again = await waitState(second, a.hash, 'RUNNING');
    expect(again.pid).not.toBe(old.pid);
    expect(await roundTrip(a.local_port.port)).toBe(true);
  });

  it('a stale file at the control socket\'s path (a master killed with -9) is removed: the new master shares', async () => {
    const stateDir = tempDir();
    const a = await tunnel('a');
    const b = await tunnel('b');
    const probe = await supervisor(stateDir);
    await probe.apply([a]);
    const id = (await waitState(probe, a.hash, 'RUNNING')).connection!.id;
    await probe.shutdown();
    const sup = await supervisor(stateDir);
    // Left after the supervisor prepared its folder, as if a master died just now.
    writeFileSync(join(stateDir, 'mux', id), '');
    await sup.apply([a, b]);
    const [ra, rb] = await allRunning(sup, [a.hash, b.hash]);
    expect(ra!.connection!.id).toBe(id);
    expect(rb!.pid).toBe(ra!.pid);
    expect(await roundTrip(a.local_port.port)).toBe(true);
    expect(await roundTrip(b.local_port.port)).toBe(true);
  });
});

describe('scale', () => {
  it('1000 tunnels to one host come up on one connection and carry data', async () => {
    const sup = await supervisor();
    const ports: number[] = [];
    while (ports.length < 1000) {
      const p = await port();
      ports.push(p);
    }
    const ts = ports.map((p, i) => spec({ name: `n${i}`, remote_host: 'testhost', remote_port: fx.echo.port, local_port: p, direction: 'remote_to_local' }));
    await sup.apply(ts);
    const recs = await allRunning(sup, ts.map((t) => t.hash), 60_000);
    expect(new Set(recs.map((r) => r.pid)).size).toBe(1);
    for (const i of [0, 499, 999]) expect(await roundTrip(ports[i]!)).toBe(true);
    await sup.stopAll();
    await waitFor('the master to end once no tunnel wants it', () => !alive(recs[0]!.pid as number));
    expect(await isFree(ports[999]!)).toBe(true);
  }, 90_000);
});

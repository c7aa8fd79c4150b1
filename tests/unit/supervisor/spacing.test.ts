// The supervisor's small parts: plan, stderr reading, state files.
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChildRegistry, recordedChildren, runsArgv } from '../../../src/supervisor/process/children.js';
import { DesiredStore } from '../../../src/supervisor/state/desired.js';
import { buildPlan, knownHostsList } from '../../../src/supervisor/plan/plan.js';
import { SpawnSpacer, spacingKey } from '../../../src/supervisor/spacing.js';
import { isEstablishedLine, keepInLog } from '../../../src/supervisor/process/ssh-output.js';
import { prepareStateDir, statePaths } from '../../../src/supervisor/state/state-files.js';
import { FALLBACK_HOST_INFO } from '../../../src/ssh-config/settings.js';
import { parseEndpoint } from '../../../src/tunnel/endpoint.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import { ManualClock } from './fakes.js';

const ep = (s: string) => {
  const r = parseEndpoint(s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

function spec(hash: string, over: Partial<TunnelSpec> = {}): TunnelSpec {
  return {
    hash,
    name: hash,
    remote_host: 'user@bastion',
    remote_port: ep('5432'),
    local_port: ep('15432'),
    direction: 'remote_to_local',
    interactive: false,
    ssh_options: {},
    written: {},
    line: 1,
    ...over,
  };
}

describe('plan', () => {
  const ctx = { sshBin: '/usr/bin/ssh', sshConfigPath: '/cfg', mode: 'default' as const, knownHostsPath: '/state/known_hosts', loginLogDir: '/state/logins', controlDir: null };
  const host = { ...FALLBACK_HOST_INFO, endpoint: { host: '10.0.0.1', port: 2222 }, knownHostsFiles: ['/home/u/.ssh/known_hosts', '/state/known_hosts'] };

  it('lists the state dir known_hosts first, then the host\'s own files, once each', () => {
    expect(knownHostsList('/state/known_hosts', host)).toEqual(['/state/known_hosts', '/home/u/.ssh/known_hosts']);
    const p = buildPlan(spec('a'), ctx, host);
    expect(p.args).toContain('UserKnownHostsFile=/state/known_hosts /home/u/.ssh/known_hosts');
  });

  it('probes our bind address for -L and names the remote bind for -R; start timeout is ConnectTimeout + 5 s', () => {
    const l = buildPlan(spec('a', { local_port: ep('127.0.0.2:7000') }), ctx, host);
    expect(l).toMatchObject({ file: '/usr/bin/ssh', flag: '-L', localBind: { host: '127.0.0.2', port: 7000 }, remoteBind: null, sshEndpoint: host.endpoint, spacingKey: 'bastion', startTimeoutMs: 15_000 });
    const r = buildPlan(spec('b', { direction: 'local_to_remote', remote_port: ep('0.0.0.0:8000'), ssh_options: { connecttimeout: '3' } }), ctx, host);
    expect(r).toMatchObject({ flag: '-R', localBind: null, remoteBind: '0.0.0.0', startTimeoutMs: 8_000 });
  });
});

describe('interactive plan', () => {
  const ctx = { sshBin: '/usr/bin/ssh', sshConfigPath: '/cfg', mode: 'default' as const, knownHostsPath: '/state/known_hosts', loginLogDir: '/state/logins', controlDir: null };
  const host = FALLBACK_HOST_INFO;

  it('runs without BatchMode, with its debug lines in its own file, and keeps every other safety option', () => {
    const p = buildPlan(spec('abcd', { interactive: true }), ctx, host);
    // Explicit: the daemon's -F file sets BatchMode yes for every host (and jump host).
    expect(p.args).toContain('BatchMode=no');
    expect(p.args).not.toContain('BatchMode=yes');
    expect(p.args.slice(p.args.indexOf('-E'), p.args.indexOf('-E') + 2)).toEqual(['-E', '/state/logins/abcd.log']);
    for (const o of ['ExitOnForwardFailure=yes', 'StrictHostKeyChecking=accept-new', 'ServerAliveInterval=5', 'ControlMaster=no', 'LogLevel=DEBUG1']) expect(p.args).toContain(o);
    expect(p.args.indexOf('-E')).toBeLessThan(p.args.indexOf('--'));
  });

  it('shares one login per host and option set: the master in a terminal, its debug file the connection\'s; shared: false keeps its own', () => {
    const withMux = { ...ctx, controlDir: '/state/mux' };
    const a = buildPlan(spec('aaaa', { interactive: true }), withMux, host);
    const b = buildPlan(spec('bbbb', { interactive: true, local_port: ep('15433') }), withMux, host);
    const conn = a.shared!.connection;
    expect(b.shared!.connection).toEqual(conn);
    expect(conn).toMatchObject({ interactive: true, controlPath: `/state/mux/${conn.id}` });
    expect(conn.args).toContain('BatchMode=no');
    expect(conn.args).toContain('ControlMaster=yes');
    expect(conn.args.slice(conn.args.indexOf('-E'), conn.args.indexOf('-E') + 2)).toEqual(['-E', `/state/logins/${conn.id}.log`]);
    expect(a.shared!.forward).toEqual({ flag: '-L', value: '127.0.0.1:15432:localhost:5432' });
    // The same host logged in by itself is another connection; so are other options.
    expect(buildPlan(spec('cccc'), withMux, host).shared!.connection).toMatchObject({ interactive: false });
    expect(buildPlan(spec('cccc'), withMux, host).shared!.connection.id).not.toBe(conn.id);
    expect(buildPlan(spec('dddd', { interactive: true, ssh_options: { Compression: 'yes' } }), withMux, host).shared!.connection.id).not.toBe(conn.id);
    expect(buildPlan(spec('eeee', { interactive: true, shared: false }), withMux, host).shared).toBeNull();
  });

  it('a tunnel that is not interactive keeps BatchMode and writes no debug file', () => {
    const p = buildPlan(spec('abcd'), ctx, host);
    expect(p.args).toContain('BatchMode=yes');
    expect(p.args).not.toContain('-E');
  });
});

describe('spacing', () => {
  it('keys by host, whoever logs in', () => {
    expect(spacingKey('alice@Bastion')).toBe('bastion');
    expect(spacingKey('bastion')).toBe('bastion');
  });

  it('books spawns 100 ms apart per host', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 100, 10);
    const never = new AbortController().signal;
    const t0 = clock.t;
    const times: Record<string, number[]> = { a: [], b: [] };
    for (const host of ['a', 'a', 'b', 'a']) void s.acquire(host, never).then(() => times[host]?.push(clock.t - t0));
    await clock.advance(1_000);
    expect(times).toEqual({ a: [0, 100, 200], b: [0] });
  });

  it('lets at most maxInFlight attempts per host wait for their login; a release hands the slot on', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 2);
    const never = new AbortController().signal;
    const got: Array<() => void> = [];
    for (let i = 0; i < 4; i++) void s.acquire('h', never).then((r) => r && got.push(r));
    await clock.advance(0);
    expect(got).toHaveLength(2);
    got[0]?.();
    got[0]?.();
    await clock.advance(0);
    expect(got).toHaveLength(3);
    got[1]?.();
    await clock.advance(0);
    expect(got).toHaveLength(4);
  });

  it('lets at most maxInFlightTotal logins wait on the whole machine, whatever the host; a release hands the place on', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 2, 3);
    const never = new AbortController().signal;
    const got: Array<[string, () => void]> = [];
    for (const host of ['a', 'b', 'c', 'd', 'a', 'e']) void s.acquire(host, never).then((r) => r && got.push([host, r]));
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c']);
    got[1]?.[1]();
    got[1]?.[1]();
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c', 'd']);
    got[0]?.[1]();
    got[2]?.[1]();
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c', 'd', 'a', 'e']);
  });

  it('a login waiting for its host holds no machine-wide place', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1, 2);
    const never = new AbortController().signal;
    const got: string[] = [];
    for (const host of ['a', 'a', 'a', 'b']) void s.acquire(host, never).then((r) => r && got.push(host));
    await clock.advance(0);
    expect(got).toEqual(['a', 'b']);
  });

  it('an aborted wait for a machine-wide place gives up both places', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1, 1);
    const first = await s.acquire('a', new AbortController().signal);
    const ctrl = new AbortController();
    const waiting = s.acquire('b', ctrl.signal);
    ctrl.abort();
    expect(await waiting).toBeNull();
    first?.();
    // b's host place was given back: b can log in again.
    expect(await s.acquire('b', new AbortController().signal)).not.toBeNull();
  });

  it('an aborted wait gives up its place', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1);
    const first = await s.acquire('h', new AbortController().signal);
    const ctrl = new AbortController();
    const waiting = s.acquire('h', ctrl.signal);
    ctrl.abort();
    expect(await waiting).toBeNull();
    first?.();
    expect(await s.acquire('h', new AbortController().signal)).not.toBeNull();
  });
});

describe('ssh output', () => {
  it('-L is established at the client loop (the bind lines come before the bind is tried)', () => {
    expect(isEstablishedLine('debug1: Local connections to 127.0.0.1:22088 forwarded to remote address localhost:22', '-L')).toBe(false);
    expect(isEstablishedLine('debug1: Local forwarding listening on 127.0.0.1 port 22088.', '-L')).toBe(false);
    expect(isEstablishedLine('debug1: Entering interactive session.', '-L')).toBe(true);
  });

  it('-R is established on the server\'s success answer', () => {
    expect(isEstablishedLine('debug1: Entering interactive session.', '-R')).toBe(false);
    expect(isEstablishedLine('debug1: remote forward success for: listen 22088, connect localhost:22', '-R')).toBe(true);
    expect(isEstablishedLine('debug1: remote forward failure for: listen 10.9.9.9:22088, connect localhost:22', '-R')).toBe(false);
  });

  it('keeps messages and milestones, drops debug noise', () => {
    expect(keepInLog('Host key verification failed.')).toBe(true);
    expect(keepInLog('debug1: Connecting to 127.0.0.1 [127.0.0.1] port 13955.')).toBe(true);
    expect(keepInLog('debug1: kex: algorithm: sntrup761x25519-sha512')).toBe(false);
    expect(keepInLog('   ')).toBe(false);
  });
});

describe('state files', () => {
  const dir = () => join(mkdtempSync(join(tmpdir(), 'tm-sup-unit-')), 'state');

  it('creates the state dir 0700 and a known_hosts 0600, keeping an existing one', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(statSync(paths.knownHosts).mode & 0o777).toBe(0o600);
    writeFileSync(paths.knownHosts, 'host key\n');
    prepareStateDir(paths);
    expect(readFileSync(paths.knownHosts, 'utf8')).toBe('host key\n');
  });

  it('desired states survive a reload of the file; a damaged file means none', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const store = DesiredStore.load(paths.desired);
    expect(store.get('a')).toBeUndefined();
    store.set(['a', 'b'], 'stopped');
    store.set(['b'], 'started');
    const again = DesiredStore.load(paths.desired);
    expect([again.get('a'), again.get('b')]).toEqual(['stopped', 'started']);
    writeFileSync(paths.desired, '{ half');
    expect(DesiredStore.load(paths.desired).get('a')).toBeUndefined();
  });

  it('forgets the desired states of tunnels no longer configured', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const store = DesiredStore.load(paths.desired);
    store.set(['a', 'b'], 'stopped');
    store.forget(['a', 'unknown']);
    expect(JSON.parse(readFileSync(paths.desired, 'utf8'))).toEqual({ tunnels: { b: 'stopped' } });
    expect(DesiredStore.load(paths.desired).get('a')).toBeUndefined();
  });

  it('records child pids with their argv; a pid only counts while it runs that argv', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const reg = new ChildRegistry(paths.children);
    reg.add(123, ['ssh', '-N']);
    reg.add(456, ['ssh', '-N', '-L']);
    reg.remove(123);
    expect(recordedChildren(paths.children)).toEqual([{ pid: 456, argv: ['ssh', '-N', '-L'] }]);
    expect(runsArgv(process.pid, process.argv.slice(0, 1))).toBe(false);
    const own = readFileSync(`/proc/${process.pid}/cmdline`, 'utf8').split('\0').filter((a, i, xs) => i < xs.length - 1 || a !== '');
    expect(runsArgv(process.pid, own)).toBe(true);
    expect(runsArgv(2 ** 22 + 1, ['ssh'])).toBe(false);
  });

  it('keeps the children file a log of small appends, compacted once it holds twice the live entries, and replays it', () => {
    const paths = statePaths(dir());
    prepareStateDir(paths);
    const reg = new ChildRegistry(paths.children);
    reg.reset();
    const argv = (pid: number) => ['ssh', '-N', '-L', `${pid}:localhost:22`];
    for (let pid = 1000; pid < 1300; pid++) reg.add(pid, argv(pid));
    // One line per start, nothing rewritten: the file grows by appends.
    expect(readFileSync(paths.children, 'utf8').trim().split('\n')).toHaveLength(300);
    for (let pid = 1000; pid < 1250; pid++) reg.remove(pid);
    const lines = readFileSync(paths.children, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(Math.max(64, 2 * 50));
    const live = Array.from({ length: 50 }, (_, i) => ({ pid: 1250 + i, argv: argv(1250 + i) }));
    expect(recordedChildren(paths.children)).toEqual(live);
    // A line cut short by a crash is skipped; the earlier format (one JSON array) still reads.
    appendFileSync(paths.children, '{"pid":99');
    expect(recordedChildren(paths.children)).toEqual(live);
    writeFileSync(paths.children, `${JSON.stringify([{ pid: 7, argv: ['ssh'] }])}\n`);
    expect(recordedChildren(paths.children)).toEqual([{ pid: 7, argv: ['ssh'] }]);
  });
});

// The runner's state machine with a scripted ssh, a scripted probe and virtual time.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/supervisor/backoff.js';
import type { ProbeTarget } from '../../../src/supervisor/health/probe.js';
import { Runner, type RunnerDeps, type TunnelPlan } from '../../../src/supervisor/tunnel/tunnel-runner.js';
import { FRESH_PROMPT_MS } from '../../../src/supervisor/effects/retry-wait.js';
import { ConnectionPool } from '../../../src/supervisor/connection/connection-pool.js';
import { ProcessSweep } from '../../../src/supervisor/process/process-sweep.js';
import { SpawnSpacer } from '../../../src/supervisor/spacing.js';
import type { LoginOutcome, TerminalSink } from '../../../src/supervisor/types.js';
import { parseEndpoint } from '../../../src/tunnel/endpoint.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import type { StatusRecord } from '../../../src/tunnel/status.js';
import { ESTABLISHED_L, ESTABLISHED_R, fakeSpawn, ManualClock, type FakeChild } from './fakes.js';

const endpoint = (s: string) => {
  const r = parseEndpoint(s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

function plan(over: Partial<TunnelPlan> = {}, name = 't'): TunnelPlan {
  const spec: TunnelSpec = {
    hash: `${name}-hash`,
    name,
    remote_host: 'user@bastion',
    remote_port: endpoint('5432'),
    local_port: endpoint('15432'),
    direction: 'remote_to_local',
    interactive: false,
    ssh_options: {},
    written: {},
    line: 1,
  };
  return {
    spec,
    file: 'ssh',
    args: ['-N', '-L', '127.0.0.1:15432:localhost:5432', '--', 'user@bastion'],
    flag: '-L',
    remoteBind: null,
    sshEndpoint: { host: '10.0.0.1', port: 22 },
    localBind: { host: '127.0.0.1', port: 15432 },
    spacingKey: 'bastion',
    startTimeoutMs: 15_000,
    checkTarget: { host: '127.0.0.1', port: 15432 },
    shared: null,
    ...over,
  };
}

interface Harness {
  clock: ManualClock;
  children: FakeChild[];
  records: StatusRecord[];
  probes: ProbeTarget[];
  probeAnswer: { value: boolean };
  registry: Map<number, string[]>;
  deps: RunnerDeps;
  runner(p?: TunnelPlan): Runner;
}

function harness(spacer?: SpawnSpacer, sharedClock?: ManualClock): Harness {
  const clock = sharedClock ?? new ManualClock();
  const { spawn, children } = fakeSpawn(clock);
  const records: StatusRecord[] = [];
  const probes: ProbeTarget[] = [];
  const probeAnswer = { value: false };
  const registry = new Map<number, string[]>();
  const deps: RunnerDeps = {
    clock,
    spawn,
    // Interactive tunnels get their own spawner (ptyHarness); one here would hide a mix-up.
    spawnPty: () => {
      throw new Error('a batch tunnel spawned ssh in a terminal');
    },
    probe: async (target) => {
      probes.push(target);
      return probeAnswer.value;
    },
    spacer: spacer ?? new SpawnSpacer(clock, 100),
    processes: new ProcessSweep(clock),
    registry: { add: (pid, argv) => registry.set(pid, argv), remove: (pid) => registry.delete(pid) },
    // Every plan here has an ssh of its own; shared connections: connection-runner.test.ts.
    connections: new ConnectionPool({
      clock,
      spawn,
      spawnPty: () => {
        throw new Error('no shared connection in these tests');
      },
      control: () => Promise.reject(new Error('no shared connection in these tests')),
      probe: async () => false,
      spacer: spacer ?? new SpawnSpacer(clock, 100),
      registry: { add: () => {}, remove: () => {} },
      rules: { policy: DEFAULT_BACKOFF, unprobedCapMs: 4_000, probeIntervalMs: 250, startTimeoutMs: 15_000 },
      graceMs: 3_000,
      processState: () => null,
      log: () => {},
    }),
    policy: DEFAULT_BACKOFF,
    unprobedCapMs: 4_000,
    probeIntervalMs: 250,
    graceMs: 3_000,
    logLines: 200,
    onChange: (r) => records.push(r),
    log: () => {},
  };
  return { clock, children, records, probes, probeAnswer, registry, deps, runner: (p = plan()) => new Runner(p, deps) };
}

const last = <T>(xs: T[]): T => {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new Error('empty');
  return x;
};

/** Advances virtual time in small steps until the n-th child was spawned. */
async function untilSpawn(h: Harness, n: number): Promise<void> {
  for (let i = 0; i < 1_000 && h.children.length < n; i++) await h.clock.advance(50);
  expect(h.children).toHaveLength(n);
}

async function startRunning(h: Harness, r: Runner): Promise<FakeChild> {
  r.start({ restart: false });
  await h.clock.advance(0);
  const child = last(h.children);
  child.say(ESTABLISHED_L);
  expect(r.status().status).toBe('RUNNING');
  return child;
}

describe('starting', () => {
  it('STARTING with the child spawned from the plan argv, RUNNING only on the established line', async () => {
    const h = harness();
    const r = h.runner();
    expect(r.status()).toMatchObject({ status: 'STOPPED', pid: null, restarts: 0, last_exit: null, last_error: null, next_retry_at: null });
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(h.children).toHaveLength(1);
    const child = last(h.children);
    expect(child.args).toEqual(plan().args);
    expect(h.registry.get(child.pid as number)).toEqual(['ssh', ...plan().args]);
    expect(r.status()).toMatchObject({ status: 'STARTING', pid: child.pid });
    child.say('debug1: Local connections to 127.0.0.1:15432 forwarded to remote address localhost:5432');
    child.say('debug1: Local forwarding listening on 127.0.0.1 port 15432.');
    expect(r.status().status).toBe('STARTING');
    const startingSince = r.status().since;
    await h.clock.advance(200);
    child.say(ESTABLISHED_L);
    expect(r.status()).toMatchObject({ status: 'RUNNING', pid: child.pid });
    expect(r.status().since).not.toBe(startingSince);
    expect(h.records.map((x) => x.status)).toEqual(['STARTING', 'STARTING', 'RUNNING']);
  });

  it('-R is RUNNING on the server\'s positive answer, not on the client loop', async () => {
    const h = harness();
    const r = h.runner(plan({ flag: '-R' }));
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say(ESTABLISHED_L);
    expect(r.status().status).toBe('STARTING');
    last(h.children).say(ESTABLISHED_R);
    expect(r.status().status).toBe('RUNNING');
  });

  it('spaces spawns to one host by 100 ms, not spawns to different hosts', async () => {
    const clock = new ManualClock();
    const spacer = new SpawnSpacer(clock, 100);
    const h = harness(spacer, clock);
    const runners = [h.runner(plan({}, 'a')), h.runner(plan({}, 'b')), h.runner(plan({}, 'c')), h.runner(plan({ spacingKey: 'other' }, 'd'))];
    for (const r of runners) r.start({ restart: false });
    await clock.advance(0);
    expect(h.children.map((c) => c.at - clock.t)).toEqual([0, 0]);
    await clock.advance(250);
    const t0 = h.children[0]?.at ?? 0;
    expect(h.children.map((c) => c.at - t0).sort((x, y) => x - y)).toEqual([0, 0, 100, 200]);
  });

  it('a start that takes too long is ended (TERM) and retried', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    const child = last(h.children);
    child.honoursTerm = false;
    await h.clock.advance(14_999);
    expect(child.signals).toEqual([]);
    await h.clock.advance(1);
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT']);
    // Too late: the attempt is being ended.
    child.say(ESTABLISHED_L);
    expect(r.status().status).toBe('STARTING');
    await h.clock.advance(3_000);
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT', 'SIGKILL']);
    expect(r.status()).toMatchObject({ status: 'RETRYING', last_error: 'ssh did not report the forward established within 15 s' });
    expect(h.registry.size).toBe(0);
  });

  it('a stop while waiting for the host slot spawns nothing', async () => {
    const clock = new ManualClock();
    const spacer = new SpawnSpacer(clock, 100);
    const h = harness(spacer, clock);
    const a = h.runner(plan({}, 'a'));
    const b = h.runner(plan({}, 'b'));
    a.start({ restart: false });
    b.start({ restart: false });
    expect(b.status()).toMatchObject({ status: 'STARTING', pid: null });
    await b.stop();
    await clock.advance(1_000);
    expect(h.children).toHaveLength(1);
    expect(b.status().status).toBe('STOPPED');
  });

  it('holds back a fifth login to one host until an earlier one has authenticated', async () => {
    const clock = new ManualClock();
    const h = harness(new SpawnSpacer(clock, 100, 4), clock);
    const runners = Array.from({ length: 6 }, (_, i) => h.runner(plan({}, `r${i}`)));
    for (const r of runners) r.start({ restart: false });
    await clock.advance(2_000);
    expect(h.children).toHaveLength(4);
    h.children[0]?.say('Authenticated to 10.0.0.1 ([10.0.0.1]:22) using "publickey".');
    await clock.advance(200);
    expect(h.children).toHaveLength(5);
    h.children[1]?.exit(255);
    await clock.advance(200);
    expect(h.children).toHaveLength(6);
  });
});

describe('failures', () => {
  it('an authentication failure is FAILED and never retried', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say('debug1: No more authentication methods to try.', 'user@bastion: Permission denied (publickey).');
    last(h.children).exit(255);
    await h.clock.advance(0);
    expect(r.status()).toMatchObject({ status: 'FAILED', pid: null, last_error: 'authentication failed: user@bastion: Permission denied (publickey).', next_retry_at: null });
    expect(r.status().last_exit).toMatchObject({ code: 255, signal: null });
    await h.clock.advance(600_000);
    expect(h.children).toHaveLength(1);
    expect(h.probes).toHaveLength(0);
  });

  it('a FAILED tunnel starts again on an explicit start', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say('user@bastion: Permission denied (publickey).');
    last(h.children).exit(255);
    await h.clock.advance(0);
    r.start({ restart: false });
    expect(r.status().status).toBe('STARTING');
    // Its spawn slot for the host comes 100 ms after the previous spawn.
    await h.clock.advance(100);
    expect(h.children).toHaveLength(2);
  });

  it('a refused connection probes the ssh port every 250 ms and logs in once it accepts, at most once a second', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    const spawnedAt = h.clock.t;
    last(h.children).say('ssh: connect to host 10.0.0.1 port 22: Connection refused');
    last(h.children).exit(255);
    await h.clock.advance(0);
    expect(r.status()).toMatchObject({ status: 'RETRYING', last_error: 'connection refused: ssh: connect to host 10.0.0.1 port 22: Connection refused' });
    expect(r.status().next_retry_at).toBe(new Date(spawnedAt + 1_000).toISOString());
    expect(h.probes[0]).toEqual({ kind: 'ssh-port', host: '10.0.0.1', port: 22 });
    // Several failures in a row: the backoff grows to seconds.
    for (let i = 0; i < 4; i++) {
      await untilSpawn(h, h.children.length + 1);
      last(h.children).say('ssh: connect to host 10.0.0.1 port 22: Connection refused');
      last(h.children).exit(255);
      await h.clock.advance(0);
    }
    const failedAt = h.clock.t;
    const next = Date.parse(r.status().next_retry_at as string);
    expect(next - failedAt).toBeGreaterThanOrEqual(4_000);
    const spawns = h.children.length;
    const probesBefore = h.probes.length;
    await h.clock.advance(1_000);
    expect(h.probes.length - probesBefore).toBeGreaterThanOrEqual(4);
    expect(h.children).toHaveLength(spawns);
    // The server is back: the next probe sees it and ssh starts at once.
    h.probeAnswer.value = true;
    await h.clock.advance(250);
    expect(h.children).toHaveLength(spawns + 1);
    expect(h.clock.t - failedAt).toBeLessThan(1_500);
    expect(r.status()).toMatchObject({ status: 'STARTING', restarts: 5 });
  });

  it('a busy local port probes by binding it', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say('bind [127.0.0.1]:15432: Address already in use', 'Could not request local forwarding.');
    last(h.children).exit(255);
    await h.clock.advance(0);
    expect(r.status().status).toBe('RETRYING');
    expect(h.probes[0]).toEqual({ kind: 'local-bind', host: '127.0.0.1', port: 15432 });
  });

  it('a fault no probe can watch is retried at least every 4 s', async () => {
    const h = harness();
    const r = h.runner(plan({ flag: '-R', sshEndpoint: null }));
    h.clock.rand = 0.999999;
    r.start({ restart: false });
    for (let i = 0; i < 8; i++) {
      await untilSpawn(h, i + 1);
      last(h.children).say('Error: remote port forwarding failed for listen port 5432');
      last(h.children).exit(255);
      await h.clock.advance(0);
    }
    const gap = Date.parse(r.status().next_retry_at as string) - h.clock.t;
    expect(gap).toBe(4_000);
    expect(h.probes).toHaveLength(0);
  });
});

describe('running', () => {
  it('an ssh that dies after RUNNING is restarted within a second and counted', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    await h.clock.advance(60_000);
    child.exit(null, 'SIGKILL');
    await h.clock.advance(0);
    const diedAt = h.clock.t;
    expect(r.status()).toMatchObject({ status: 'RETRYING', last_exit: { code: null, signal: 'SIGKILL' }, last_error: 'ssh was ended by SIGKILL' });
    await h.clock.advance(1_000);
    expect(h.children).toHaveLength(2);
    expect(last(h.children).at - diedAt).toBeLessThanOrEqual(500);
    last(h.children).say(ESTABLISHED_L);
    expect(r.status()).toMatchObject({ status: 'RUNNING', restarts: 1, last_error: null, pid: last(h.children).pid });
  });

  it('stop() sends TERM, does not count the exit as a failure, and resolves once the child is gone', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    await r.stop();
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT']);
    expect(r.status()).toMatchObject({ status: 'STOPPED', pid: null, last_error: null, last_exit: { code: 0, signal: null } });
    await h.clock.advance(60_000);
    expect(h.children).toHaveLength(1);
    expect(h.registry.size).toBe(0);
  });

  it('stop() escalates to KILL after the grace period when TERM is ignored', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    child.honoursTerm = false;
    let stopped = false;
    void r.stop().then(() => (stopped = true));
    await h.clock.advance(2_999);
    expect(stopped).toBe(false);
    expect(r.status()).toMatchObject({ status: 'STOPPED', pid: child.pid });
    await h.clock.advance(1);
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT', 'SIGKILL']);
    expect(stopped).toBe(true);
    expect(r.status().pid).toBeNull();
  });

  it('stop() while RETRYING cancels the retry', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say('ssh: connect to host 10.0.0.1 port 22: Connection refused');
    last(h.children).exit(255);
    await h.clock.advance(0);
    await r.stop();
    expect(r.status()).toMatchObject({ status: 'STOPPED', next_retry_at: null });
    h.probeAnswer.value = true;
    await h.clock.advance(60_000);
    expect(h.children).toHaveLength(1);
    expect(h.clock.pending()).toBe(0);
  });

  it('start() while RETRYING tries at once', async () => {
    const h = harness();
    const r = h.runner(plan({ sshEndpoint: null }));
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).exit(255);
    await h.clock.advance(5_000);
    last(h.children).exit(255);
    await h.clock.advance(0);
    expect(r.status().status).toBe('RETRYING');
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(h.children).toHaveLength(3);
    expect(r.status().status).toBe('STARTING');
  });

  it('keeps ssh\'s useful lines in the log, not its debug noise, across a stop', async () => {
    const h = harness();
    const r = h.runner();
    r.start({ restart: false });
    await h.clock.advance(0);
    const child = last(h.children);
    child.say('debug1: Connecting to 10.0.0.1 [10.0.0.1] port 22.');
    for (let i = 0; i < 500; i++) child.say(`debug1: channel ${i}: new direct-tcpip`);
    child.say("Warning: Permanently added '10.0.0.1' (ED25519) to the list of known hosts.");
    child.say(ESTABLISHED_L);
    await r.stop();
    const logs = r.logs();
    expect(logs.some((l) => l.includes('new direct-tcpip'))).toBe(false);
    expect(logs.filter((l) => !l.startsWith('[tunnel-manager')).slice(0, 3)).toEqual([
      'debug1: Connecting to 10.0.0.1 [10.0.0.1] port 22.',
      "Warning: Permanently added '10.0.0.1' (ED25519) to the list of known hosts.",
      ESTABLISHED_L,
    ]);
    expect(last(logs)).toMatch(/ssh stopped \(code 0\)/);
  });

  it('a binary that cannot be run is FAILED', async () => {
    const h = harness();
    const r = new Runner(plan(), {
      ...h.deps,
      spawn: () => ({ pid: null, exited: Promise.resolve({ code: null, signal: null, spawnError: 'spawn ssh ENOENT' }), kill: () => {} }),
    });
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(r.status()).toMatchObject({ status: 'FAILED', last_error: 'could not run ssh: spawn ssh ENOENT' });
  });
});

describe('stop and start while stopping', () => {
  it('stop → start → stop ends STOPPED with no child, the start only pending while the first child ends', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    child.honoursTerm = false;
    const first = r.stop();
    r.start({ restart: false });
    const second = r.stop();
    await h.clock.advance(3_000);
    await Promise.all([first, second]);
    await h.clock.advance(60_000);
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT', 'SIGKILL']);
    expect(h.children).toHaveLength(1);
    expect(r.status()).toMatchObject({ status: 'STOPPED', pid: null });
    expect(h.registry.size).toBe(0);
  });

  it('a start while stopping starts a fresh ssh once the old one is gone, never two at once', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    child.honoursTerm = false;
    const stopped = r.stop();
    r.start({ restart: false });
    await h.clock.advance(1_000);
    expect(h.children).toHaveLength(1);
    await h.clock.advance(2_000);
    await stopped;
    await h.clock.advance(200);
    expect(h.children).toHaveLength(2);
    expect(child.gone).toBe(true);
    expect(r.status()).toMatchObject({ status: 'STARTING', pid: last(h.children).pid });
  });

  it('announces STOPPED once per stop, when the child is gone', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    child.honoursTerm = false;
    const before = h.records.length;
    const stopped = r.stop();
    await h.clock.advance(1_000);
    expect(h.records.slice(before)).toEqual([]);
    await h.clock.advance(2_000);
    await stopped;
    expect(h.records.slice(before).map((x) => [x.status, x.pid])).toEqual([['STOPPED', null]]);
  });
});

describe('restart', () => {
  it('replaces a running ssh without showing STOPPED, and counts it', async () => {
    const h = harness();
    const r = h.runner();
    const child = await startRunning(h, r);
    const before = h.records.length;
    void r.restart();
    await h.clock.advance(200);
    expect(child.signals).toEqual(['SIGTERM', 'SIGCONT']);
    expect(h.children).toHaveLength(2);
    last(h.children).say(ESTABLISHED_L);
    expect(r.status()).toMatchObject({ status: 'RUNNING', restarts: 1, pid: last(h.children).pid });
    expect(h.records.slice(before).map((x) => x.status)).not.toContain('STOPPED');
  });

  it('out of STOPPED is a start', async () => {
    const h = harness();
    const r = h.runner();
    void r.restart();
    await h.clock.advance(0);
    expect(h.children).toHaveLength(1);
    expect(r.status()).toMatchObject({ status: 'STARTING', restarts: 0 });
  });
});

describe('interactive tunnels', () => {
  const interactivePlan = () => {
    const p = plan({}, 'i');
    return { ...p, spec: { ...p.spec, interactive: true } };
  };

  function ptyHarness() {
    const h = harness();
    const pty = fakeSpawn(h.clock);
    const r = new Runner(interactivePlan(), { ...h.deps, spawnPty: pty.spawn });
    return { h, r, ptys: pty.children };
  }

  it('a start spawns ssh in a terminal and waits for a person: AUTH_REQUIRED, no start timeout, then RUNNING', async () => {
    const { h, r, ptys } = ptyHarness();
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(h.children).toHaveLength(0);
    expect(ptys).toHaveLength(1);
    expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: last(ptys).pid });
    await h.clock.advance(600_000);
    expect(last(ptys).signals).toEqual([]);
    last(ptys).say(ESTABLISHED_L);
    expect(r.status()).toMatchObject({ status: 'RUNNING', pid: last(ptys).pid });
  });

  it('a lost connection asks for one fresh login, and an ssh that ends before a login waits for a person: no retry loop', async () => {
    const { h, r, ptys } = ptyHarness();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(ptys).say(ESTABLISHED_L);
    last(ptys).say('Connection to bastion closed by remote host.');
    last(ptys).exit(255);
    await h.clock.advance(0);
    expect(ptys).toHaveLength(2);
    expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: last(ptys).pid, restarts: 1 });
    last(ptys).say('ssh: connect to host 10.0.0.1 port 22: Connection refused');
    last(ptys).exit(255);
    await h.clock.advance(600_000);
    expect(ptys).toHaveLength(2);
    expect(h.probes).toHaveLength(0);
    expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: null, last_error: 'connection refused: ssh: connect to host 10.0.0.1 port 22: Connection refused' });
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(ptys).toHaveLength(3);
    await r.stop();
    expect(r.status()).toMatchObject({ status: 'STOPPED', pid: null });
  });

  it('a refused login is FAILED, as SPEC §5 has it, and an explicit start asks again', async () => {
    const { h, r, ptys } = ptyHarness();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(ptys).say('user@bastion: Permission denied (keyboard-interactive).');
    last(ptys).exit(255);
    await h.clock.advance(600_000);
    expect(ptys).toHaveLength(1);
    expect(r.status()).toMatchObject({ status: 'FAILED', last_error: 'authentication failed: user@bastion: Permission denied (keyboard-interactive).' });
    r.start({ restart: false });
    await h.clock.advance(0);
    expect(ptys).toHaveLength(2);
    expect(r.status().status).toBe('AUTH_REQUIRED');
  });
});

describe('ssh output', () => {
  it('every line goes to the line watcher, debug noise included', async () => {
    const h = harness();
    const seen: Array<[string, string]> = [];
    const r = new Runner(plan(), { ...h.deps, onLine: (hash, line) => seen.push([hash, line]) });
    r.start({ restart: false });
    await h.clock.advance(0);
    last(h.children).say('debug1: channel 3: new direct-tcpip', 'channel 3: open failed: connect failed: Connection refused');
    expect(seen).toEqual([
      ['t-hash', 'debug1: channel 3: new direct-tcpip'],
      ['t-hash', 'channel 3: open failed: connect failed: Connection refused'],
    ]);
  });
});

describe('a person\'s terminal on an interactive login', () => {
  function loginHarness() {
    const h = harness();
    const pty = fakeSpawn(h.clock);
    const p = plan({}, 'i');
    const r = new Runner({ ...p, spec: { ...p.spec, interactive: true } }, { ...h.deps, spawnPty: pty.spawn });
    return { h, r, ptys: pty.children };
  }
  function sink() {
    const out: string[] = [];
    const ends: LoginOutcome[] = [];
    return { out, ends, sink: { output: (t: string) => out.push(t), end: (o: LoginOutcome) => ends.push(o) } satisfies TerminalSink };
  }

  it('attaching starts a stopped tunnel, shows the prompt, passes keys, and ends the session once RUNNING', async () => {
    const { h, r, ptys } = loginHarness();
    const s = sink();
    const a = r.attach(s.sink);
    if (!a.ok) throw new Error(a.error.message);
    await h.clock.advance(0);
    expect(r.status().status).toBe('AUTH_REQUIRED');
    const term = last(ptys).terminal;
    term.show('Verification code: ');
    expect(s.out).toEqual(['Verification code: ']);
    a.value.resize(120, 40);
    a.value.input('123456\r');
    expect(term.typed).toEqual(['123456\r']);
    expect(term.sizes).toEqual([{ cols: 120, rows: 40 }]);
    last(ptys).say(ESTABLISHED_L);
    expect(s.ends).toEqual([{ status: 'RUNNING', message: null }]);
    // The code typed never reached the tunnel's log.
    expect(r.logs().join('\n')).not.toContain('123456');
    expect(r.attach(sink().sink)).toMatchObject({ ok: false, error: { reason: 'running' } });
  });

  it('one terminal at a time; a detached one lets the next in, which sees the prompt again', async () => {
    const { h, r, ptys } = loginHarness();
    r.start({ restart: false });
    await h.clock.advance(0);
    last(ptys).terminal.show('Verification code: ');
    const first = r.attach(sink().sink);
    expect(r.attach(sink().sink)).toMatchObject({ ok: false, error: { reason: 'busy' } });
    if (!first.ok) throw new Error(first.error.message);
    first.value.detach();
    first.value.input('ignored after detach');
    expect(last(ptys).terminal.typed).toEqual([]);
    const second = sink();
    expect(r.attach(second.sink).ok).toBe(true);
    expect(second.out).toEqual(['Verification code: ']);
    expect(ptys).toHaveLength(1);
  });

  it('a prompt older than a minute is replaced by a fresh ssh while the person stays attached', async () => {
    const { h, r, ptys } = loginHarness();
    r.start({ restart: false });
    await h.clock.advance(0);
    const old = last(ptys);
    await h.clock.advance(FRESH_PROMPT_MS);
    const s = sink();
    expect(r.attach(s.sink).ok).toBe(true);
    await h.clock.advance(0);
    expect(old.signals).toContain('SIGTERM');
    expect(old.gone).toBe(true);
    expect(ptys).toHaveLength(2);
    expect(r.status()).toMatchObject({ status: 'AUTH_REQUIRED', pid: last(ptys).pid });
    last(ptys).terminal.show('Verification code: ');
    expect(s.out).toEqual(['Verification code: ']);
    expect(s.ends).toEqual([]);
  });

  it('a refused login ends the session as FAILED with the reason; a stop ends it as STOPPED', async () => {
    const { h, r, ptys } = loginHarness();
    const s = sink();
    r.attach(s.sink);
    await h.clock.advance(0);
    last(ptys).say('user@bastion: Permission denied (keyboard-interactive).');
    last(ptys).exit(255);
    await h.clock.advance(0);
    expect(s.ends).toEqual([{ status: 'FAILED', message: 'authentication failed: user@bastion: Permission denied (keyboard-interactive).' }]);
    const t = sink();
    r.attach(t.sink);
    await h.clock.advance(0);
    await r.stop();
    expect(t.ends).toEqual([{ status: 'STOPPED', message: 'the tunnel was stopped' }]);
  });
});

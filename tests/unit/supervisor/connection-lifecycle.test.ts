// A shared connection's lifecycle (SPEC §14), pure: every phase × every event as a
// table of the phase that follows and the effects asked for, then the stories that
// matter (lost and back, a fatal login, unwanted while connecting, stale tokens).
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/supervisor/backoff.js';
import { classifyExit } from '../../../src/supervisor/process/ssh-exit-classify.js';
import { nextConnection } from '../../../src/supervisor/connection/connection-lifecycle.js';
import {
  connectionPid,
  connectionState,
  forwardVerdict,
  initialConnection,
  type Connection,
  type ConnectionEvent,
  type ConnectionPhase,
  type ConnectionRules,
} from '../../../src/supervisor/connection/connection-phase.js';

const T = Date.UTC(2030, 0, 1);
const fail = (line: string) => classifyExit({ code: 255, signal: null, lines: [line], flag: '-L', remoteBind: null });
const refused = fail('ssh: connect to host 10.0.0.1 port 22: Connection refused');
const lost = fail('Connection closed by 10.0.0.1 port 22');
const auth = fail('user@bastion: Permission denied (publickey).');
const target = { kind: 'ssh-port' as const, host: '10.0.0.1', port: 22 };
const RULES: ConnectionRules = { policy: DEFAULT_BACKOFF, unprobedCapMs: 4_000, probeIntervalMs: 250, startTimeoutMs: 15_000 };
const world = (now = T) => ({ now, random: () => 0.5 });

const PHASES: Record<string, ConnectionPhase> = {
  idle: { id: 'idle' },
  'connecting(slot)': { id: 'connecting', attempt: 5, pid: null, ending: null },
  connecting: { id: 'connecting', attempt: 5, pid: 100, ending: null },
  up: { id: 'up', attempt: 5, pid: 100, since: T - 60_000, ending: null },
  backoff: { id: 'backoff', wait: 5, until: T + 4_000, failure: refused, probe: target },
  stopping: { id: 'stopping', attempt: 5, pid: 100, reconnect: false },
  'stopping(reconnect)': { id: 'stopping', attempt: 5, pid: 100, reconnect: true },
};

const EVENTS: Record<string, ConnectionEvent> = {
  wanted: { type: 'wanted', now: false },
  'wanted(now)': { type: 'wanted', now: true },
  unwanted: { type: 'unwanted' },
  spawned: { type: 'spawned', attempt: 5, pid: 100 },
  ready: { type: 'ready', attempt: 5 },
  'start-timeout': { type: 'start-timeout', attempt: 5 },
  unresponsive: { type: 'unresponsive', attempt: 5 },
  'exited(refused)': { type: 'exited', attempt: 5, exit: { code: 255, signal: null }, failure: refused, probe: target },
  'exited(lost)': { type: 'exited', attempt: 5, exit: { code: 255, signal: null }, failure: lost, probe: null },
  'exited(auth)': { type: 'exited', attempt: 5, exit: { code: 255, signal: null }, failure: auth, probe: null },
  'retry-due': { type: 'retry-due', wait: 5 },
  'probe(down)': { type: 'probe-result', wait: 5, ok: false },
  'probe(up)': { type: 'probe-result', wait: 5, ok: true },
  login: { type: 'login' },
};

const conn = (phase: ConnectionPhase, interactive = false): Connection => ({ ...initialConnection(T - 120_000, interactive), phase, seq: 5, lastSpawnAt: T - 30_000 });

/** `phase after` and the effect types, per phase and event ('·' = unchanged, no effects). */
const TABLE: Record<string, Record<string, string>> = {
  idle: {
    wanted: 'connecting: spawn, announce',
    'wanted(now)': 'connecting: spawn, announce',
  },
  'connecting(slot)': {
    unwanted: 'idle: cancel, announce',
    spawned: 'connecting: timer, announce',
    // ssh could not be run at all: no pid, and the cause is the exit's.
    'exited(refused)': 'backoff: cancel, note, lost, timer, probe, announce',
    'exited(lost)': 'backoff: cancel, note, lost, timer, announce',
    'exited(auth)': 'idle: cancel, note, lost, announce',
  },
  connecting: {
    unwanted: 'stopping: cancel, terminate, announce',
    ready: 'up: cancel, opened, announce',
    'start-timeout': 'connecting: cancel, terminate',
    'exited(refused)': 'backoff: cancel, note, lost, timer, probe, announce',
    'exited(lost)': 'backoff: cancel, note, lost, timer, announce',
    'exited(auth)': 'idle: cancel, note, lost, announce',
  },
  up: {
    unwanted: 'stopping: cancel, terminate, announce',
    unresponsive: 'up: terminate',
    'exited(refused)': 'backoff: cancel, note, lost, timer, probe, announce',
    'exited(lost)': 'backoff: cancel, note, lost, timer, announce',
    'exited(auth)': 'idle: cancel, note, lost, announce',
  },
  backoff: {
    'wanted(now)': 'connecting: cancel, spawn, announce',
    unwanted: 'idle: cancel, announce',
    'retry-due': 'connecting: cancel, spawn, announce',
    'probe(down)': 'backoff: probe',
    'probe(up)': 'connecting: cancel, spawn, announce',
  },
  stopping: {
    wanted: 'stopping',
    'wanted(now)': 'stopping',
    'exited(refused)': 'idle: note, lost, announce',
    'exited(lost)': 'idle: note, lost, announce',
    'exited(auth)': 'idle: note, lost, announce',
  },
  'stopping(reconnect)': {
    unwanted: 'stopping',
    'exited(refused)': 'connecting: note, spawn, announce',
    'exited(lost)': 'connecting: note, spawn, announce',
    'exited(auth)': 'connecting: note, spawn, announce',
  },
};

/**
 * Where an interactive connection (a person's login, SPEC §13) differs: no start
 * timeout, no backoff; lost once up, one fresh login; ended before one, it rests.
 */
const INTERACTIVE: Record<string, Record<string, string>> = {
  'connecting(slot)': {
    spawned: 'connecting: announce',
    'exited(refused)': 'idle: cancel, note, lost, announce',
    'exited(lost)': 'idle: cancel, note, lost, announce',
  },
  connecting: {
    'exited(refused)': 'idle: cancel, note, lost, announce',
    'exited(lost)': 'idle: cancel, note, lost, announce',
  },
  up: {
    'exited(refused)': 'connecting: cancel, note, lost, spawn, announce',
    'exited(lost)': 'connecting: cancel, note, lost, spawn, announce',
  },
};

describe('connection lifecycle: every phase × every event', () => {
  for (const [phaseName, phase] of Object.entries(PHASES)) {
    for (const [eventName, ev] of Object.entries(EVENTS)) {
      const expected = TABLE[phaseName]?.[eventName] ?? '·';
      it(`${phaseName} + ${eventName} → ${expected}`, () => {
        const before = conn(phase);
        const step = nextConnection(before, ev, RULES, world());
        const got = step.connection === before && step.effects.length === 0 ? '·' : `${step.connection.phase.id}${step.effects.length > 0 ? `: ${step.effects.map((e) => e.type).join(', ')}` : ''}`;
        expect(got).toBe(expected);
      });
    }
  }

  for (const [phaseName, phase] of Object.entries(PHASES)) {
    for (const [eventName, ev] of Object.entries(EVENTS)) {
      const expected = INTERACTIVE[phaseName]?.[eventName] ?? TABLE[phaseName]?.[eventName] ?? '·';
      it(`interactive: ${phaseName} + ${eventName} → ${expected}`, () => {
        const before = conn(phase, true);
        const step = nextConnection(before, ev, RULES, world());
        const got = step.connection === before && step.effects.length === 0 ? '·' : `${step.connection.phase.id}${step.effects.length > 0 ? `: ${step.effects.map((e) => e.type).join(', ')}` : ''}`;
        expect(got).toBe(expected);
      });
    }
  }

  it('ignores every event of an earlier attempt or wait', () => {
    for (const phase of Object.values(PHASES)) {
      for (const ev of Object.values(EVENTS)) {
        if (!('attempt' in ev) && !('wait' in ev)) continue;
        const old = 'attempt' in ev ? { ...ev, attempt: 4 } : { ...ev, wait: 4 };
        const before = conn(phase);
        expect(nextConnection(before, old as ConnectionEvent, RULES, world())).toEqual({ connection: before, effects: [] });
      }
    }
  });
});

describe('connection lifecycle: stories', () => {
  it('lost then back: every forward ends with the cause, the master comes back, forwards are added again', () => {
    let c = conn(PHASES.up!);
    let step = nextConnection(c, EVENTS['exited(lost)']!, RULES, world());
    c = step.connection;
    expect(connectionState(c.phase)).toBe('retrying');
    expect(step.effects).toContainEqual({ type: 'lost', failure: lost, exit: { code: 255, signal: null } });
    expect(c.lastFailure).toEqual(lost);
    // A forward asked for now gets the cause at once, no process spent.
    expect(forwardVerdict(c)).toEqual({ kind: 'down', failure: lost });
    const wait = c.phase.id === 'backoff' ? c.phase.wait : -1;
    const timer = step.effects.find((e) => e.type === 'timer');
    // A connection lost after a long run retries fast, within the unprobed cap.
    expect(timer !== undefined && timer.type === 'timer' && timer.at - T <= RULES.unprobedCapMs).toBe(true);
    step = nextConnection(c, { type: 'retry-due', wait }, RULES, world(T + 500));
    c = step.connection;
    const attempt = c.phase.id === 'connecting' ? c.phase.attempt : -1;
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
    c = nextConnection(c, { type: 'spawned', attempt, pid: 200 }, RULES, world(T + 600)).connection;
    step = nextConnection(c, { type: 'ready', attempt }, RULES, world(T + 900));
    expect(step.effects.map((e) => e.type)).toContain('opened');
    expect(connectionState(step.connection.phase)).toBe('up');
    expect(connectionPid(step.connection.phase)).toBe(200);
    expect(step.connection.lastFailure).toBeNull();
    expect(forwardVerdict(step.connection)).toEqual({ kind: 'add' });
  });

  it('a fatal login failure rests the connection (no retry storm) and hands the cause to the forwards', () => {
    const step = nextConnection(conn(PHASES.connecting!), EVENTS['exited(auth)']!, RULES, world());
    expect(step.connection.phase).toEqual({ id: 'idle' });
    expect(step.effects).toContainEqual({ type: 'lost', failure: auth, exit: { code: 255, signal: null } });
    expect(step.effects.some((e) => e.type === 'timer' || e.type === 'spawn')).toBe(false);
  });

  it('a start timeout ends the master and reports the timeout, not what the killed ssh said', () => {
    let step = nextConnection(conn(PHASES.connecting!), EVENTS['start-timeout']!, RULES, world());
    step = nextConnection(step.connection, { type: 'exited', attempt: 5, exit: { code: 255, signal: null }, failure: fail('Killed by signal 15.'), probe: null }, RULES, world(T + 10));
    const lostEffect = step.effects.find((e) => e.type === 'lost');
    expect(lostEffect?.type === 'lost' && lostEffect.failure.reason).toBe('start_timeout');
    expect(step.connection.phase.id).toBe('backoff');
  });

  it('an unresponsive master is ended, and its tunnels get that cause rather than the signal', () => {
    let step = nextConnection(conn(PHASES.up!), EVENTS.unresponsive!, RULES, world());
    step = nextConnection(step.connection, { type: 'exited', attempt: 5, exit: { code: null, signal: 'SIGKILL' }, failure: fail('Killed by signal 9.'), probe: null }, RULES, world(T + 10));
    const lostEffect = step.effects.find((e) => e.type === 'lost');
    expect(lostEffect?.type === 'lost' && lostEffect.failure.message).toMatch(/stopped answering on its control socket/);
    expect(step.connection.phase.id).toBe('backoff');
  });

  it('after a fatal failure a forward asked for gets that cause (FAILED, no login), until a start wants the connection again', () => {
    let c = nextConnection(conn(PHASES.connecting!), EVENTS['exited(auth)']!, RULES, world()).connection;
    expect(forwardVerdict(c)).toEqual({ kind: 'down', failure: auth });
    c = nextConnection(c, EVENTS['wanted(now)']!, RULES, world()).connection;
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
  });

  it('a master being stopped that is wanted again connects once it is gone, and waiting forwards stay waiting', () => {
    let c = conn(PHASES.up!);
    c = nextConnection(c, EVENTS.unwanted!, RULES, world()).connection;
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
    c = nextConnection(c, EVENTS.wanted!, RULES, world()).connection;
    const step = nextConnection(c, EVENTS['exited(lost)']!, RULES, world());
    expect(step.connection.phase.id).toBe('connecting');
    expect(step.effects.some((e) => e.type === 'lost')).toBe(false);
  });

  it('interactive: the master waits for one login; lost once up, its tunnels wait for one fresh login together; ended before one, it rests until a person asks', () => {
    let c = initialConnection(T, true);
    let step = nextConnection(c, EVENTS.wanted!, RULES, world());
    c = step.connection;
    expect(connectionState(c.phase, true)).toBe('awaiting_login');
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
    // A person takes the time they need: no start timeout.
    step = nextConnection(c, { type: 'spawned', attempt: 1, pid: 300 }, RULES, world(T + 10));
    expect(step.effects.some((e) => e.type === 'timer')).toBe(false);
    c = nextConnection(step.connection, { type: 'ready', attempt: 1 }, RULES, world(T + 20_000)).connection;
    expect(forwardVerdict(c)).toEqual({ kind: 'add' });
    step = nextConnection(c, { type: 'exited', attempt: 1, exit: { code: 255, signal: null }, failure: lost, probe: null }, RULES, world(T + 90_000));
    c = step.connection;
    expect(step.effects).toContainEqual({ type: 'lost', failure: lost, exit: { code: 255, signal: null } });
    expect(step.effects.filter((e) => e.type === 'spawn')).toHaveLength(1);
    expect(connectionState(c.phase, true)).toBe('awaiting_login');
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
    // The fresh login ends without a person (the server went away): no second one by itself.
    step = nextConnection(c, { type: 'spawned', attempt: 2, pid: 301 }, RULES, world(T + 90_010));
    step = nextConnection(step.connection, { type: 'exited', attempt: 2, exit: { code: 255, signal: null }, failure: refused, probe: target }, RULES, world(T + 91_000));
    c = step.connection;
    expect(c.phase).toEqual({ id: 'idle' });
    expect(step.effects.some((e) => e.type === 'spawn' || e.type === 'timer' || e.type === 'probe')).toBe(false);
    // A tunnel that asks now is told at once; a person's start connects again.
    expect(forwardVerdict(c)).toEqual({ kind: 'down', failure: refused });
    c = nextConnection(c, EVENTS['wanted(now)']!, RULES, world(T + 95_000)).connection;
    expect(forwardVerdict(c)).toEqual({ kind: 'wait' });
  });

  it('interactive: a person at a prompt older than a minute gets a fresh login, and the forwards waiting for it go on waiting', () => {
    const stale = { ...conn(PHASES.connecting!, true), lastSpawnAt: T - 61_000 };
    let step = nextConnection(stale, EVENTS.login!, RULES, world());
    expect(step.connection.phase).toEqual({ id: 'stopping', attempt: 5, pid: 100, reconnect: true });
    expect(step.effects.map((e) => e.type)).toEqual(['terminate', 'announce']);
    step = nextConnection(step.connection, EVENTS['exited(lost)']!, RULES, world(T + 10));
    expect(step.connection.phase.id).toBe('connecting');
    expect(step.effects.some((e) => e.type === 'lost')).toBe(false);
    expect(step.effects.map((e) => e.type)).toContain('spawn');
    // A batch connection has no person's login to replace.
    expect(nextConnection({ ...stale, interactive: false }, EVENTS.login!, RULES, world()).effects).toEqual([]);
  });

  it('announces only when the public state or pid changes, and stamps `since` then', () => {
    const c = conn(PHASES['connecting(slot)']!);
    const step = nextConnection(c, EVENTS.spawned!, RULES, world(T + 5));
    expect(step.connection.since).toBe(T + 5);
    const again = nextConnection(step.connection, EVENTS['start-timeout']!, RULES, world(T + 6));
    expect(again.effects.map((e) => e.type)).not.toContain('announce');
    expect(again.connection.since).toBe(T + 5);
  });
});

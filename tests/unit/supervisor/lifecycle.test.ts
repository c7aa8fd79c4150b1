// The tunnel lifecycle's transitions, pure: every state × every event, for a batch
// tunnel and for an interactive one, without a clock or a process.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../src/supervisor/backoff.js';
import { classifyExit, startTimeoutFailure } from '../../../src/supervisor/process/ssh-exit-classify.js';
import { next } from '../../../src/supervisor/tunnel/tunnel-lifecycle.js';
import { FRESH_PROMPT_MS } from '../../../src/supervisor/effects/retry-wait.js';
import { initialTunnel, publicStatus, type Effect, type Event, type Phase, type Rules, type Tunnel, type World } from '../../../src/supervisor/tunnel/tunnel-phase.js';
import { unreachable } from '../../../src/kernel/unreachable.js';

const T = Date.UTC(2030, 0, 1);
const fail = (line: string) => classifyExit({ code: 255, signal: null, lines: [line], flag: '-L', remoteBind: null });
const refused = fail('ssh: connect to host 10.0.0.1 port 22: Connection refused');
const auth = fail('user@bastion: Permission denied (publickey).');
const hostKey = fail('Host key verification failed.');
const target = { kind: 'ssh-port' as const, host: '10.0.0.1', port: 22 };

const BATCH: Rules = { interactive: false, policy: DEFAULT_BACKOFF, unprobedCapMs: 4_000, probeIntervalMs: 250, startTimeoutMs: 15_000 };
const INTERACTIVE: Rules = { ...BATCH, interactive: true };
const world = (now = T): World => ({ now, random: () => 0.5 });

// Each sample's live token (attempt or wait) is 5, the last one handed out.
const PHASES: Record<string, Phase> = {
  stopped: { id: 'stopped' },
  'starting(slot)': { id: 'starting', attempt: 5, pid: null, ending: null },
  starting: { id: 'starting', attempt: 5, pid: 100, ending: null },
  'starting(ending)': { id: 'starting', attempt: 5, pid: 100, ending: startTimeoutFailure(15) },
  running: { id: 'running', attempt: 5, pid: 100, since: T - 60_000 },
  backoff: { id: 'backoff', wait: 5, until: T + 4_000, failure: refused, probe: target },
  'backoff(blind)': { id: 'backoff', wait: 5, until: T + 4_000, failure: refused, probe: null },
  failed: { id: 'failed', failure: auth },
  'stopping(stop)': { id: 'stopping', attempt: 5, pid: 100, then: 'stop' },
  'stopping(start)': { id: 'stopping', attempt: 5, pid: 100, then: 'start' },
  'stopping(restart)': { id: 'stopping', attempt: 5, pid: 100, then: 'restart' },
  'awaiting_login(slot)': { id: 'awaiting_login', attempt: 5, pid: null },
  awaiting_login: { id: 'awaiting_login', attempt: 5, pid: 100 },
  login_needed: { id: 'login_needed' },
};

const exit = { code: 255, signal: null };
const EVENTS: Record<string, Event> = {
  start: { type: 'start', restart: false },
  'start(restart)': { type: 'start', restart: true },
  stop: { type: 'stop' },
  restart: { type: 'restart' },
  spawned: { type: 'spawned', attempt: 5, pid: 100 },
  established: { type: 'established', attempt: 5 },
  'start-timeout': { type: 'start-timeout', attempt: 5 },
  'exited(refused)': { type: 'exited', attempt: 5, exit, failure: refused, probe: target },
  'exited(auth)': { type: 'exited', attempt: 5, exit, failure: auth, probe: null },
  'exited(host key)': { type: 'exited', attempt: 5, exit, failure: hostKey, probe: null },
  'retry-due': { type: 'retry-due', wait: 5 },
  'probe(down)': { type: 'probe-result', wait: 5, ok: false },
  'probe(up)': { type: 'probe-result', wait: 5, ok: true },
  login: { type: 'login' },
};

/** The same event for the previous attempt or wait (4): always stale. */
function stale(ev: Event): Event {
  switch (ev.type) {
    case 'start':
    case 'stop':
    case 'restart':
    case 'login':
      return ev;
    case 'spawned':
    case 'established':
    case 'start-timeout':
    case 'exited':
      return { ...ev, attempt: 4 };
    case 'retry-due':
    case 'probe-result':
      return { ...ev, wait: 4 };
    default:
      return unreachable(ev, 'event');
  }
}

function label(p: Phase): string {
  switch (p.id) {
    case 'starting':
      return p.pid === null ? 'starting(slot)' : p.ending !== null ? 'starting(ending)' : 'starting';
    case 'stopping':
      return `stopping(${p.then})`;
    case 'awaiting_login':
      return p.pid === null ? 'awaiting_login(slot)' : 'awaiting_login';
    default:
      return p.id;
  }
}

function tunnelIn(phase: Phase): Tunnel {
  return { ...initialTunnel(T - 1_000), phase, seq: 5, lastSpawnAt: T - 5_000 };
}

/** "=" for an unchanged state (same object), else the next phase; then the effects' types in order. */
function outcome(phase: Phase, ev: Event, rules: Rules): string {
  const t = tunnelIn(phase);
  const step = next(t, ev, rules, world());
  return [step.tunnel === t ? '=' : label(step.tunnel.phase), ...step.effects.map((e) => e.type)].join(' ');
}

// Read a row as: in this state, this event leads to that state with these effects.
// "(slot)": the attempt waits for its spawn slot, nothing spawned yet. Rows hold the
// states each kind of tunnel can be in.
const BATCH_TABLE: Record<string, Record<string, string>> = {
  'stopped': {
    'start': 'starting(slot) spawn announce',
    'start(restart)': 'starting(slot) spawn announce',
    'stop': '=',
    'restart': 'starting(slot) spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'starting(slot)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopped cancel announce',
    'restart': 'starting(slot) cancel spawn announce',
    'spawned': 'starting timer announce',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'backoff cancel note timer probe announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'starting': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop) cancel terminate',
    'restart': 'stopping(restart) cancel terminate announce',
    'spawned': 'starting timer announce',
    'established': 'running announce',
    'start-timeout': 'starting(ending) cancel terminate announce',
    'exited(refused)': 'backoff cancel note timer probe announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'starting(ending)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop) cancel terminate',
    'restart': 'stopping(restart) cancel terminate announce',
    'spawned': 'starting(ending) timer announce',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'backoff cancel note timer probe announce',
    'exited(auth)': 'backoff cancel note timer announce',
    'exited(host key)': 'backoff cancel note timer announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'running': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop) cancel terminate',
    'restart': 'stopping(restart) cancel terminate announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'backoff cancel note timer probe announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'backoff': {
    'start': 'starting(slot) cancel spawn announce',
    'start(restart)': 'starting(slot) cancel spawn announce',
    'stop': 'stopped cancel announce',
    'restart': 'starting(slot) cancel spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': 'starting(slot) cancel spawn announce',
    'probe(down)': '= probe',
    'probe(up)': 'starting(slot) cancel spawn announce',
    'login': '=',
  },
  'backoff(blind)': {
    'start': 'starting(slot) cancel spawn announce',
    'start(restart)': 'starting(slot) cancel spawn announce',
    'stop': 'stopped cancel announce',
    'restart': 'starting(slot) cancel spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': 'starting(slot) cancel spawn announce',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'failed': {
    'start': 'starting(slot) spawn announce',
    'start(restart)': 'starting(slot) spawn announce',
    'stop': 'stopped announce',
    'restart': 'starting(slot) spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'stopping(stop)': {
    'start': 'stopping(start) announce',
    'start(restart)': 'stopping(restart) announce',
    'stop': '=',
    'restart': 'stopping(restart) announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'stopped note announce',
    'exited(auth)': 'stopped note announce',
    'exited(host key)': 'stopped note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'stopping(start)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop)',
    'restart': 'stopping(restart) announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'starting(slot) note spawn announce',
    'exited(auth)': 'starting(slot) note spawn announce',
    'exited(host key)': 'starting(slot) note spawn announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'stopping(restart)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop)',
    'restart': '=',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'starting(slot) note spawn announce',
    'exited(auth)': 'starting(slot) note spawn announce',
    'exited(host key)': 'starting(slot) note spawn announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
};

const INTERACTIVE_TABLE: Record<string, Record<string, string>> = {
  'stopped': {
    'start': 'awaiting_login(slot) spawn announce',
    'start(restart)': 'awaiting_login(slot) spawn announce',
    'stop': '=',
    'restart': 'awaiting_login(slot) spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': 'awaiting_login(slot) spawn announce',
  },
  'awaiting_login(slot)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopped cancel announce',
    'restart': 'awaiting_login(slot) cancel spawn announce',
    'spawned': 'awaiting_login announce',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'login_needed cancel note announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'awaiting_login': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop) cancel terminate',
    'restart': 'stopping(restart) cancel terminate announce',
    'spawned': 'awaiting_login announce',
    'established': 'running announce',
    'start-timeout': '=',
    'exited(refused)': 'login_needed cancel note announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'running': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop) cancel terminate',
    'restart': 'stopping(restart) cancel terminate announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'awaiting_login(slot) cancel note spawn announce',
    'exited(auth)': 'failed cancel note announce',
    'exited(host key)': 'failed cancel note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'failed': {
    'start': 'awaiting_login(slot) spawn announce',
    'start(restart)': 'awaiting_login(slot) spawn announce',
    'stop': 'stopped announce',
    'restart': 'awaiting_login(slot) spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': 'awaiting_login(slot) spawn announce',
  },
  'stopping(stop)': {
    'start': 'stopping(start) announce',
    'start(restart)': 'stopping(restart) announce',
    'stop': '=',
    'restart': 'stopping(restart) announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'stopped note announce',
    'exited(auth)': 'stopped note announce',
    'exited(host key)': 'stopped note announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'stopping(start)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop)',
    'restart': 'stopping(restart) announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'awaiting_login(slot) note spawn announce',
    'exited(auth)': 'awaiting_login(slot) note spawn announce',
    'exited(host key)': 'awaiting_login(slot) note spawn announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'stopping(restart)': {
    'start': '=',
    'start(restart)': '=',
    'stop': 'stopping(stop)',
    'restart': '=',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': 'awaiting_login(slot) note spawn announce',
    'exited(auth)': 'awaiting_login(slot) note spawn announce',
    'exited(host key)': 'awaiting_login(slot) note spawn announce',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': '=',
  },
  'login_needed': {
    'start': 'awaiting_login(slot) spawn announce',
    'start(restart)': 'awaiting_login(slot) spawn announce',
    'stop': 'stopped announce',
    'restart': 'awaiting_login(slot) spawn announce',
    'spawned': '=',
    'established': '=',
    'start-timeout': '=',
    'exited(refused)': '=',
    'exited(auth)': '=',
    'exited(host key)': '=',
    'retry-due': '=',
    'probe(down)': '=',
    'probe(up)': '=',
    'login': 'awaiting_login(slot) spawn announce',
  },
};

describe.each([
  ['a batch tunnel', BATCH, BATCH_TABLE],
  ['an interactive tunnel', INTERACTIVE, INTERACTIVE_TABLE],
])('%s', (_name, rules, table) => {
  const cases = Object.entries(table).flatMap(([p, row]) => Object.entries(row).map(([e, want]) => [p, e, want] as const));

  it('the table covers every event in every state listed', () => {
    for (const row of Object.values(table)) expect(Object.keys(row)).toEqual(Object.keys(EVENTS));
  });

  it.each(cases)('%s + %s → %s', (p, e, want) => {
    expect(outcome(PHASES[p] as Phase, EVENTS[e] as Event, rules)).toBe(want);
  });

  it.each(Object.keys(table))('%s ignores every event of an attempt or wait that is over', (p) => {
    for (const ev of Object.values(EVENTS)) {
      if (ev.type === 'start' || ev.type === 'stop' || ev.type === 'restart' || ev.type === 'login') continue;
      const t = tunnelIn(PHASES[p] as Phase);
      expect(next(t, stale(ev), rules, world())).toEqual({ tunnel: t, effects: [] });
    }
  });

  it.each(Object.keys(table))('%s: stop ends in STOPPED, now or once the child is gone', (p) => {
    const t = tunnelIn(PHASES[p] as Phase);
    const step = next(t, { type: 'stop' }, rules, world());
    expect(publicStatus(step.tunnel.phase, rules.interactive)).toBe('STOPPED');
    const id = step.tunnel.phase.id;
    expect(['stopped', 'stopping']).toContain(id);
    if (id === 'stopping') {
      const attempt = step.tunnel.phase.attempt;
      const gone = next(step.tunnel, { type: 'exited', attempt, exit, failure: refused, probe: null }, rules, world());
      expect(gone.tunnel.phase).toEqual({ id: 'stopped' });
    }
  });
});

describe('details of the transitions', () => {
  const run = (t: Tunnel, evs: Event[], rules = BATCH, now = T) => {
    const effects: Effect[] = [];
    for (const ev of evs) {
      const step = next(t, ev, rules, world(now));
      t = step.tunnel;
      effects.push(...step.effects);
    }
    return { t, effects };
  };

  it('stop → start → stop while the child ends: STOPPED, and nothing spawned', () => {
    const { t, effects } = run(tunnelIn(PHASES.running as Phase), [
      { type: 'stop' },
      { type: 'start', restart: false },
      { type: 'stop' },
      { type: 'exited', attempt: 5, exit, failure: refused, probe: null },
    ]);
    expect(t.phase).toEqual({ id: 'stopped' });
    expect(effects.filter((e) => e.type === 'spawn')).toEqual([]);
    expect(effects.filter((e) => e.type === 'terminate')).toEqual([{ type: 'terminate', attempt: 5 }]);
  });

  it('a start while stopping spawns only after the child is gone, with a new attempt and fresh counters', () => {
    const t0 = { ...tunnelIn(PHASES['stopping(stop)'] as Phase), counters: { failures: 3, flaps: 2 } };
    const pending = run(t0, [{ type: 'start', restart: false }]);
    expect(pending.effects.map((e) => e.type)).toEqual(['announce']);
    expect(publicStatus(pending.t.phase, false)).toBe('STARTING');
    const { t, effects } = run(pending.t, [{ type: 'exited', attempt: 5, exit: { code: 0, signal: null }, failure: refused, probe: null }]);
    expect(t.phase).toEqual({ id: 'starting', attempt: 6, pid: null, ending: null });
    expect(t.counters).toEqual({ failures: 0, flaps: 0 });
    expect(t.restarts).toBe(0);
    expect(t.lastExit).toEqual({ code: 0, signal: null, at: new Date(T).toISOString() });
    expect(effects).toContainEqual({ type: 'spawn', attempt: 6, mode: 'batch' });
  });

  it('a restart counts once, keeps the public status off STOPPED, and the old child\'s end is no failure', () => {
    const r = run(tunnelIn(PHASES.running as Phase), [{ type: 'restart' }]);
    expect(publicStatus(r.t.phase, false)).toBe('STARTING');
    const { t } = run(r.t, [{ type: 'exited', attempt: 5, exit: { code: 0, signal: null }, failure: refused, probe: null }]);
    expect(t.phase.id).toBe('starting');
    expect(t.restarts).toBe(1);
    expect(t.lastError).toBeNull();
  });

  it('stopping announces nothing until the child is gone: one STOPPED per stop', () => {
    const stop = next(tunnelIn(PHASES.running as Phase), { type: 'stop' }, BATCH, world());
    expect(stop.effects.map((e) => e.type)).toEqual(['cancel', 'terminate']);
    const gone = next(stop.tunnel, { type: 'exited', attempt: 5, exit, failure: refused, probe: null }, BATCH, world());
    expect(gone.effects.filter((e) => e.type === 'announce')).toHaveLength(1);
  });

  it('since moves only when the public status changes', () => {
    const t0 = tunnelIn(PHASES['starting(slot)'] as Phase);
    const spawned = next(t0, { type: 'spawned', attempt: 5, pid: 100 }, BATCH, world(T + 10));
    expect(spawned.tunnel.since).toBe(t0.since);
    const up = next(spawned.tunnel, { type: 'established', attempt: 5 }, BATCH, world(T + 20));
    expect(up.tunnel.since).toBe(T + 20);
  });

  it('a spawned attempt arms its start timeout; the timed-out end is recorded as the timeout', () => {
    const spawned = next(tunnelIn(PHASES['starting(slot)'] as Phase), { type: 'spawned', attempt: 5, pid: 100 }, BATCH, world());
    expect(spawned.effects).toContainEqual({ type: 'timer', token: 5, at: T + 15_000, event: { type: 'start-timeout', attempt: 5 } });
    expect(spawned.tunnel.lastSpawnAt).toBe(T);
    const { t } = run(spawned.tunnel, [
      { type: 'start-timeout', attempt: 5 },
      { type: 'exited', attempt: 5, exit: { code: null, signal: 'SIGTERM' }, failure: auth, probe: null },
    ]);
    expect(t.phase).toMatchObject({ id: 'backoff', failure: { reason: 'start_timeout' } });
    expect(t.lastError).toBe('ssh did not report the forward established within 15 s');
  });

  it('a retryable exit plans the backoff, probes at once, and counts the failure', () => {
    const t0 = tunnelIn(PHASES.starting as Phase);
    const { t, effects } = run(t0, [{ type: 'exited', attempt: 5, exit, failure: refused, probe: target }]);
    // First failure: base 500 ms with jitter 0.5 → 375 ms, but logins stay 1 s apart (last spawn T − 5 s).
    expect(t.phase).toEqual({ id: 'backoff', wait: 6, until: T + 375, failure: refused, probe: target });
    expect(t.counters).toEqual({ failures: 1, flaps: 0 });
    expect(t.lastError).toBe(refused.message);
    expect(effects).toEqual([
      { type: 'cancel', token: 5 },
      { type: 'note', text: `ssh exited (code 255): ${refused.message}` },
      { type: 'timer', token: 6, at: T + 375, event: { type: 'retry-due', wait: 6 } },
      { type: 'probe', token: 6, at: T, target },
      { type: 'announce' },
    ]);
  });

  it('a fault no probe watches is capped lower', () => {
    const t0 = { ...tunnelIn(PHASES.starting as Phase), counters: { failures: 10, flaps: 0 } };
    const { t } = run(t0, [{ type: 'exited', attempt: 5, exit, failure: refused, probe: null }]);
    // Jitter 0.5 of the 4 s cap: 3 s.
    expect(t.phase).toMatchObject({ id: 'backoff', until: T + 3_000 });
  });

  it('a probe that sees the fault end logs in at once, or as soon as one login per second allows', () => {
    const recent = { ...tunnelIn(PHASES.backoff as Phase), lastSpawnAt: T - 400 };
    const step = next(recent, { type: 'probe-result', wait: 5, ok: true }, BATCH, world());
    expect(step.tunnel.phase).toMatchObject({ id: 'backoff', until: T + 600 });
    expect(step.effects).toContainEqual({ type: 'timer', token: 5, at: T + 600, event: { type: 'retry-due', wait: 5 } });
    const down = next(tunnelIn(PHASES.backoff as Phase), { type: 'probe-result', wait: 5, ok: false }, BATCH, world());
    expect(down.effects).toEqual([{ type: 'probe', token: 5, at: T + 250, target }]);
    // No probe past the planned retry.
    const late = next(tunnelIn(PHASES.backoff as Phase), { type: 'probe-result', wait: 5, ok: false }, BATCH, world(T + 3_800));
    expect(late.effects).toEqual([]);
  });

  it('a retry counts in restarts; a user\'s start does not, a config change\'s does', () => {
    expect(run(tunnelIn(PHASES.backoff as Phase), [{ type: 'retry-due', wait: 5 }]).t.restarts).toBe(1);
    expect(run(tunnelIn(PHASES.stopped as Phase), [{ type: 'start', restart: false }]).t.restarts).toBe(0);
    expect(run(tunnelIn(PHASES.stopped as Phase), [{ type: 'start', restart: true }]).t.restarts).toBe(1);
  });

  it('established clears the last error and the login-failure series', () => {
    const t0 = { ...tunnelIn(PHASES.starting as Phase), lastError: 'x', counters: { failures: 4, flaps: 1 } };
    const { t } = run(t0, [{ type: 'established', attempt: 5 }], BATCH, T + 7);
    expect(t.phase).toEqual({ id: 'running', attempt: 5, pid: 100, since: T + 7 });
    expect(t.lastError).toBeNull();
    expect(t.counters).toEqual({ failures: 0, flaps: 1 });
  });

  describe('interactive', () => {
    it('a start spawns in a terminal, with no start timeout', () => {
      const { t, effects } = run(tunnelIn(PHASES.stopped as Phase), [{ type: 'start', restart: false }, { type: 'spawned', attempt: 6, pid: 100 }], INTERACTIVE);
      expect(t.phase).toEqual({ id: 'awaiting_login', attempt: 6, pid: 100 });
      expect(publicStatus(t.phase, true)).toBe('AUTH_REQUIRED');
      expect(effects).toContainEqual({ type: 'spawn', attempt: 6, mode: 'pty' });
      expect(effects.filter((e) => e.type === 'timer')).toEqual([]);
    });

    it('a lost connection gets one fresh login, and an ssh that ends before a login waits for a person: never a timer', () => {
      const { t, effects } = run(
        tunnelIn(PHASES.running as Phase),
        [
          { type: 'exited', attempt: 5, exit, failure: fail('Connection to bastion closed by remote host.'), probe: null },
          { type: 'spawned', attempt: 6, pid: 101 },
          { type: 'exited', attempt: 6, exit, failure: refused, probe: target },
        ],
        INTERACTIVE,
      );
      expect(t.phase).toEqual({ id: 'login_needed' });
      expect(t.lastError).toBe(refused.message);
      expect(effects.filter((e) => e.type === 'spawn')).toEqual([{ type: 'spawn', attempt: 6, mode: 'pty' }]);
      expect(effects.filter((e) => e.type === 'timer' || e.type === 'probe')).toEqual([]);
    });

    it('a person who comes to a prompt older than a minute gets a fresh ssh; a younger one is kept', () => {
      const waiting = tunnelIn(PHASES.awaiting_login as Phase);
      const young = next(waiting, { type: 'login' }, INTERACTIVE, world(T - 5_000 + FRESH_PROMPT_MS - 1));
      expect(young).toEqual({ tunnel: waiting, effects: [] });
      const old = next(waiting, { type: 'login' }, INTERACTIVE, world(T - 5_000 + FRESH_PROMPT_MS));
      expect(old.tunnel.phase).toEqual({ id: 'stopping', attempt: 5, pid: 100, then: 'restart' });
      expect(publicStatus(old.tunnel.phase, true)).toBe('AUTH_REQUIRED');
      expect(old.effects.map((e) => e.type)).toEqual(['cancel', 'terminate', 'announce']);
      const gone = next(old.tunnel, { type: 'exited', attempt: 5, exit: { code: null, signal: 'SIGTERM' }, failure: refused, probe: null }, INTERACTIVE, world(T + FRESH_PROMPT_MS));
      expect(gone.tunnel.phase).toEqual({ id: 'awaiting_login', attempt: 6, pid: null });
      expect(gone.effects).toContainEqual({ type: 'spawn', attempt: 6, mode: 'pty' });
    });

    it('a restart shows AUTH_REQUIRED, not STOPPED', () => {
      const { t } = run(tunnelIn(PHASES.running as Phase), [{ type: 'restart' }], INTERACTIVE);
      expect(publicStatus(t.phase, true)).toBe('AUTH_REQUIRED');
    });
  });
});

it('the lifecycle does no I/O: nothing from node:, no timers, no processes', () => {
  const imports = (file: string) => {
    const source = readFileSync(new URL(`../../../src/supervisor/${file}`, import.meta.url), 'utf8');
    expect(source).not.toMatch(/from 'node:|setTimeout|setInterval|Date\.now|Math\.random|process\./);
    return [...source.matchAll(/^import (?!type ).*from '(.+)';$/gm)].map((m) => m[1]);
  };
  expect(imports('tunnel/tunnel-lifecycle.ts')).toEqual(['../../kernel/unreachable.js', '../backoff.js', '../effects/retry-wait.js', '../process/ssh-exit-classify.js', './tunnel-phase.js']);
  expect(imports('tunnel/tunnel-phase.ts')).toEqual(['../../kernel/unreachable.js', '../backoff.js']);
  // The retry transitions it shares with the connection's lifecycle are as pure.
  expect(imports('effects/retry-wait.ts')).toEqual(['../backoff.js']);
});

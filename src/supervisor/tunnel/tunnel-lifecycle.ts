// One tunnel's lifecycle as a pure state machine (its vocabulary in tunnel-phase.ts): `next(tunnel, event, world)` returns
// the next state and the effects the runner (runner.ts) performs — spawn, terminate,
// timers, probes, announcements. No I/O, no clock, nothing from `node:`: every
// transition is tested as a table (tests/unit/supervisor/lifecycle.test.ts).
//
// Children, timers and probes are named by tokens (numbers from `seq`): an attempt is
// one spawn of ssh, a wait is one backoff. Events name the token they belong to, so an
// event of an attempt or wait that is over is recognised as stale and ignored.
import type { LastExit } from '../../tunnel/status.js';
import { unreachable } from '../../kernel/unreachable.js';
import { FRESH_COUNTERS, onEstablished } from '../backoff.js';
import { afterProbe, enterBackoff, FRESH_PROMPT_MS } from '../effects/retry-wait.js';
import { startTimeoutFailure, type Failure } from '../process/ssh-exit-classify.js';
import type { ProbeTarget } from '../health/probe.js';
import { publicStatus, type AfterStop, type Effect, type Event, type Phase, type Rules, type Step, type Tunnel, type World } from './tunnel-phase.js';

/*
 *               start              forward established
 *   stopped ─────────────► starting ──────────────────────► running
 *     ▲  ▲                  │  ▲                               │
 *     │  │       fatal exit │  │ retry due (or probe ok)       │ exit
 *     │  │                  ▼  │                               ▼
 *     │  │               failed  backoff (RETRYING) ◄──────────┘
 *     │  │                          ▲
 *     │  │                          └── retryable exit or start timeout, from starting
 *     │  └── stop from failed, backoff, or starting before the spawn
 *     │ child gone (then: stop)
 *   stopping ◄── stop or restart while a child exists; child gone (then: start) → starting
 *
 *   Interactive tunnels (SPEC §13) log in through a person, never by themselves:
 *
 *            start                 forward established
 *   stopped ───────► awaiting_login ──────────────────► running
 *                      │    ▲   ▲                          │
 *    retryable exit    │    │   └──────── exit: one fresh login, no backoff loop
 *    before a login    ▼    │ start
 *                   login_needed (no ssh until a person asks)
 *
 *   A person who attaches a terminal (login) starts a login out of stopped, failed or
 *   login_needed, and replaces an awaiting_login ssh whose prompt is stale.
 *
 *   awaiting_login and login_needed are AUTH_REQUIRED. What a retry will not fix — a
 *   refused login, host key, unknown host, bad arguments — is FAILED as for any tunnel.
 */

/**
 * The transition function. Effects are listed in the order the runner performs them;
 * an announcement comes last, once the state is final.
 */
export function next(t: Tunnel, ev: Event, rules: Rules, world: World): Step {
  const step = transition(t, ev, rules, world);
  const before = publicStatus(t.phase, rules.interactive);
  const after = publicStatus(step.tunnel.phase, rules.interactive);
  const tunnel = after !== before ? { ...step.tunnel, since: world.now } : step.tunnel;
  // One STOPPED announcement per stop: the one made once the child is gone.
  const quiet = step.tunnel === t || (tunnel.phase.id === 'stopping' && tunnel.phase.then === 'stop');
  return { tunnel, effects: quiet ? step.effects : [...step.effects, { type: 'announce' }] };
}

const same = (t: Tunnel): Step => ({ tunnel: t, effects: [] });

function transition(t: Tunnel, ev: Event, rules: Rules, world: World): Step {
  switch (ev.type) {
    case 'start':
      return onStart(t, ev.restart, rules);
    case 'stop':
      return onStop(t);
    case 'restart':
      return onRestart(t, rules);
    case 'spawned':
      return onSpawned(t, ev, rules, world);
    case 'established':
      return onForwardUp(t, ev.attempt, world);
    case 'start-timeout':
      return onStartTimeout(t, ev.attempt, rules);
    case 'exited':
      return onExited(t, ev, rules, world);
    case 'retry-due':
      return t.phase.id === 'backoff' && t.phase.wait === ev.wait ? retryNow(t, rules) : same(t);
    case 'probe-result':
      return onProbeResult(t, ev, rules, world);
    case 'login':
      return onLogin(t, rules, world);
    default:
      return unreachable(ev, 'event');
  }
}

/** A new attempt: batch ssh (STARTING) or, for an interactive tunnel, ssh in a terminal (AUTH_REQUIRED). */
function launch(t: Tunnel, rules: Rules, countRestart: boolean, cancel: Effect[] = []): Step {
  const attempt = t.seq + 1;
  const phase: Phase = rules.interactive ? { id: 'awaiting_login', attempt, pid: null } : { id: 'starting', attempt, pid: null, ending: null };
  return {
    tunnel: { ...t, seq: attempt, phase, restarts: t.restarts + (countRestart ? 1 : 0) },
    effects: [...cancel, { type: 'spawn', attempt, mode: rules.interactive ? 'pty' : 'batch' }],
  };
}

/** A start out of a resting state begins a fresh series of backoffs. */
function fresh(t: Tunnel): Tunnel {
  return { ...t, counters: FRESH_COUNTERS };
}

function retryNow(t: Tunnel, rules: Rules): Step {
  if (t.phase.id !== 'backoff') return same(t);
  return launch(t, rules, true, [{ type: 'cancel', token: t.phase.wait }]);
}

function onStart(t: Tunnel, restart: boolean, rules: Rules): Step {
  const p = t.phase;
  switch (p.id) {
    case 'stopped':
    case 'failed':
    case 'login_needed':
      return launch(fresh(t), rules, restart);
    case 'backoff':
      // The user asked: try at once rather than sleep out the backoff.
      return launch(t, rules, false, [{ type: 'cancel', token: p.wait }]);
    case 'starting':
    case 'running':
    case 'awaiting_login':
      return same(t);
    case 'stopping':
      if (p.then !== 'stop') return same(t);
      return { tunnel: { ...t, phase: { ...p, then: restart ? 'restart' : 'start' } }, effects: [] };
    default:
      return unreachable(p, 'phase');
  }
}

function onStop(t: Tunnel): Step {
  const p = t.phase;
  switch (p.id) {
    case 'stopped':
      return same(t);
    case 'failed':
    case 'login_needed':
      return { tunnel: { ...t, phase: { id: 'stopped' } }, effects: [] };
    case 'backoff':
      return { tunnel: { ...t, phase: { id: 'stopped' } }, effects: [{ type: 'cancel', token: p.wait }] };
    case 'starting':
    case 'awaiting_login':
      // Nothing spawned yet: cancelling the attempt is enough.
      if (p.pid === null) return { tunnel: { ...t, phase: { id: 'stopped' } }, effects: [{ type: 'cancel', token: p.attempt }] };
      return stopChild(t, p.attempt, p.pid, 'stop');
    case 'running':
      return stopChild(t, p.attempt, p.pid, 'stop');
    case 'stopping':
      if (p.then === 'stop') return same(t);
      return { tunnel: { ...t, phase: { ...p, then: 'stop' } }, effects: [] };
    default:
      return unreachable(p, 'phase');
  }
}

function stopChild(t: Tunnel, attempt: number, pid: number | null, then: AfterStop): Step {
  return {
    tunnel: { ...t, phase: { id: 'stopping', attempt, pid, then } },
    effects: [
      { type: 'cancel', token: attempt },
      { type: 'terminate', attempt },
    ],
  };
}

function onRestart(t: Tunnel, rules: Rules): Step {
  const p = t.phase;
  switch (p.id) {
    case 'stopped':
    case 'failed':
    case 'login_needed':
      // Nothing runs: a restart is a start.
      return launch(fresh(t), rules, false);
    case 'backoff':
      return retryNow(t, rules);
    case 'starting':
    case 'awaiting_login':
      if (p.pid === null) return launch(t, rules, false, [{ type: 'cancel', token: p.attempt }]);
      return stopChild(t, p.attempt, p.pid, 'restart');
    case 'running':
      return stopChild(t, p.attempt, p.pid, 'restart');
    case 'stopping':
      return p.then === 'restart' ? same(t) : { tunnel: { ...t, phase: { ...p, then: 'restart' } }, effects: [] };
    default:
      return unreachable(p, 'phase');
  }
}

function onSpawned(t: Tunnel, ev: Extract<Event, { type: 'spawned' }>, rules: Rules, world: World): Step {
  const p = t.phase;
  switch (p.id) {
    case 'starting': {
      if (p.attempt !== ev.attempt) return same(t);
      const timeout: Effect = { type: 'timer', token: p.attempt, at: world.now + rules.startTimeoutMs, event: { type: 'start-timeout', attempt: p.attempt } };
      return { tunnel: { ...t, lastSpawnAt: world.now, phase: { ...p, pid: ev.pid } }, effects: ev.pid !== null ? [timeout] : [] };
    }
    case 'awaiting_login':
      // No start timeout: a person takes the time they need (sshd's LoginGraceTime bounds it).
      if (p.attempt !== ev.attempt) return same(t);
      return { tunnel: { ...t, lastSpawnAt: world.now, phase: { ...p, pid: ev.pid } }, effects: [] };
    case 'stopped':
    case 'running':
    case 'backoff':
    case 'failed':
    case 'stopping':
    case 'login_needed':
      return same(t);
    default:
      return unreachable(p, 'phase');
  }
}

function onForwardUp(t: Tunnel, attempt: number, world: World): Step {
  const p = t.phase;
  switch (p.id) {
    case 'starting':
      // An attempt already being ended (start timeout) does not count, even if ssh got there.
      if (p.attempt !== attempt || p.pid === null || p.ending !== null) return same(t);
      return { tunnel: { ...t, counters: onEstablished(t.counters), lastError: null, phase: { id: 'running', attempt, pid: p.pid, since: world.now } }, effects: [] };
    case 'awaiting_login':
      if (p.attempt !== attempt || p.pid === null) return same(t);
      return { tunnel: { ...t, lastError: null, phase: { id: 'running', attempt, pid: p.pid, since: world.now } }, effects: [] };
    case 'stopped':
    case 'running':
    case 'backoff':
    case 'failed':
    case 'stopping':
    case 'login_needed':
      return same(t);
    default:
      return unreachable(p, 'phase');
  }
}

function onStartTimeout(t: Tunnel, attempt: number, rules: Rules): Step {
  const p = t.phase;
  if (p.id !== 'starting' || p.attempt !== attempt || p.pid === null || p.ending !== null) return same(t);
  // The failure is recorded when the child is gone; until then the tunnel stays STARTING.
  const ending = startTimeoutFailure(Math.round(rules.startTimeoutMs / 1000));
  return {
    tunnel: { ...t, phase: { ...p, ending } },
    effects: [
      { type: 'cancel', token: attempt },
      { type: 'terminate', attempt },
    ],
  };
}

function onExited(t: Tunnel, ev: Extract<Event, { type: 'exited' }>, rules: Rules, world: World): Step {
  const p = t.phase;
  switch (p.id) {
    case 'starting':
    case 'running':
    case 'awaiting_login': {
      if (p.attempt !== ev.attempt) return same(t);
      const failure = p.id === 'starting' && p.ending !== null ? p.ending : ev.failure;
      const ended: Tunnel = { ...t, lastExit: lastExit(ev.exit, world.now), lastError: failure.message };
      const effects: Effect[] = [
        { type: 'cancel', token: p.attempt },
        { type: 'note', text: `ssh exited (${describeExit(ev.exit)}): ${failure.message}` },
      ];
      // SPEC §5: what a retry will not fix is FAILED, a refused login included (a
      // person who mistyped starts it again, as any FAILED tunnel is started again).
      if (!failure.retry) return { tunnel: { ...ended, phase: { id: 'failed', failure } }, effects };
      if (rules.interactive) {
        // SPEC §13: a lost connection gets one fresh login for a person to complete; an
        // ssh that ended before a login (server unreachable, connection closed) waits
        // for a person to ask again. Never a backoff loop of logins.
        if (p.id === 'running') return withEffects(launch(ended, rules, true), effects);
        return { tunnel: { ...ended, phase: { id: 'login_needed' } }, effects };
      }
      // SPEC §14: a shared tunnel whose connection is down has one retry owner, the
      // connection's backoff; an attempt of its own would end at once, never starting an ssh.
      if (ev.byConnection === true) return withEffects(awaitConnection(ended, failure), effects);
      return withEffects(backoff(ended, p.id === 'running' ? world.now - p.since : null, failure, ev.probe, rules, world), effects);
    }
    case 'stopping': {
      if (p.attempt !== ev.attempt) return same(t);
      const gone: Tunnel = { ...t, lastExit: lastExit(ev.exit, world.now) };
      const effects: Effect[] = [{ type: 'note', text: `ssh stopped (${describeExit(ev.exit)})` }];
      switch (p.then) {
        case 'stop':
          return { tunnel: { ...gone, phase: { id: 'stopped' } }, effects };
        case 'start':
          return withEffects(launch(fresh(gone), rules, false), effects);
        case 'restart':
          return withEffects(launch(fresh(gone), rules, true), effects);
        default:
          return unreachable(p.then, 'follow-up');
      }
    }
    case 'stopped':
    case 'backoff':
    case 'failed':
    case 'login_needed':
      return same(t);
    default:
      return unreachable(p, 'phase');
  }
}


/** A person is at the terminal: a login is started if none waits, and a stale prompt replaced. */
function onLogin(t: Tunnel, rules: Rules, world: World): Step {
  if (!rules.interactive) return same(t);
  const p = t.phase;
  switch (p.id) {
    case 'stopped':
    case 'failed':
    case 'login_needed':
      return launch(fresh(t), rules, false);
    case 'awaiting_login':
      if (p.pid === null || t.lastSpawnAt === null || world.now - t.lastSpawnAt < FRESH_PROMPT_MS) return same(t);
      return stopChild(t, p.attempt, p.pid, 'restart');
    case 'starting':
    case 'running':
    case 'backoff':
    case 'stopping':
      return same(t);
    default:
      return unreachable(p, 'phase');
  }
}

function withEffects(step: Step, first: Effect[]): Step {
  return { tunnel: step.tunnel, effects: [...first, ...step.effects] };
}

/** Plans the next login after a retryable failure; `ranMs` is null when the forward never came up. */
function backoff(t: Tunnel, ranMs: number | null, failure: Failure, probe: ProbeTarget | null, rules: Rules, world: World): Step {
  const { seq, counters, phase, effects } = enterBackoff(t, ranMs, failure, probe, rules, world);
  return { tunnel: { ...t, seq, counters, phase }, effects };
}

/** RETRYING until its connection is up again and kicks it (`retry-due`): no timer, no probe. */
function awaitConnection(t: Tunnel, failure: Failure): Step {
  const wait = t.seq + 1;
  return { tunnel: { ...t, seq: wait, phase: { id: 'backoff', wait, until: null, failure, probe: null } }, effects: [] };
}

/** A probe's answer during a backoff (effects/retry-wait.ts). */
function onProbeResult(t: Tunnel, ev: Extract<Event, { type: 'probe-result' }>, rules: Rules, world: World): Step {
  const p = t.phase;
  if (p.id !== 'backoff' || p.wait !== ev.wait || p.probe === null || p.until === null) return same(t);
  const outcome = afterProbe({ wait: p.wait, until: p.until }, p.probe, ev.ok, t.lastSpawnAt, rules, world);
  switch (outcome.kind) {
    case 'same':
      return same(t);
    case 'retry':
      return retryNow(t, rules);
    case 'wait':
      return { tunnel: outcome.until === p.until ? t : { ...t, phase: { ...p, until: outcome.until } }, effects: outcome.effects };
    default:
      return unreachable(outcome, 'probe outcome');
  }
}

function lastExit(exit: { code: number | null; signal: string | null }, now: number): LastExit {
  return { code: exit.code, signal: exit.signal, at: new Date(now).toISOString() };
}

function describeExit(exit: { code: number | null; signal: string | null }): string {
  if (exit.signal !== null) return `signal ${exit.signal}`;
  if (exit.code !== null) return `code ${exit.code}`;
  return 'not started';
}

// One shared connection's lifecycle (SPEC §14) as a pure state machine (its vocabulary in connection-phase.ts), beside the
// tunnel's (lifecycle.ts): `next(connection, event, rules, world)` returns the next
// state and the effects the connection runner (connection.ts) performs. No I/O, no
// clock, nothing from `node:`; tested as tables (tests/unit/supervisor/connection-lifecycle.test.ts).
//
// The connection is an OpenSSH ControlMaster (`ssh -M -N`) the daemon owns. It is
// wanted while at least one tunnel on it is active; the runner adds and cancels each
// tunnel's forward on it. Tokens work as in lifecycle.ts: an attempt is one spawn of
// the master, a wait one backoff; an event of a token that is over is ignored.
//
// An interactive connection (SPEC §13, §14) logs in through a person: its master runs
// in a pseudo-terminal, waits without a start timeout, and never backs off. Lost once
// up, it starts one fresh login for every tunnel on it; ended before a login, it rests
// until a person asks again (the tunnels on it are then AUTH_REQUIRED).
import { unreachable } from '../../kernel/unreachable.js';
import { FRESH_COUNTERS, onEstablished } from '../backoff.js';
import { afterProbe, enterBackoff, FRESH_PROMPT_MS } from '../effects/retry-wait.js';
import type { Failure } from '../process/ssh-exit-classify.js';
import {
  connectionPid,
  connectionState,
  type Connection,
  type ConnectionEffect,
  type ConnectionEvent,
  type ConnectionRules,
  type ConnectionStep,
  type ConnectionWorld,
} from './connection-phase.js';

/*
 *          wanted               master ready
 *   idle ─────────► connecting ──────────────► up
 *    ▲  ▲             │    ▲                    │
 *    │  │ fatal exit  │    │ retry due          │ exit (lost): every forward on it ends
 *    │  └─────────────┤    │ (or probe ok,      ▼
 *    │                └──► backoff ◄────────────┘
 *    │                         │ unwanted
 *    ├─────────────────────────┘
 *    │ master gone (then: idle, or connect again if wanted meanwhile)
 *   stopping ◄── unwanted while a master exists
 *
 *   Interactive: connecting ──exit──► idle (a person's login is needed); up ──exit──►
 *   connecting (one fresh login); a person at a stale prompt: stopping, then connecting.
 */

export function nextConnection(c: Connection, ev: ConnectionEvent, rules: ConnectionRules, world: ConnectionWorld): ConnectionStep {
  const step = transition(c, ev, rules, world);
  if (step.connection === c) return step;
  const changed = connectionState(step.connection.phase, c.interactive) !== connectionState(c.phase, c.interactive) || connectionPid(step.connection.phase) !== connectionPid(c.phase);
  const connection = changed ? { ...step.connection, since: world.now } : step.connection;
  return { connection, effects: changed ? [...step.effects, { type: 'announce' }] : step.effects };
}

const CLOSED: Failure = { reason: 'signal', retry: true, probe: null, message: 'the shared connection was closed' };

const UNRESPONSIVE: Failure = { reason: 'timeout', retry: true, probe: null, message: 'the shared connection\'s ssh stopped answering on its control socket (stopped or hung); it was ended' };

const same = (c: Connection): ConnectionStep => ({ connection: c, effects: [] });

function transition(c: Connection, ev: ConnectionEvent, rules: ConnectionRules, world: ConnectionWorld): ConnectionStep {
  switch (ev.type) {
    case 'wanted':
      return onWanted(c, ev.now);
    case 'unwanted':
      return onUnwanted(c);
    case 'spawned': {
      const p = c.phase;
      if (p.id !== 'connecting' || p.attempt !== ev.attempt || p.pid !== null) return same(c);
      // No start timeout for a person's login: they take the time they need (sshd's LoginGraceTime bounds it).
      const effects: ConnectionEffect[] =
        ev.pid === null || c.interactive ? [] : [{ type: 'timer', token: p.attempt, at: world.now + rules.startTimeoutMs, event: { type: 'start-timeout', attempt: p.attempt } }];
      return { connection: { ...c, lastSpawnAt: world.now, phase: { ...p, pid: ev.pid } }, effects };
    }
    case 'ready': {
      const p = c.phase;
      if (p.id !== 'connecting' || p.attempt !== ev.attempt || p.pid === null || p.ending !== null) return same(c);
      return {
        connection: { ...c, counters: onEstablished(c.counters), lastFailure: null, phase: { id: 'up', attempt: p.attempt, pid: p.pid, since: world.now, ending: null } },
        effects: [{ type: 'cancel', token: p.attempt }, { type: 'opened' }],
      };
    }
    case 'start-timeout': {
      const p = c.phase;
      if (p.id !== 'connecting' || p.attempt !== ev.attempt || p.pid === null || p.ending !== null) return same(c);
      const ending: Failure = { reason: 'start_timeout', retry: true, probe: null, message: `ssh did not log in to the shared connection within ${Math.round(rules.startTimeoutMs / 1000)} s` };
      return { connection: { ...c, phase: { ...p, ending } }, effects: [{ type: 'cancel', token: p.attempt }, { type: 'terminate', attempt: p.attempt }] };
    }
    case 'unresponsive': {
      const p = c.phase;
      if (p.id !== 'up' || p.attempt !== ev.attempt || p.ending !== null) return same(c);
      return { connection: { ...c, phase: { ...p, ending: UNRESPONSIVE } }, effects: [{ type: 'terminate', attempt: p.attempt }] };
    }
    case 'exited':
      return onExited(c, ev, rules, world);
    case 'retry-due': {
      const p = c.phase;
      if (p.id !== 'backoff' || p.wait !== ev.wait) return same(c);
      return connect(c, [{ type: 'cancel', token: p.wait }]);
    }
    case 'probe-result':
      return onProbeResult(c, ev, rules, world);
    case 'login':
      return onLogin(c, world);
    default:
      return unreachable(ev, 'connection event');
  }
}

function connect(c: Connection, first: ConnectionEffect[] = []): ConnectionStep {
  const attempt = c.seq + 1;
  return { connection: { ...c, seq: attempt, phase: { id: 'connecting', attempt, pid: null, ending: null } }, effects: [...first, { type: 'spawn', attempt }] };
}

function onWanted(c: Connection, now: boolean): ConnectionStep {
  const p = c.phase;
  switch (p.id) {
    case 'idle':
      return connect({ ...c, counters: FRESH_COUNTERS });
    case 'backoff':
      return now ? connect(c, [{ type: 'cancel', token: p.wait }]) : same(c);
    case 'stopping':
      return p.reconnect ? same(c) : { connection: { ...c, phase: { ...p, reconnect: true } }, effects: [] };
    case 'connecting':
    case 'up':
      return same(c);
    default:
      return unreachable(p, 'connection phase');
  }
}

function onUnwanted(c: Connection): ConnectionStep {
  const p = c.phase;
  switch (p.id) {
    case 'idle':
      return same(c);
    case 'backoff':
      return { connection: { ...c, phase: { id: 'idle' } }, effects: [{ type: 'cancel', token: p.wait }] };
    case 'connecting':
      if (p.pid === null) return { connection: { ...c, phase: { id: 'idle' } }, effects: [{ type: 'cancel', token: p.attempt }] };
      return stopMaster(c, p.attempt, p.pid);
    case 'up':
      return stopMaster(c, p.attempt, p.pid);
    case 'stopping':
      return p.reconnect ? { connection: { ...c, phase: { ...p, reconnect: false } }, effects: [] } : same(c);
    default:
      return unreachable(p, 'connection phase');
  }
}

function stopMaster(c: Connection, attempt: number, pid: number | null): ConnectionStep {
  return {
    connection: { ...c, phase: { id: 'stopping', attempt, pid, reconnect: false } },
    effects: [
      { type: 'cancel', token: attempt },
      { type: 'terminate', attempt },
    ],
  };
}

function onExited(c: Connection, ev: Extract<ConnectionEvent, { type: 'exited' }>, rules: ConnectionRules, world: ConnectionWorld): ConnectionStep {
  const p = c.phase;
  switch (p.id) {
    case 'connecting':
    case 'up': {
      if (p.attempt !== ev.attempt) return same(c);
      const failure = p.ending ?? ev.failure;
      const effects: ConnectionEffect[] = [
        { type: 'cancel', token: p.attempt },
        { type: 'note', text: `shared connection ended: ${failure.message}` },
        { type: 'lost', failure, exit: ev.exit },
      ];
      const ended: Connection = { ...c, lastFailure: failure };
      // What a retry will not fix ends every tunnel on it as FAILED; they leave, and
      // the connection rests until one is started again.
      if (!failure.retry) return { connection: { ...ended, phase: { id: 'idle' } }, effects };
      // SPEC §13: never a loop of logins that need a person. Lost once up: one fresh
      // login, which the tunnels (each gone back to AUTH_REQUIRED) wait for together;
      // ended before a login: rest until a person asks.
      if (c.interactive) return p.id === 'up' ? connect(ended, effects) : { connection: { ...ended, phase: { id: 'idle' } }, effects };
      const probe = failure.probe === 'ssh-port' ? ev.probe : null;
      const retry = enterBackoff(c, p.id === 'up' ? world.now - p.since : null, failure, probe, rules, world);
      return { connection: { ...ended, seq: retry.seq, counters: retry.counters, phase: retry.phase }, effects: [...effects, ...retry.effects] };
    }
    case 'stopping': {
      if (p.attempt !== ev.attempt) return same(c);
      const gone: Connection = { ...c, phase: { id: 'idle' } };
      const note: ConnectionEffect = { type: 'note', text: 'shared connection closed' };
      // Forwards asked for meanwhile wait for the next master.
      if (p.reconnect) return connect({ ...gone, counters: FRESH_COUNTERS }, [note]);
      return { connection: gone, effects: [note, { type: 'lost', failure: CLOSED, exit: ev.exit }] };
    }
    case 'idle':
    case 'backoff':
      return same(c);
    default:
      return unreachable(p, 'connection phase');
  }
}

/** A person is at the terminal: a prompt older than FRESH_PROMPT_MS is replaced by a fresh login (see effects/retry-wait.ts). */
function onLogin(c: Connection, world: ConnectionWorld): ConnectionStep {
  const p = c.phase;
  if (!c.interactive || p.id !== 'connecting' || p.pid === null || p.ending !== null) return same(c);
  if (c.lastSpawnAt === null || world.now - c.lastSpawnAt < FRESH_PROMPT_MS) return same(c);
  return { connection: { ...c, phase: { id: 'stopping', attempt: p.attempt, pid: p.pid, reconnect: true } }, effects: [{ type: 'terminate', attempt: p.attempt }] };
}

/** A probe's answer during a backoff (effects/retry-wait.ts). */
function onProbeResult(c: Connection, ev: Extract<ConnectionEvent, { type: 'probe-result' }>, rules: ConnectionRules, world: ConnectionWorld): ConnectionStep {
  const p = c.phase;
  if (p.id !== 'backoff' || p.wait !== ev.wait || p.probe === null) return same(c);
  const outcome = afterProbe(p, p.probe, ev.ok, c.lastSpawnAt, rules, world);
  switch (outcome.kind) {
    case 'same':
      return same(c);
    case 'retry':
      return connect(c, [{ type: 'cancel', token: p.wait }]);
    case 'wait':
      return { connection: outcome.until === p.until ? c : { ...c, phase: { ...p, until: outcome.until } }, effects: outcome.effects };
    default:
      return unreachable(outcome, 'probe outcome');
  }
}

// The vocabulary of a shared connection's lifecycle (connection-lifecycle.ts): its
// phases, the events and effects of its transitions, what they depend on, and what a
// phase shows (state, pid, what a tunnel asking for a forward gets). Types and pure views only.
import type { ConnectionRecord } from '../../tunnel/status.js';
import { unreachable } from '../../kernel/unreachable.js';
import { FRESH_COUNTERS, type BackoffPolicy, type RetryCounters } from '../backoff.js';
import type { Failure } from '../process/ssh-exit-classify.js';
import type { ProbeTarget } from '../health/probe.js';
import type { TokenEffect } from '../effects/effects.js';

export type ConnectionPhase =
  | { id: 'idle' }
  /** `pid` is null until the spawn slot was granted and ssh started; `ending`: timed out, being ended. */
  | { id: 'connecting'; attempt: number; pid: number | null; ending: Failure | null }
  /** `ending`: found unresponsive (its control socket does not answer), being ended. */
  | { id: 'up'; attempt: number; pid: number | null; since: number; ending: Failure | null }
  | { id: 'backoff'; wait: number; until: number; failure: Failure; probe: ProbeTarget | null }
  /** TERM sent; `reconnect`: wanted again meanwhile, connect once the master is gone. */
  | { id: 'stopping'; attempt: number; pid: number | null; reconnect: boolean };

export interface Connection {
  phase: ConnectionPhase;
  /** Logs in through a person (a pseudo-terminal, no BatchMode): constant for a connection. */
  interactive: boolean;
  seq: number;
  counters: RetryCounters;
  lastSpawnAt: number | null;
  /** Why the last master ended (null before any, or after one came up). */
  lastFailure: Failure | null;
  since: number;
}

export type ConnectionEvent =
  /** At least one tunnel wants the connection (again). `now`: a person asked, do not sleep out a backoff. */
  | { type: 'wanted'; now: boolean }
  /** No tunnel wants it any more. */
  | { type: 'unwanted' }
  | { type: 'spawned'; attempt: number; pid: number | null }
  /** The master logged in and listens on its control socket. */
  | { type: 'ready'; attempt: number }
  | { type: 'start-timeout'; attempt: number }
  /** An `ssh -O` to the master got no answer in time: a stopped (SIGSTOP) or wedged master serves nobody. */
  | { type: 'unresponsive'; attempt: number }
  | { type: 'exited'; attempt: number; exit: MasterExit; failure: Failure; probe: ProbeTarget | null }
  | { type: 'retry-due'; wait: number }
  | { type: 'probe-result'; wait: number; ok: boolean }
  /** A person attached a terminal to an interactive connection's login. */
  | { type: 'login' };

/** How the master ended. */
export interface MasterExit {
  code: number | null;
  signal: string | null;
}

export type ConnectionTimerEvent = Extract<ConnectionEvent, { type: 'start-timeout' | 'retry-due' }>;

export type ConnectionEffect =
  /** Remove a stale control socket, wait for the host's spawn slot, start the master; report `spawned`, `ready`, `exited`. */
  | { type: 'spawn'; attempt: number }
  /** The master is ready: add every forward waiting for it; tunnels backing off because of this connection try again now. */
  | { type: 'opened' }
  /** The master is gone (or never came up): every forward on it or waiting for it ends with `failure`. */
  | { type: 'lost'; failure: Failure; exit: MasterExit | null }
  | { type: 'note'; text: string }
  | { type: 'announce' }
  | TokenEffect<ConnectionTimerEvent>;

/** The effects the connection's runner performs itself (the rest: effects/effect-runner.ts). */
export type OwnConnectionEffect = Exclude<ConnectionEffect, TokenEffect<ConnectionTimerEvent>>;

export interface ConnectionRules {
  policy: BackoffPolicy;
  unprobedCapMs: number;
  probeIntervalMs: number;
  startTimeoutMs: number;
}

export type { World as ConnectionWorld } from '../effects/effects.js';

export interface ConnectionStep {
  connection: Connection;
  effects: ConnectionEffect[];
}

/** The `state` of a status record's `connection` field. */
export type ConnectionState = ConnectionRecord['state'];

export function initialConnection(now: number, interactive = false): Connection {
  return { phase: { id: 'idle' }, interactive, seq: 0, counters: FRESH_COUNTERS, lastSpawnAt: null, lastFailure: null, since: now };
}

/** `interactive`: a connecting master waits for a person's login (its tunnels wait for that one login). */
export function connectionState(phase: ConnectionPhase, interactive = false): ConnectionState {
  switch (phase.id) {
    case 'idle':
      return 'down';
    case 'connecting':
      return interactive ? 'awaiting_login' : 'connecting';
    case 'up':
      return 'up';
    case 'backoff':
      return 'retrying';
    case 'stopping':
      return 'stopping';
    default:
      return unreachable(phase, 'connection phase');
  }
}

/** The master's pid, while one exists. */
export function connectionPid(phase: ConnectionPhase): number | null {
  switch (phase.id) {
    case 'connecting':
    case 'up':
    case 'stopping':
      return phase.pid;
    case 'idle':
    case 'backoff':
      return null;
    default:
      return unreachable(phase, 'connection phase');
  }
}

/** What a tunnel that asks for a forward now gets: wait for the master, add at once, or the cause it is down. */
export function forwardVerdict(c: Connection): { kind: 'wait' } | { kind: 'add' } | { kind: 'down'; failure: Failure | null } {
  switch (c.phase.id) {
    case 'up':
      return { kind: 'add' };
    case 'idle':
      // After a failure no retry fixes, or a login that ended without a person, only a
      // start or a person (retryNow) tries again.
      return c.lastFailure !== null && (!c.lastFailure.retry || c.interactive) ? { kind: 'down', failure: c.lastFailure } : { kind: 'wait' };
    case 'connecting':
    case 'stopping':
      return { kind: 'wait' };
    case 'backoff':
      return { kind: 'down', failure: c.phase.failure };
    default:
      return unreachable(c.phase, 'connection phase');
  }
}

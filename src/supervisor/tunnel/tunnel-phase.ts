// The vocabulary of one tunnel's lifecycle (lifecycle.ts): its phases, the events and
// effects of its transitions, what they depend on, and what a phase shows (the status,
// the pid, whether a child exists). Types and pure views only.
import type { LastExit, TunnelState } from '../../tunnel/status.js';
import { unreachable } from '../../kernel/unreachable.js';
import { FRESH_COUNTERS, type BackoffPolicy, type RetryCounters } from '../backoff.js';
import type { Failure } from '../process/ssh-exit-classify.js';
import type { ProbeTarget } from '../health/probe.js';
import type { TokenEffect } from '../effects/effects.js';

/** How ssh is spawned: `batch` without a terminal (BatchMode), `pty` in a pseudo-terminal for a person. */
export type SpawnMode = 'batch' | 'pty';

/** What follows once the child being stopped is gone. */
export type AfterStop = 'stop' | 'start' | 'restart';

export type Phase =
  | { id: 'stopped' }
  /** `pid` is null until the attempt got its host's spawn slot and ssh was started. `ending`: timed out, being ended. */
  | { id: 'starting'; attempt: number; pid: number | null; ending: Failure | null }
  | { id: 'running'; attempt: number; pid: number | null; since: number }
  /**
   * `probe`: what to watch for the fault's end (null: wait it out). `until` null: the
   * fault is its shared connection's, whose backoff alone tries again (it kicks the
   * tunnel with `retry-due` once it is up): no timer, no probe, no attempt of its own.
   */
  | { id: 'backoff'; wait: number; until: number | null; failure: Failure; probe: ProbeTarget | null }
  | { id: 'failed'; failure: Failure }
  /** TERM sent (KILL follows after the grace period); `then` says what comes once the child is gone. */
  | { id: 'stopping'; attempt: number; pid: number | null; then: AfterStop }
  /** Interactive: ssh runs in a pseudo-terminal and waits for a person to log in. */
  | { id: 'awaiting_login'; attempt: number; pid: number | null }
  /** Interactive: no ssh; the last login ended without a forward. A start spawns a fresh one. */
  | { id: 'login_needed' };

/** Everything the status record shows, and what the next backoff depends on. */
export interface Tunnel {
  phase: Phase;
  /** The last token handed out (attempts and waits). */
  seq: number;
  counters: RetryCounters;
  lastSpawnAt: number | null;
  restarts: number;
  lastExit: LastExit | null;
  lastError: string | null;
  /** When the public status last changed (epoch ms). */
  since: number;
}

export type Event =
  /** `restart`: counted in `restarts` (a config change, not a user's start). */
  | { type: 'start'; restart: boolean }
  | { type: 'stop' }
  /** Stop then start, without passing through STOPPED: POST /restart, a failing health check, a changed spec. */
  | { type: 'restart' }
  | { type: 'spawned'; attempt: number; pid: number | null }
  | { type: 'established'; attempt: number }
  | { type: 'start-timeout'; attempt: number }
  /**
   * The attempt's child is gone; `failure` is how its output reads (classify.ts), `probe` what would watch that fault's end.
   * `byConnection`: a shared forward ended because its connection is down; the connection's backoff owns the retry.
   */
  | { type: 'exited'; attempt: number; exit: { code: number | null; signal: string | null }; failure: Failure; probe: ProbeTarget | null; byConnection?: boolean }
  | { type: 'retry-due'; wait: number }
  | { type: 'probe-result'; wait: number; ok: boolean }
  /** A person attached a terminal to an interactive tunnel's login. */
  | { type: 'login' };

/** Events that fire from a timer. */
export type TimerEvent = Extract<Event, { type: 'start-timeout' | 'retry-due' }>;

export type Effect =
  /** Start ssh for this attempt (batch: once its host's spawn slot is free) and report `spawned`, lines, `exited`. */
  | { type: 'spawn'; attempt: number; mode: SpawnMode }
  /** A line of our own in the tunnel's log. */
  | { type: 'note'; text: string }
  /** Publish the status record (the runner drops an unchanged one). */
  | { type: 'announce' }
  | TokenEffect<TimerEvent>;

/** The effects the tunnel's runner performs itself (the rest: effects/effect-runner.ts). */
export type OwnEffect = Exclude<Effect, TokenEffect<TimerEvent>>;

/** What the runner knows that the transitions need; constant between events. */
export interface Rules {
  interactive: boolean;
  policy: BackoffPolicy;
  /** Backoff cap for faults no probe can watch, so that their end is noticed within the recovery bound. */
  unprobedCapMs: number;
  probeIntervalMs: number;
  /** Kill and retry a batch attempt whose forward is not established by then. */
  startTimeoutMs: number;
}

/** The moment of the event and a source of jitter. */
export type { World } from '../effects/effects.js';

export interface Step {
  tunnel: Tunnel;
  effects: Effect[];
}

export function initialTunnel(now: number): Tunnel {
  return { phase: { id: 'stopped' }, seq: 0, counters: FRESH_COUNTERS, lastSpawnAt: null, restarts: 0, lastExit: null, lastError: null, since: now };
}

/** The status the API shows. A stop shows STOPPED at once; a restart never does. */
export function publicStatus(phase: Phase, interactive: boolean): TunnelState {
  switch (phase.id) {
    case 'stopped':
      return 'STOPPED';
    case 'starting':
      return 'STARTING';
    case 'running':
      return 'RUNNING';
    case 'backoff':
      return 'RETRYING';
    case 'failed':
      return 'FAILED';
    case 'stopping':
      if (phase.then === 'stop') return 'STOPPED';
      return interactive ? 'AUTH_REQUIRED' : 'STARTING';
    case 'awaiting_login':
    case 'login_needed':
      return 'AUTH_REQUIRED';
    default:
      return unreachable(phase, 'phase');
  }
}

/** The pid of the live child, if any. */
export function pidOf(phase: Phase): number | null {
  switch (phase.id) {
    case 'starting':
    case 'running':
    case 'stopping':
    case 'awaiting_login':
      return phase.pid;
    case 'stopped':
    case 'backoff':
    case 'failed':
    case 'login_needed':
      return null;
    default:
      return unreachable(phase, 'phase');
  }
}

/** True while a child exists or is about to (a config change then restarts the tunnel). */
export function isActive(phase: Phase): boolean {
  switch (phase.id) {
    case 'starting':
    case 'running':
    case 'backoff':
    case 'stopping':
    case 'awaiting_login':
      return true;
    case 'stopped':
    case 'failed':
    case 'login_needed':
      return false;
    default:
      return unreachable(phase, 'phase');
  }
}

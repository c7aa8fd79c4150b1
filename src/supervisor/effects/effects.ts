// The effects every lifecycle of the supervisor (the tunnel's, tunnel/tunnel-lifecycle.ts,
// and the shared connection's, connection/connection-lifecycle.ts) hands its shell, the
// same in both, and what a probe reports back: performed by one runner
// (effect-runner.ts). Types only.
import type { ProbeTarget } from '../health/probe.js';

/** The lifecycle's clock reading and source of jitter at an event. */
export interface World {
  now: number;
  random(): number;
}

/** Effects on tokens and children, the same for every lifecycle; `T`: its timer events. */
export type TokenEffect<T> =
  /** End the attempt's child: TERM, then KILL after the grace period. Its `exited` follows. */
  | { type: 'terminate'; attempt: number }
  /** Deliver `event` at `at` unless `token` is cancelled first. */
  | { type: 'timer'; token: number; at: number; event: T }
  /** At `at`, check whether the fault ended; report `probe-result` unless `token` is cancelled. */
  | { type: 'probe'; token: number; at: number; target: ProbeTarget }
  /** Cancel the token's timers, probes and spawn-slot wait (and free a held slot). */
  | { type: 'cancel'; token: number };

/** What a probe effect reports: whether the fault watched during wait `wait` has ended. */
export interface ProbeResult {
  type: 'probe-result';
  wait: number;
  ok: boolean;
}

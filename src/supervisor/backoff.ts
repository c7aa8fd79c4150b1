// When to try again after a failure: capped exponential backoff with jitter that never
// gives up. Pure, so it is tested with virtual time.
//
// Two counters, because the bounds differ: `failures` counts attempts in a row that
// never reached RUNNING (a server that is down: the waits grow to the cap), `flaps`
// counts RUNNING tunnels that died before staying up for `stableMs` (a forward that
// keeps dropping: the waits grow too). A tunnel that was stable and dies is tried again
// at once (within the base delay), and a tunnel that reaches RUNNING starts its next
// login-failure series from the bottom.

import { unreachable } from '../kernel/unreachable.js';

export interface BackoffPolicy {
  /** Delay after the first failure; later ones double. */
  baseMs: number;
  /** Longest wait between two ssh login attempts. */
  capMs: number;
  /** Running this long without a fault forgets earlier flaps. */
  stableMs: number;
  /** At most one ssh login per this interval, probes or not. */
  minLoginIntervalMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: 500,
  capMs: 10_000,
  stableMs: 30_000,
  minLoginIntervalMs: 1_000,
};

export interface RetryCounters {
  failures: number;
  flaps: number;
}

export const FRESH_COUNTERS: RetryCounters = { failures: 0, flaps: 0 };

/**
 * The n-th delay (n from 0): base·2ⁿ capped, with jitter drawn from its upper half so
 * that tunnels failing together spread out but never wait longer than the cap.
 */
export function backoffDelay(n: number, random: () => number, policy: BackoffPolicy = DEFAULT_BACKOFF, capMs = policy.capMs): number {
  const exp = Math.min(capMs, policy.baseMs * 2 ** Math.min(n, 30));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/** The forward was established: the next login-failure series starts from the bottom. */
export function onEstablished(c: RetryCounters): RetryCounters {
  return { failures: 0, flaps: c.flaps };
}

export type Setback =
  /** ssh ended (or timed out) before the forward was established. */
  | { kind: 'start-failed' }
  /** ssh ended after RUNNING for `ranMs`. */
  | { kind: 'lost'; ranMs: number };

export interface RetryPlan {
  counters: RetryCounters;
  /** Epoch ms of the next attempt. */
  at: number;
  delayMs: number;
}

/**
 * Plans the next attempt after a setback. `lastSpawnAt` keeps logins at least
 * `minLoginIntervalMs` apart; `capMs` may be lowered for faults no probe can watch.
 */
export function planRetry(
  c: RetryCounters,
  setback: Setback,
  now: number,
  lastSpawnAt: number | null,
  random: () => number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  capMs = policy.capMs,
): RetryPlan {
  let n: number;
  let counters: RetryCounters;
  switch (setback.kind) {
    case 'start-failed':
      n = c.failures + c.flaps;
      counters = { failures: c.failures + 1, flaps: c.flaps };
      break;
    case 'lost': {
      const flaps = setback.ranMs >= policy.stableMs ? 0 : c.flaps;
      n = flaps;
      counters = { failures: 0, flaps: flaps + 1 };
      break;
    }
    default:
      return unreachable(setback, 'setback');
  }
  const delayMs = backoffDelay(n, random, policy, capMs);
  const earliest = lastSpawnAt === null ? now : lastSpawnAt + policy.minLoginIntervalMs;
  return { counters, at: Math.max(now + delayMs, earliest), delayMs };
}

/** The earliest moment a probe that saw the fault end may trigger a login. */
export function earliestLogin(now: number, lastSpawnAt: number | null, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  return lastSpawnAt === null ? now : Math.max(now, lastSpawnAt + policy.minLoginIntervalMs);
}

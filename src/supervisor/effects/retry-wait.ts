// The retry transitions both lifecycles share (the tunnel's, tunnel/tunnel-lifecycle.ts,
// and the shared connection's, connection/connection-lifecycle.ts): entering a backoff
// after a retryable failure, with its timer and the probe that watches for the fault's
// end, and what a probe's answer does to it. Pure: no I/O, no clock.
import { earliestLogin, planRetry, type BackoffPolicy, type RetryCounters } from '../backoff.js';
import type { Failure } from '../process/ssh-exit-classify.js';
import type { ProbeTarget } from '../health/probe.js';
import type { TokenEffect, World } from './effects.js';

/**
 * sshd drops a login left waiting past its LoginGraceTime (120 s by default), and ssh,
 * blocked on its terminal, says nothing until the code is typed — and wasted. A person
 * who comes to a prompt older than this gets a fresh ssh instead.
 */
export const FRESH_PROMPT_MS = 60_000;

/** A backoff: wait `wait` ends at `until`; `probe` watches for the fault's end (null: wait it out). */
export interface RetryWait {
  id: 'backoff';
  wait: number;
  until: number;
  failure: Failure;
  probe: ProbeTarget | null;
}

/** What a lifecycle keeps for its retries. */
export interface Retrying {
  /** The last token handed out. */
  seq: number;
  counters: RetryCounters;
  lastSpawnAt: number | null;
}

export interface RetryRules {
  policy: BackoffPolicy;
  /** Backoff cap for faults no probe can watch, so that their end is noticed within the recovery bound. */
  unprobedCapMs: number;
  probeIntervalMs: number;
}

type RetryDue = { type: 'retry-due'; wait: number };

/** Plans the next login after a retryable failure; `ranMs` is null when it never came up. */
export function enterBackoff(
  s: Retrying,
  ranMs: number | null,
  failure: Failure,
  probe: ProbeTarget | null,
  rules: RetryRules,
  world: World,
): { seq: number; counters: RetryCounters; phase: RetryWait; effects: TokenEffect<RetryDue>[] } {
  const { policy } = rules;
  const plan = planRetry(
    s.counters,
    ranMs === null ? { kind: 'start-failed' } : { kind: 'lost', ranMs },
    world.now,
    s.lastSpawnAt,
    () => world.random(),
    policy,
    probe !== null ? policy.capMs : Math.min(policy.capMs, rules.unprobedCapMs),
  );
  const wait = s.seq + 1;
  const effects: TokenEffect<RetryDue>[] = [{ type: 'timer', token: wait, at: plan.at, event: { type: 'retry-due', wait } }];
  if (probe !== null) effects.push({ type: 'probe', token: wait, at: world.now, target: probe });
  return { seq: wait, counters: plan.counters, phase: { id: 'backoff', wait, until: plan.at, failure, probe }, effects };
}

/** What a probe's answer does to a backoff. */
export type ProbeOutcome =
  /** Nothing: the backoff's own timer comes first. */
  | { kind: 'same' }
  /** The fault is over and a login is allowed now: try at once. */
  | { kind: 'retry' }
  /** Probe again later, or try sooner than planned: the backoff now ends at `until`. */
  | { kind: 'wait'; until: number; effects: TokenEffect<RetryDue>[] };

/**
 * While backing off, the probe checks every interval whether the fault has ended; once
 * it has, the login comes at once (one login per `minLoginIntervalMs` at most).
 */
export function afterProbe(p: Pick<RetryWait, 'wait' | 'until'>, target: ProbeTarget, ok: boolean, lastSpawnAt: number | null, rules: RetryRules, world: World): ProbeOutcome {
  if (!ok) {
    const at = world.now + rules.probeIntervalMs;
    return at < p.until ? { kind: 'wait', until: p.until, effects: [{ type: 'probe', token: p.wait, at, target }] } : { kind: 'same' };
  }
  const at = earliestLogin(world.now, lastSpawnAt, rules.policy);
  if (at <= world.now) return { kind: 'retry' };
  if (at >= p.until) return { kind: 'same' };
  return { kind: 'wait', until: at, effects: [{ type: 'timer', token: p.wait, at, event: { type: 'retry-due', wait: p.wait } }] };
}

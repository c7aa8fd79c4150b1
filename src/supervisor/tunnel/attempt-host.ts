// What one attempt (an ssh of its own, own-attempt.ts, or a forward on a shared
// connection, shared-attempt.ts) needs from its tunnel's runner: the plan of the
// moment, where ssh's lines and our notes go, the lifecycle's events, and the table
// of live children through which the runner terminates them and awaits their end.
import type { Event } from './tunnel-phase.js';
import type { SshChild } from '../process/ssh-process.js';
import type { TunnelPlan } from '../plan/tunnel-plan.js';

/** A spawned child; `gone` resolves once its exit went through the lifecycle. */
export interface Live {
  child: SshChild;
  gone: Promise<void>;
}

export interface AttemptHost {
  /** The plan the next spawn uses (it may change while an attempt waits for its slot). */
  plan(): TunnelPlan;
  /** One of ssh's lines for `attempt`: to the tunnel's log, the line watcher and the health watch. */
  line(attempt: number, line: string): void;
  /** A line of our own in the tunnel's log. */
  note(text: string): void;
  dispatch(ev: Event): void;
  readonly children: Map<number, Live>;
}

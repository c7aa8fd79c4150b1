// The one shell mechanism of the supervisor's pure lifecycles (the tunnel's runner,
// tunnel/tunnel-runner.ts, and the shared connection's, connection/connection.ts): events
// go through the transition one at a time (an event raised by an effect waits its turn),
// and the effects that are the same for both — timers, probes, cancels, terminating a
// child — are performed here, by token; the rest are handed back to the shell.
import { unreachable } from '../../kernel/unreachable.js';
import type { Clock } from '../clock.js';
import type { Probe } from '../health/probe.js';
import { terminate, type SshChild } from '../process/ssh-process.js';
import { EffectTokens } from './effect-tokens.js';
import type { ProbeResult, TokenEffect, World } from './effects.js';

/** A lifecycle as its shell drives it. `E`: its events, `T`: those a timer delivers, `Own`: its effects not in TokenEffect. */
export interface Machine<S, E, T extends E, Own> {
  step(state: S, event: E, world: World): { state: S; effects: (TokenEffect<T> | Own)[] };
  /** After each transition, before its effects. */
  stepped?(state: S): void;
  /** An effect of this lifecycle's own (spawn, announce…). */
  perform(effect: Own): void;
  /** Once the queue is drained: what follows from the state the events left. */
  settled?(state: S): void;
}

/** What performing the shared effects takes. */
export interface EffectWorld {
  clock: Clock;
  probe: Probe;
  /** SIGTERM, then SIGKILL after this long. */
  graceMs: number;
  /** The live child of an attempt, to terminate. */
  child(attempt: number): SshChild | undefined;
}

const TOKEN_EFFECTS: ReadonlySet<string> = new Set(['terminate', 'timer', 'probe', 'cancel']);

export class EffectRunner<S, E extends { type: string }, T extends E, Own extends { type: string }> {
  /** Cancels the timers, probes and spawn-slot wait of each live token (attempt or wait). */
  readonly tokens = new EffectTokens();
  private readonly queue: E[] = [];
  private draining = false;

  constructor(
    private current: S,
    private readonly machine: Machine<S, E, T, Own>,
    private readonly world: EffectWorld,
    /** How this lifecycle names a probe's report (its `probe-result` event). */
    private readonly probed: (result: ProbeResult) => E,
  ) {}

  get state(): S {
    return this.current;
  }

  /** Runs `ev` and whatever its effects raise through the transition, then settles. */
  dispatch(ev: E): void {
    this.queue.push(ev);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) {
        const { clock } = this.world;
        const step = this.machine.step(this.current, e, { now: clock.now(), random: () => clock.random() });
        this.current = step.state;
        this.machine.stepped?.(this.current);
        for (const effect of step.effects) {
          if (isTokenEffect(effect)) this.performToken(effect);
          else this.machine.perform(effect);
        }
      }
    } finally {
      this.draining = false;
    }
    this.machine.settled?.(this.current);
  }

  private performToken(e: TokenEffect<T>): void {
    const { clock, graceMs, probe } = this.world;
    switch (e.type) {
      case 'terminate': {
        const child = this.world.child(e.attempt);
        if (child !== undefined) void terminate(child, graceMs, clock);
        return;
      }
      case 'timer':
        this.tokens.timer(clock, e.token, e.at, () => this.dispatch(e.event));
        return;
      case 'probe':
        this.tokens.probe(clock, probe, e.token, e.at, e.target, (ok) => this.dispatch(this.probed({ type: 'probe-result', wait: e.token, ok })));
        return;
      case 'cancel':
        this.tokens.cancel(e.token);
        return;
      default:
        unreachable(e, 'token effect');
    }
  }
}

function isTokenEffect<T, Own extends { type: string }>(e: TokenEffect<T> | Own): e is TokenEffect<T> {
  return TOKEN_EFFECTS.has(e.type);
}

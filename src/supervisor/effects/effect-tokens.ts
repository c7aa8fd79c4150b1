import type { Clock } from '../clock.js';
import type { Probe, ProbeTarget } from '../health/probe.js';

/**
 * The cancellation tokens of a pure state machine's effects (the tunnel's and the
 * connection's): each token names one piece of work (an attempt, a timer, a probe)
 * that a later `cancel` effect aborts. One AbortController per token, made on first use.
 */
export class EffectTokens {
  private readonly controllers = new Map<number, AbortController>();

  /** The signal of token `id`: aborted once `cancel(id)` runs. */
  signal(id: number): AbortSignal {
    let ctrl = this.controllers.get(id);
    if (ctrl === undefined) {
      ctrl = new AbortController();
      this.controllers.set(id, ctrl);
    }
    return ctrl.signal;
  }

  cancel(id: number): void {
    this.controllers.get(id)?.abort();
    this.controllers.delete(id);
  }

  /** A timer effect: `fire` at clock time `at`, unless token `id` is cancelled first. */
  timer(clock: Clock, id: number, at: number, fire: () => void): void {
    void clock.sleep(at - clock.now(), this.signal(id)).then((elapsed) => {
      if (elapsed) fire();
    });
  }

  /** A probe effect: at clock time `at`, check `target` and report whether it is up, unless token `id` is cancelled first. */
  probe(clock: Clock, probe: Probe, id: number, at: number, target: ProbeTarget, report: (up: boolean) => void): void {
    const signal = this.signal(id);
    void (async () => {
      if (!(await clock.sleep(at - clock.now(), signal))) return;
      const up = await probe(target, signal);
      if (!signal.aborted) report(up);
    })();
  }
}

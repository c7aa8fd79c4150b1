/**
 * How a relay's work ends: through one `AbortSignal`. A relay that ends before its
 * provider finished (the client left, the timer ran out, the request goes on to the
 * next target, the answer broke off) aborts it; the signal's one listener tells the
 * relay's hearer, which stops the timer, ends the upstream exchange and drops the
 * decoder. A relay that completes has nothing to cancel, only its timer to stop: it
 * releases the signal, which tells the hearer directly, not cancelled (an aborted
 * signal could not serve the next relay).
 *
 * Pooled, because on Node 20 making an `AbortSignal` is the dear part: about 2.4 µs
 * and an object in dictionary mode for the collector (an `EventTarget` given another
 * prototype), which measured 1.13× the proxy's CPU per request with nothing listening
 * (BENCHMARKS.md). A signal that was never aborted is as good as new, so a relay that
 * completes gives it back and the next one takes it; an aborted signal is spent and
 * dropped. Its listener is added once, when it is made, and calls whoever holds it
 * now, so a relay adds and removes no listener either.
 */

import type { RelayEffect } from './relay-stages.js';

/** What a relay started and must end with it: told exactly once per relay. */
export interface RelayHearer {
  /** `cancelled`: the signal was aborted (the relay ended before its provider finished); false: the relay completed. */
  relayEnded(cancelled: boolean): void;
}

// Made once: an abort allocates no Error (nor the DOMException that `abort()` without a reason makes, with its stack).
const REASONS = new Map<RelayEffect, Error>();

/** Why a relay's signal is aborted: the effect that ended it early ('decline', 'cancel', 'error_answer', 'error_event'). */
export function abortReason(effect: RelayEffect): Error {
  let reason = REASONS.get(effect);
  if (reason === undefined) {
    reason = new Error(`relay ended early: ${effect}`);
    REASONS.set(effect, reason);
  }
  return reason;
}

// Spare signals beyond what a burst of this size needs are left to the collector.
const MAX_SPARE = 256;
const spare: RelaySignal[] = [];

export class RelaySignal {
  private readonly controller = new AbortController();
  /** Who holds the signal now; null while it waits in the pool. */
  private hearer: RelayHearer | null = null;

  private constructor() {
    this.controller.signal.addEventListener('abort', () => this.hearer?.relayEnded(true), { once: true });
  }

  /** A signal for one relay, heard by `hearer` until it is aborted or released. */
  static take(hearer: RelayHearer): RelaySignal {
    const s = spare.pop() ?? new RelaySignal();
    s.hearer = hearer;
    return s;
  }

  /**
   * The relay's machine reached its end with `effect` (relay-stages.ts): one that
   * completed releases the signal, any other ended early and aborts it with the reason.
   */
  end(effect: RelayEffect): void {
    if (effect === 'complete') this.release();
    else this.abort(abortReason(effect));
  }

  /** The relay ended before its provider finished (`reason`: how). The signal is spent. */
  abort(reason: Error): void {
    this.controller.abort(reason);
    this.hearer = null;
  }

  /** The relay completed: its hearer is told (not cancelled), and the signal serves the next relay. */
  release(): void {
    const { hearer } = this;
    if (hearer === null) return;
    this.hearer = null;
    hearer.relayEnded(false);
    if (spare.length < MAX_SPARE) spare.push(this);
  }
}

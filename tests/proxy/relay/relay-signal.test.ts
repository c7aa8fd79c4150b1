/** How a relay's work ends (relay/relay-signal.ts): aborted early or released on completion, its hearer told once; only an unaborted signal is used again. */
import { describe, expect, it } from 'vitest';
import { abortReason, RelaySignal, type RelayHearer } from '../../../src/proxy/relay/relay-signal.js';

function hearer(): RelayHearer & { told: boolean[] } {
  const told: boolean[] = [];
  return { told, relayEnded: (cancelled) => void told.push(cancelled) };
}

describe('RelaySignal', () => {
  it('an abort reaches the hearer at once, through the AbortSignal, as cancelled', () => {
    const h = hearer();
    const s = RelaySignal.take(h);
    const abort = AbortController.prototype.abort;
    const reasons: unknown[] = [];
    AbortController.prototype.abort = function (this: AbortController, reason?: unknown) {
      reasons.push(reason);
      this.signal.addEventListener('abort', () => reasons.push(this.signal.reason === reason));
      abort.call(this, reason);
    };
    try {
      s.abort(abortReason('cancel'));
    } finally {
      AbortController.prototype.abort = abort;
    }
    expect(h.told).toEqual([true]);
    expect(reasons).toEqual([abortReason('cancel'), true]);
  });

  it('a release tells the hearer, not cancelled, and the next relay gets the same signal', () => {
    const first = hearer();
    const s = RelaySignal.take(first);
    s.release();
    expect(first.told).toEqual([false]);
    const second = hearer();
    expect(RelaySignal.take(second)).toBe(s);
    s.abort(abortReason('decline'));
    // The first relay's end was told once and is not told again; only the holder hears the abort.
    expect(first.told).toEqual([false]);
    expect(second.told).toEqual([true]);
  });

  it('an aborted signal is spent: released afterwards it tells no one and is not used again', () => {
    const h = hearer();
    const s = RelaySignal.take(h);
    s.abort(abortReason('error_event'));
    s.release();
    expect(h.told).toEqual([true]);
    const next = RelaySignal.take(hearer());
    expect(next).not.toBe(s);
    next.release();
  });

  it('each early end has its own reason, made once', () => {
    expect(abortReason('cancel').message).toBe('relay ended early: cancel');
    expect(abortReason('decline')).not.toBe(abortReason('cancel'));
    expect(abortReason('decline')).toBe(abortReason('decline'));
  });
});

import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, FRESH_COUNTERS, onEstablished, planRetry, type RetryCounters } from '../../../src/supervisor/backoff.js';

const top = () => 0.999999;
const bottom = () => 0;

describe('backoffDelay', () => {
  it('doubles from the base up to the cap, with jitter in the upper half', () => {
    const highs = [0, 1, 2, 3, 4, 5, 6, 20, 1000].map((n) => backoffDelay(n, top));
    expect(highs).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000, 10000, 10000]);
    const lows = [0, 1, 5, 1000].map((n) => backoffDelay(n, bottom));
    expect(lows).toEqual([250, 500, 5000, 5000]);
  });

  it('takes a lower cap for faults no probe watches', () => {
    expect(backoffDelay(10, top, DEFAULT_BACKOFF, 4000)).toBe(4000);
  });
});

describe('planRetry', () => {
  it('a server that stays down: waits grow to the cap and never stop', () => {
    let c: RetryCounters = FRESH_COUNTERS;
    let now = 0;
    let lastSpawn = 0;
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const p = planRetry(c, { kind: 'start-failed' }, now, lastSpawn, top);
      waits.push(p.at - now);
      c = p.counters;
      now = p.at;
      lastSpawn = p.at;
    }
    // The first waits are raised to one login per second.
    expect(waits).toEqual([1000, 1000, 2000, 4000, 8000, 10000, 10000, 10000, 10000, 10000, 10000, 10000]);
  });

  it('keeps logins at least a second apart, measured from the last spawn', () => {
    const p = planRetry(FRESH_COUNTERS, { kind: 'start-failed' }, 10_200, 10_000, bottom);
    expect(p.at).toBe(11_000);
  });

  it('a tunnel that was stable and dies is retried within the base delay', () => {
    const c: RetryCounters = { failures: 0, flaps: 5 };
    const p = planRetry(c, { kind: 'lost', ranMs: DEFAULT_BACKOFF.stableMs }, 100_000, 0, top);
    expect(p.at - 100_000).toBe(500);
    expect(p.counters).toEqual({ failures: 0, flaps: 1 });
  });

  it('a tunnel that reached RUNNING after failures is retried at once when it dies', () => {
    let c: RetryCounters = { failures: 6, flaps: 0 };
    c = onEstablished(c);
    const p = planRetry(c, { kind: 'lost', ranMs: 2_000 }, 100_000, 98_000, top);
    expect(p.at - 100_000).toBe(500);
  });

  it('a forward that keeps dropping soon after it is up backs off too', () => {
    let c: RetryCounters = FRESH_COUNTERS;
    const waits: number[] = [];
    let now = 0;
    for (let i = 0; i < 7; i++) {
      c = onEstablished(c);
      const p = planRetry(c, { kind: 'lost', ranMs: 2_000 }, now, now - 2_000, top);
      waits.push(p.at - now);
      c = p.counters;
      now = p.at + 2_000;
    }
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
  });

  it('login failures after a flap continue from the flap count', () => {
    const p = planRetry({ failures: 1, flaps: 2 }, { kind: 'start-failed' }, 0, null, top);
    expect(p.delayMs).toBe(4000);
    expect(p.counters).toEqual({ failures: 2, flaps: 2 });
  });
});

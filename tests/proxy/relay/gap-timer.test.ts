/** The relay's one timer (relay/gap-timer.ts), on virtual time: a flowing answer is never cut, a silent one is, a slow reader is no gap. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GapTimer } from '../../../src/proxy/relay/gap-timer.js';
import type { Exchange } from '../../../src/proxy/relay/upstream.js';

/** A client response whose side fills up on demand, and an exchange that records pause and resume. */
function fakes() {
  const res = Object.assign(new EventEmitter(), { full: false, write: vi.fn(function (this: { full: boolean }) { return !this.full; }) });
  const calls: string[] = [];
  const exchange: Exchange = { abort: () => calls.push('abort'), pause: () => calls.push('pause'), resume: () => calls.push('resume') };
  return { res, exchange, calls };
}

describe('GapTimer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fires after the timeout of silence', () => {
    const fired = vi.fn();
    new GapTimer(1000, fired);
    vi.advanceTimersByTime(999);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledOnce();
  });

  it('never cuts an answer that keeps flowing: each sign of life moves the deadline', () => {
    const fired = vi.fn();
    const timer = new GapTimer(1000, fired);
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(900);
      timer.alive();
    }
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(fired).toHaveBeenCalledOnce();
  });

  it('does not fire once stopped', () => {
    const fired = vi.fn();
    new GapTimer(1000, fired).stop();
    vi.advanceTimersByTime(10_000);
    expect(fired).not.toHaveBeenCalled();
  });

  it('pauses the provider while the client is full, and a blocked reader is not an upstream gap', () => {
    const fired = vi.fn();
    const timer = new GapTimer(1000, fired);
    const { res, exchange, calls } = fakes();
    res.full = true;
    expect(timer.write(res as unknown as ServerResponse, Buffer.from('x'), exchange)).toBe(false);
    expect(timer.write(res as unknown as ServerResponse, Buffer.from('y'), exchange)).toBe(false);
    expect(calls).toEqual(['pause']);
    vi.advanceTimersByTime(5000);
    expect(fired).not.toHaveBeenCalled();
    res.full = false;
    res.emit('drain');
    expect(calls).toEqual(['pause', 'resume']);
    vi.advanceTimersByTime(999);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1001);
    expect(fired).toHaveBeenCalledOnce();
  });
});

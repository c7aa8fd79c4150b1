import type { ServerResponse } from 'node:http';

/**
 * The proxy's own share of a request's time, told to the client in a standard
 * `Server-Timing: proxy;dur=<ms>` header and counted on `/metrics`: from the
 * request's arrival until its answer's head is written, less the time spent waiting
 * for providers' heads (every attempt's, when an alias fell back). For a stream this
 * is the time until its head; for a whole answer the body follows at once.
 *
 * Kept on the response under a symbol (as own-answer.ts marks the proxy's own answers), so that
 * whichever part writes the head (the relay, an error answer) finds it without a
 * reference passed along.
 */
const TIMING = Symbol('proxyTiming');

interface Timing {
  readonly started: number;
  /** Milliseconds spent waiting for providers' heads, finished waits only. */
  upstreamMs: number;
  /** When the wait under way began; -1: none under way. */
  waitingSince: number;
  /** The figure sent in the header (milliseconds); -1: no head written yet. */
  overheadMs: number;
}

type Timed = ServerResponse & { [TIMING]?: Timing };

/** The request has arrived: its clock starts. */
export function startTiming(res: ServerResponse): void {
  (res as Timed)[TIMING] = { started: performance.now(), upstreamMs: 0, waitingSince: -1, overheadMs: -1 };
}

/** A request left for a provider: the wait for its head is not the proxy's time. */
export function upstreamWaitStarted(res: ServerResponse): void {
  const t = (res as Timed)[TIMING];
  if (t !== undefined) t.waitingSince = performance.now();
}

/** The provider's head came, or the wait ended otherwise (failure, timeout, abort). */
export function upstreamWaitEnded(res: ServerResponse): void {
  const t = (res as Timed)[TIMING];
  if (t === undefined || t.waitingSince < 0) return;
  t.upstreamMs += performance.now() - t.waitingSince;
  t.waitingSince = -1;
}

/**
 * The header's value as of now, to be written with the head (null: a response the
 * proxy does not time). Also noted for the series.
 */
export function serverTiming(res: ServerResponse): string | null {
  const t = (res as Timed)[TIMING];
  if (t === undefined) return null;
  upstreamWaitEnded(res);
  t.overheadMs = Math.max(0, performance.now() - t.started - t.upstreamMs);
  return `proxy;dur=${millis(t.overheadMs)}`;
}

/** `ms` with three decimals, as toFixed(3) writes it, for a figure that is never negative (made by hand: toFixed costs as much as the rest of the header). */
function millis(ms: number): string {
  const us = Math.round(ms * 1000);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

/** The figure sent with the head, in seconds; null when no timed head was written. */
export function overheadSeconds(res: ServerResponse): number | null {
  const t = (res as Timed)[TIMING];
  return t === undefined || t.overheadMs < 0 ? null : t.overheadMs / 1000;
}

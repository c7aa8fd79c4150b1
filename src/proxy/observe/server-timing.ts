import type { ServerResponse } from 'node:http';

/**
 * The proxy's own share of a request's time, told to the client in a standard
 * `Server-Timing: proxy;dur=<ms>` header and counted on `/metrics`: from the
 * request's arrival until its answer's head is written, less the time spent waiting
 * for providers' heads (every attempt's, when an alias fell back). For a stream this
 * is the time until its head; for a whole answer the body follows at once.
 *
 * Kept on the response under a symbol (as own-answer.ts marks the proxy's own
 * answers), so that whichever part writes the head (the relay, an error answer) finds
 * it without a reference passed along; a relay looks it up once and keeps it.
 */
const TIMING = Symbol('proxyTiming');

type Timed = ServerResponse & { [TIMING]?: Timing };

/** One request's clock. */
export class Timing {
  /** Milliseconds spent waiting for providers' heads, finished waits only. */
  private upstreamMs = 0;
  /** When the wait under way began; -1: none under way. */
  private waitingSince = -1;
  /** The figure sent in the header (milliseconds); -1: no head written yet. */
  private overheadMs = -1;

  constructor(private readonly started: number) {}

  /** A request left for a provider: the wait for its head is not the proxy's time. */
  waitStarted(): void {
    this.waitingSince = performance.now();
  }

  /** The provider's head came, or the wait ended otherwise (failure, timeout, abort). */
  waitEnded(now = performance.now()): void {
    if (this.waitingSince < 0) return;
    this.upstreamMs += now - this.waitingSince;
    this.waitingSince = -1;
  }

  /** The header's value as of now, to be written with the head; also noted for the series. */
  header(): string {
    const now = performance.now();
    this.waitEnded(now);
    this.overheadMs = Math.max(0, now - this.started - this.upstreamMs);
    return `proxy;dur=${millis(this.overheadMs)}`;
  }

  /** The figure sent with the head, in seconds; null when no head was written. */
  overheadSeconds(): number | null {
    return this.overheadMs < 0 ? null : this.overheadMs / 1000;
  }
}

/** The request arrived at `started` (performance.now()): its clock starts. */
export function startTiming(res: ServerResponse, started = performance.now()): Timing {
  const t = new Timing(started);
  (res as Timed)[TIMING] = t;
  return t;
}

/** The clock of the request `res` answers, or null for a response the proxy does not time. */
export function timingOf(res: ServerResponse): Timing | null {
  return (res as Timed)[TIMING] ?? null;
}

/** The header's value as of now (null: a response the proxy does not time). */
export function serverTiming(res: ServerResponse): string | null {
  return timingOf(res)?.header() ?? null;
}

/** `ms` with three decimals, as toFixed(3) writes it, for a figure that is never negative (made by hand: toFixed costs as much as the rest of the header). */
function millis(ms: number): string {
  const us = Math.round(ms * 1000);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

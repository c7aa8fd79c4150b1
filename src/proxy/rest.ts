/**
 * Providers resting after they asked for a pause (`Retry-After` on a 429 or 503):
 * skipped by routing until then, so a client with an alias of several targets does
 * not keep knocking at the door that just said "later".
 */
export interface Rests {
  /** Rests `prefix` as its answer's `Retry-After` says; an answer without one changes nothing. */
  note(prefix: string, retryAfter: string | undefined): void;
  /** Milliseconds `prefix` still rests; 0 when it takes requests. */
  left(prefix: string): number;
}

// A provider that asks for a day off is taken at its word for an hour at most, so a
// typo on its side cannot take it out of service for longer without anyone noticing.
export const MAX_REST_MS = 3_600_000;

/** `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when it is neither. */
export function retryAfterMs(value: string, now: number): number | null {
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const date = Date.parse(v);
  return Number.isNaN(date) || !/[A-Za-z]/.test(v) ? null : Math.max(0, date - now);
}

export function createRests(now: () => number = Date.now): Rests {
  const until = new Map<string, number>();
  return {
    note(prefix, retryAfter) {
      if (retryAfter === undefined) return;
      const ms = retryAfterMs(retryAfter, now());
      if (ms === null || ms <= 0) return;
      until.set(prefix, now() + Math.min(ms, MAX_REST_MS));
    },
    left(prefix) {
      const u = until.get(prefix);
      if (u === undefined) return 0;
      const ms = u - now();
      if (ms > 0) return ms;
      until.delete(prefix);
      return 0;
    },
  };
}

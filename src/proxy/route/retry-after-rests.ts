/**
 * Providers resting after they asked for a pause (`Retry-After` on a 429 or 5xx):
 * skipped by routing until then while another target can take the request, so a
 * client with an alias of several targets does not keep knocking at the door that just
 * said "later". Only a provider's own `Retry-After` starts a rest, never a status alone.
 */
export interface Rests {
  /**
   * Rests `prefix` as its answer's `Retry-After` says (or `Retry-After-Ms`, which wins,
   * as it does for the OpenAI clients: the rest ends when their retry comes); an answer
   * with neither changes nothing, whatever its status.
   */
  note(prefix: string, retryAfter: string | undefined, retryAfterMsHeader?: string | undefined): void;
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

/** `Retry-After-Ms`: milliseconds, a fraction allowed (OpenAI sends it beside `Retry-After`); null when it is not a number. */
function millis(value: string): number | null {
  const v = value.trim();
  return /^\d+(\.\d+)?$/.test(v) ? Number(v) : null;
}

export function createRests(now: () => number = Date.now): Rests {
  const until = new Map<string, number>();
  return {
    note(prefix, retryAfter, retryAfterMsHeader) {
      const exact = retryAfterMsHeader === undefined ? null : millis(retryAfterMsHeader);
      const ms = exact ?? (retryAfter === undefined ? null : retryAfterMs(retryAfter, now()));
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

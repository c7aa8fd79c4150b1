import { randomUUID } from 'node:crypto';

// A client's id is echoed only when it is short and plain: it goes into our logs and
// response headers, so anything that could forge a log line or a header is replaced.
const SANE = /^[A-Za-z0-9._:+=/@-]{1,128}$/;

// The counter's low part stays under 2^28: a small integer, which formats in hex
// several times faster than a larger number.
const LOW = 0x10000000;
const HIGH = 0x100000;

/**
 * Fresh ids, UUID-shaped: `base` (the first 24 characters of a UUID, its last dash
 * included) and a 48-bit counter as the last group, in two parts (`high`, 5 hex
 * digits; `low`, 7). Unique within the process by the counter and across processes by
 * a random base, at a fraction of the cost of drawing and formatting a UUID per
 * request; the text up to the low part is made again only when the low part wraps.
 */
export function requestIdCounter(base: string, high: number, low: number): () => string {
  let head = base + high.toString(16).padStart(5, '0');
  return () => {
    low = (low + 1) % LOW;
    if (low === 0) {
      high = (high + 1) % HIGH;
      head = base + high.toString(16).padStart(5, '0');
    }
    return head + low.toString(16).padStart(7, '0');
  };
}

const tail = randomUUID().slice(24);
const fresh = requestIdCounter(randomUUID().slice(0, 24), Number.parseInt(tail.slice(0, 5), 16), Number.parseInt(tail.slice(5), 16));

/** The client's `x-request-id` when it is sane, else a fresh id. */
export function pickRequestId(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SANE.test(header)) return header;
  return fresh();
}

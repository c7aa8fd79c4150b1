import { randomUUID } from 'node:crypto';

// A client's id is echoed only when it is short and plain: it goes into our logs and
// response headers, so anything that could forge a log line or a header is replaced.
const SANE = /^[A-Za-z0-9._:+=/@-]{1,128}$/;

// Fresh ids are UUID-shaped: a random UUID drawn once per process, whose last group (48
// bits) counts requests. Unique within the process by the counter and across processes
// by the random part, at a fraction of the cost of drawing and formatting one per request.
const BASE = randomUUID().slice(0, 24);
let counter = Number.parseInt(randomUUID().slice(24, 32), 16);

/** The client's `x-request-id` when it is sane, else a fresh id. */
export function pickRequestId(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SANE.test(header)) return header;
  counter = (counter + 1) % 0x1000000000000;
  return BASE + counter.toString(16).padStart(12, '0');
}

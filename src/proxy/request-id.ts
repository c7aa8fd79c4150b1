import { randomUUID } from 'node:crypto';

// A client's id is echoed only when it is short and plain: it goes into our logs and
// response headers, so anything that could forge a log line or a header is replaced.
const SANE = /^[A-Za-z0-9._:+=/@-]{1,128}$/;

/** The client's `x-request-id` when it is sane, else a fresh UUID. */
export function pickRequestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE.test(header) ? header : randomUUID();
}

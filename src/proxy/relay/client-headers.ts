import type { ServerResponse } from 'node:http';
import { ownRateHeadersKept } from '../clients/gate.js';
import type { Timing } from '../observe/server-timing.js';
import type { BodyTranslation } from './body-translation.js';
import { scrubText } from './key-scrub.js';

/**
 * Which upstream response headers reach the client. Hop-by-hop headers belong to
 * the upstream connection, not ours; cookies of an upstream have no business on
 * the proxy's origin; nor has its CORS policy (Ollama, for one, allows every origin):
 * which pages may read the proxy is `proxy.cors_origins`' to say; the upstream's
 * request id is kept under another name because `x-request-id` is ours.
 */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'set-cookie',
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
]);

/**
 * Flat `[name, value, …]` list for `res.writeHead`, from the upstream's raw headers.
 * `rewritten`: the client gets other bytes than the upstream sent (decoded, a key
 * blanked out, events held back or appended), so the upstream's length and encoding no
 * longer describe them. `key`: the provider's key, blanked out of every value (a
 * `WWW-Authenticate` may quote the credential it refused).
 */
export function clientHeaders(raw: readonly string[], requestId: string, rewritten = false, key: string | null = null): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    if (DROPPED.has(name) || (rewritten && (name === 'content-length' || name === 'content-encoding'))) continue;
    const value = key === null ? (raw[i + 1] ?? '') : scrubText(raw[i + 1] ?? '', key);
    if (name === 'x-request-id') out.push('x-upstream-request-id', value);
    else out.push(name, value);
  }
  out.push('x-request-id', requestId);
  return out;
}

/**
 * The head of an answer passed as it came: the provider's headers that reach the client
 * (clientHeaders), the proxy's own rate headers kept over the provider's, `more`, and
 * the proxy's time so far (`timing`: the request's clock, observe/server-timing.ts).
 */
export function passedHead(res: ServerResponse, raw: readonly string[], requestId: string, rewritten: boolean, key: string | null, timing: Timing | null, more: readonly string[] = []): string[] {
  const headers = ownRateHeadersKept(res, clientHeaders(raw, requestId, rewritten, key));
  headers.push(...more);
  const value = timing?.header() ?? null;
  if (value !== null) headers.push('server-timing', value);
  return headers;
}

/** The head of a translated answer, in place of the provider's: its Server-Timing is the proxy's time so far (translation included, the provider's waits not). */
export function translatedHead(t: BodyTranslation, requestId: string, timing: Timing | null, contentType: string, more: readonly string[]): string[] {
  const h = ['content-type', contentType, 'x-request-id', requestId, ...more];
  if (t.dropped.length > 0) h.push('x-tunnel-manager-dropped', t.dropped.join(','));
  const value = timing?.header() ?? null;
  if (value !== null) h.push('server-timing', value);
  return h;
}

/** The response headers the relay itself depends on, in one pass over the raw list. */
export function relayHeaders(rawHeaders: readonly string[]): { contentType: string | undefined; contentEncoding: string | undefined; contentLength: string | undefined } {
  let contentType: string | undefined;
  let contentEncoding: string | undefined;
  let contentLength: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (name.length === 12 && name.toLowerCase() === 'content-type') contentType = rawHeaders[i + 1];
    else if (name.length === 16 && name.toLowerCase() === 'content-encoding') contentEncoding = rawHeaders[i + 1];
    else if (name.length === 14 && name.toLowerCase() === 'content-length') contentLength = rawHeaders[i + 1];
  }
  return { contentType, contentEncoding, contentLength };
}

/** The value of the raw header `name` (lower case), the first of that name; undefined when there is none. */
export function headerOf(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) return raw[i + 1];
  return undefined;
}

import type { IncomingMessage, ServerResponse } from 'node:http';

// What browsers may read besides the CORS-safelisted headers.
const EXPOSED = 'x-request-id, x-upstream-request-id, retry-after, openai-processing-ms, anthropic-ratelimit-requests-remaining';
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * `proxy.cors_origins` (absent: no CORS headers at all, so browsers keep refusing
 * other origins). Sets the headers an allowed origin needs, and answers preflights
 * itself — before the key check, since browsers never send credentials on them.
 * Returns true when it answered the request (with `requestId`, as every answer).
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, origins: readonly string[] | null, requestId: string): boolean {
  if (origins === null) return false;
  const origin = req.headers.origin;
  res.setHeader('vary', 'origin');
  if (origin === undefined || !(origins.includes('*') || origins.includes(origin))) return false;
  res.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
  res.setHeader('access-control-expose-headers', EXPOSED);
  if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return false;
  res.writeHead(204, {
    // Every method of the routes: DELETE is /v1/responses/{id}'s.
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    // Whatever the client's SDK sends (authorization, x-api-key, anthropic-version, openai-beta, x-stainless-*…).
    'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'authorization, content-type',
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
    'content-length': '0',
    'x-request-id': requestId,
  });
  res.end();
  req.resume();
  return true;
}

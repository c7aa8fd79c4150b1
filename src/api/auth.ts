import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { apiError } from './errors.js';

/** `TUNNEL_API_TOKEN` may hold several tokens separated by commas (rotation); blanks are ignored. */
export function parseTokens(text: string | undefined): string[] | null {
  const tokens = (text ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  return tokens.length > 0 ? tokens : null;
}

// Hashing both sides first gives equal-length buffers, so timingSafeEqual can compare
// them and the time taken says nothing about the token's length or content.
const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time check of `presented` against every token (no early exit on a match). */
export function tokenMatches(presented: string, tokens: readonly string[]): boolean {
  const p = digest(presented);
  let matched = false;
  for (const t of tokens) matched = timingSafeEqual(p, digest(t)) || matched;
  return matched;
}

/** Paths the token does not guard: /health reveals nothing, /v1 has the proxy's own keys. */
export function isOpenPath(path: string): boolean {
  return path === '/health' || path === '/v1' || path.startsWith('/v1/');
}

const challenge = { 'www-authenticate': 'Bearer realm="tunnel-manager"' };

/** Requires `Authorization: Bearer <one of tokens>` on every control route. */
export function bearerAuth(tokens: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    if (isOpenPath(c.req.path)) return next();
    const header = c.req.header('authorization');
    if (header === undefined) {
      return apiError('unauthorized', 'this API needs "Authorization: Bearer <token>" (a token from TUNNEL_API_TOKEN)', { headers: challenge });
    }
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m || !tokenMatches(m[1] as string, tokens)) {
      return apiError('unauthorized', 'the bearer token is not one of TUNNEL_API_TOKEN', { headers: { 'www-authenticate': 'Bearer realm="tunnel-manager", error="invalid_token"' } });
    }
    return next();
  };
}

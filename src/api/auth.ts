import type { MiddlewareHandler } from 'hono';
import { bearerToken, digestSecret, secretMatches } from '../edge/tokens.js';
import { apiError } from './errors.js';

/** Paths the token does not guard: /health reveals nothing, /v1 has the proxy's own keys. */
export function isOpenPath(path: string): boolean {
  return path === '/health' || path === '/v1' || path.startsWith('/v1/');
}

const challenge = { 'www-authenticate': 'Bearer realm="tunnel-manager"' };

/** Whether an `Authorization` header presents one of the tokens (kept as digests). */
export function bearerCheck(tokens: readonly string[]): (header: string | undefined) => boolean {
  const digests = tokens.map(digestSecret);
  return (header) => {
    const token = bearerToken(header);
    return token !== null && secretMatches(token, digests);
  };
}

/** Requires `Authorization: Bearer <one of tokens>` on every control route. */
export function bearerAuth(tokens: readonly string[]): MiddlewareHandler {
  const accepted = bearerCheck(tokens);
  return async (c, next) => {
    if (isOpenPath(c.req.path)) return next();
    const header = c.req.header('authorization');
    if (header === undefined) {
      return apiError('unauthorized', 'this API needs "Authorization: Bearer <token>" (a token from TUNNEL_API_TOKEN)', { headers: challenge });
    }
    if (!accepted(header)) {
      return apiError('unauthorized', 'the bearer token is not one of TUNNEL_API_TOKEN', { headers: { 'www-authenticate': 'Bearer realm="tunnel-manager", error="invalid_token"' } });
    }
    return next();
  };
}

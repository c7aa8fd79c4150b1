import type { Context } from 'hono';
import { API_ERRORS, type ApiErrorBody, type ApiErrorCode } from './types.js';

/** The one way every control route answers a failure: `{"error":{"code","message"}}` with its status. */
export function apiError(
  code: ApiErrorCode,
  message: string,
  extra?: { matches?: string[]; fields?: Record<string, string>; general?: string[]; headers?: Record<string, string> },
): Response {
  const { headers, ...details } = extra ?? {};
  const body: ApiErrorBody = { error: { code, message, ...details } };
  return new Response(JSON.stringify(body), {
    status: API_ERRORS[code],
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/**
 * For every sub-app's onError: a bug becomes a plain 500 without stack or message
 * (which could carry paths or secrets); the details go to the daemon's log.
 */
export function internalErrorHandler(log?: (e: unknown, c: Context) => void) {
  return (e: Error, c: Context): Response => {
    log?.(e, c);
    return apiError('internal_error', 'internal error: see the daemon log');
  };
}

import type { ServerResponse } from 'node:http';
import { markOwnAnswer } from './observe/own-answer.js';
import { serverTiming } from './observe/server-timing.js';

/** An error as the proxy answers it: OpenAI's shape, with the HTTP status to use. */
export interface ProxyError {
  status: number;
  type: 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'timeout_error' | 'upstream_error' | 'server_error';
  code: string;
  message: string;
  param?: string | null;
  /** Sent as `Retry-After` (a provider resting after it asked for a pause). */
  retryAfterSeconds?: number;
}

/** Whose error shape an endpoint answers in: its clients' SDKs read only their own. */
export type ErrorFamily = 'openai' | 'anthropic';

/**
 * The JSON body the endpoint's clients understand: OpenAI's
 * `{"error": {"message", "type", "param", "code"}}`, or Anthropic's
 * `{"type": "error", "error": {"type", "message"}}` (which has no code: the proxy's
 * code goes into the message, so a log or a user can still tell the cases apart).
 */
export function errorJson(e: ProxyError, family: ErrorFamily = 'openai'): string {
  if (family === 'anthropic') return JSON.stringify({ type: 'error', error: { type: anthropicType(e), message: `${e.message} (${e.code})` } });
  return JSON.stringify({ error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code } });
}

/** Anthropic's error types go by status (https://docs.anthropic.com/en/api/errors). */
function anthropicType(e: ProxyError): string {
  switch (e.status) {
    case 400:
    case 405:
    case 415:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return 'api_error';
  }
}

/**
 * Answers with `e`. `close` asks Node to close the connection afterwards, for when
 * the request body was not read (a client still sending must not be left hanging
 * on a keep-alive socket we no longer read).
 */
export function sendError(res: ServerResponse, requestId: string, e: ProxyError, close = false, family: ErrorFamily = 'openai'): void {
  if (res.headersSent || res.destroyed) return;
  markOwnAnswer(res);
  const body = errorJson(e, family);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  };
  if (e.status === 401) headers['www-authenticate'] = 'Bearer';
  // SDKs retry a 504 by default (LangChain sent one prompt 7 times); the proxy already
  // waited the provider's whole timeout, so a retry would multiply the wait.
  if (e.status === 504) headers['x-should-retry'] = 'false';
  if (close) headers.connection = 'close';
  if (e.retryAfterSeconds !== undefined) headers['retry-after'] = e.retryAfterSeconds;
  const timing = serverTiming(res);
  if (timing !== null) headers['server-timing'] = timing;
  res.writeHead(e.status, headers);
  res.end(body);
}

/**
 * The final event of a stream that failed after it started (never followed by
 * `[DONE]`); Anthropic's streams name their events, and an `error` event is what its
 * SDK raises from.
 */
export function sseErrorEvent(e: ProxyError, family: ErrorFamily = 'openai'): string {
  return family === 'anthropic' ? `event: error\ndata: ${errorJson(e, family)}\n\n` : `data: ${errorJson(e)}\n\n`;
}

/** The 413 for a body over the limit (`decompressed`: once its content-encoding is undone). */
export const tooLarge = (limit: number, decompressed?: string): ProxyError => ({
  status: 413,
  type: 'invalid_request_error',
  code: 'request_too_large',
  message: `the request body is larger than ${limit} bytes${decompressed === undefined ? '' : ` once its ${decompressed} is decompressed`}`,
});

/** The 400 for a request the proxy cannot take as it is; `param` names the field at fault. */
export const invalidRequest = (message: string, param: string | null = null): ProxyError => ({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message, param });

/** The 400 for a path part (a model or response id) that is not valid percent-encoding. */
export const badPercentEncoding = (what: string): ProxyError => invalidRequest(`the ${what} in the path is not valid percent-encoding`);

export const timeoutError = (prefix: string, seconds: number, stage: 'headers' | 'chunk'): ProxyError => ({
  status: 504,
  type: 'timeout_error',
  code: 'upstream_timeout',
  message:
    stage === 'headers'
      ? `provider "${prefix}" did not answer within ${seconds} s`
      : `provider "${prefix}" sent nothing for ${seconds} s in the middle of its response`,
});

/** The 502 for a provider that gave no answer (`where`: its host and port; `hint`: the tunnel's state, or ""). EOF and EPROTO reached it but got nothing usable back. */
export function unreachableError(prefix: string, where: string, failure: { code: string; message: string }, hint: string): ProxyError {
  const message =
    failure.code === 'EOF' || failure.code === 'EPROTO'
      ? `provider "${prefix}" at ${where} gave no usable answer: ${failure.message}${hint}`
      : `provider "${prefix}" is unreachable at ${where}: ${failure.code}${hint}`;
  return { status: 502, type: 'upstream_error', code: 'upstream_unreachable', message };
}

/** The 502 for a provider's body the proxy cannot decode or read; `what` follows the provider's name (`: <the decoder's message>`, ` answered in …`). */
export const undecodable = (prefix: string, what: string): ProxyError => ({ status: 502, type: 'upstream_error', code: 'upstream_undecodable', message: `provider "${prefix}"${what}` });

import type { ServerResponse } from 'node:http';

/** An error as the proxy answers it: OpenAI's shape, with the HTTP status to use. */
export interface ProxyError {
  status: number;
  type: 'invalid_request_error' | 'authentication_error' | 'timeout_error' | 'upstream_error' | 'server_error';
  code: string;
  message: string;
  param?: string | null;
}

/** The JSON body OpenAI clients understand: `{"error": {"message", "type", "param", "code"}}`. */
export function errorJson(e: ProxyError): string {
  return JSON.stringify({ error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code } });
}

/**
 * Answers with `e`. `close` asks Node to close the connection afterwards, for when
 * the request body was not read (a client still sending must not be left hanging
 * on a keep-alive socket we no longer read).
 */
export function sendError(res: ServerResponse, requestId: string, e: ProxyError, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const body = errorJson(e);
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
  res.writeHead(e.status, headers);
  res.end(body);
}

/** The final event of a stream that failed after it started (never followed by `[DONE]`). */
export function sseErrorEvent(e: ProxyError): string {
  return `data: ${errorJson(e)}\n\n`;
}

export const timeoutError = (prefix: string, seconds: number, stage: 'headers' | 'chunk'): ProxyError => ({
  status: 504,
  type: 'timeout_error',
  code: 'upstream_timeout',
  message:
    stage === 'headers'
      ? `provider "${prefix}" did not answer within ${seconds} s`
      : `provider "${prefix}" sent nothing for ${seconds} s in the middle of its response`,
});

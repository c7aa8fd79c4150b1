import type { ProxyError } from '../errors.js';
import { isObject } from './shape.js';

/** A provider's error answer (OpenAI's, Anthropic's or vLLM's shape) as the proxy's error, status and message kept. */
export function upstreamError(status: number, text: string, prefix: string): ProxyError {
  let message = text.slice(0, 2000);
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) {
      const inner = isObject(v.error) ? v.error : v;
      if (typeof inner.message === 'string') message = inner.message;
      else if (typeof v.detail === 'string') message = v.detail;
    }
  } catch {
    // Not JSON: the text itself.
  }
  const type: ProxyError['type'] = status === 401 || status === 403 ? 'authentication_error' : status >= 500 ? 'upstream_error' : 'invalid_request_error';
  return { status, type, code: 'upstream_error', message: `provider "${prefix}" answered ${status}: ${message}` };
}

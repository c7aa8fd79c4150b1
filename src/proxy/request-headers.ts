import type { IncomingMessage } from 'node:http';
import { NEVER_FORWARDED } from '../config/forward-headers.js';
import type { Credential } from './providers.js';

/**
 * Which client request headers reach the provider. Only named ones: routing and
 * tracing headers clients rely on, plus `proxy.forward_headers`. Never credentials
 * (the provider gets its own key or none) and never the client connection's framing.
 */
export const FORWARDED_BY_DEFAULT = [
  'user-agent',
  'openai-organization',
  'openai-project',
  'openai-beta',
  'traceparent',
  'tracestate',
  'anthropic-version',
  'anthropic-beta',
] as const;

/** The head of the request to the provider. Values with a line break are left out (Node's parser refuses them before this; this holds without it). */
export function upstreamRequestHeaders(
  req: IncomingMessage,
  requestId: string,
  credential: Credential | null,
  extra: readonly string[],
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: headerValue(req.headers.accept) ?? 'application/json',
    // The proxy scans event streams and error bodies; it asks for them as plain text
    // (and still decodes a provider that compresses anyway).
    'accept-encoding': 'identity',
    'x-request-id': requestId,
  };
  for (const name of FORWARDED_BY_DEFAULT) copy(req, headers, name);
  for (const name of extra) {
    const lower = name.toLowerCase();
    if (!NEVER_FORWARDED.has(lower)) copy(req, headers, lower);
  }
  if (credential !== null) headers[credential.name] = credential.value;
  return headers;
}

function copy(req: IncomingMessage, into: Record<string, string>, name: string): void {
  const raw = req.headers[name];
  const value = headerValue(Array.isArray(raw) ? raw.join(', ') : raw);
  if (value !== undefined) into[name] = value;
}

function headerValue(value: string | undefined): string | undefined {
  return value === undefined || /[\r\n]/.test(value) ? undefined : value;
}

import type { IncomingMessage } from 'node:http';

/** A request header that carries the provider's key. */
export interface Credential {
  name: 'authorization' | 'x-api-key';
  value: string;
}

/**
 * Which client request headers reach the provider. Only named ones: routing and
 * tracing headers clients rely on, plus `proxy.forward_headers`. Never credentials
 * (the provider gets its own key or none; the config refuses them in
 * `forward_headers`) and never the client connection's framing.
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

/**
 * The names passed on from the client, lower case and each once: the built-in list,
 * then `proxy.forward_headers`. Computed once per config, not per request. `accept`
 * is left out: the proxy always sends it (the client's, else JSON).
 */
export function forwardedNames(forwardHeaders: readonly string[]): readonly string[] {
  const names = new Set<string>(FORWARDED_BY_DEFAULT);
  for (const name of forwardHeaders) names.add(name.toLowerCase());
  names.delete('accept');
  return [...names];
}

/**
 * The head of the request to the provider, as a flat `[name, value, …]` list (what
 * the upstream client takes without copying). `forwarded` comes from
 * `forwardedNames`. Values with a line break are left out (Node's parser refuses
 * them before this; this holds without it).
 */
export function upstreamRequestHeaders(
  req: IncomingMessage,
  requestId: string,
  credential: Credential | null,
  forwarded: readonly string[],
  /** null: a request without a body (and so without a content type). */
  contentType: string | null = 'application/json',
): string[] {
  const from = req.headers;
  const headers = [
    'accept',
    headerValue(from.accept) ?? 'application/json',
    // The proxy scans event streams and error bodies; it asks for them as plain text
    // (and still decodes a provider that compresses anyway).
    'accept-encoding',
    'identity',
    'x-request-id',
    requestId,
  ];
  for (const name of forwarded) {
    const raw = from[name];
    if (raw === undefined) continue;
    const value = headerValue(Array.isArray(raw) ? raw.join(', ') : raw);
    if (value !== undefined) headers.push(name, value);
  }
  if (contentType !== null) headers.push('content-type', contentType);
  if (credential !== null) headers.push(credential.name, credential.value);
  return headers;
}

function headerValue(value: string | undefined): string | undefined {
  return value === undefined || value.includes('\n') || value.includes('\r') ? undefined : value;
}

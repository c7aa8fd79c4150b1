import type { BodyTranslation } from './body-translation.js';
import type { RelayRequest } from './relay-request.js';
import type { UpstreamCall } from './upstream.js';
import { upstreamRequestHeaders } from './upstream-headers.js';
import { askingUsage, USAGE_ON_REQUEST } from './usage-request.js';

/**
 * What the provider is sent for one relayed request (`t`: its translation, null when
 * it goes as the client sent it).
 *
 * As sent: the endpoint under the provider's base path, with the client's query along
 * (Azure-style servers route on `?api-version=`); for a metered client a chat or
 * completions stream is asked for its usage (usage-request.ts). Translated: the
 * translation's path, without the query (it belongs to the client's API), and the
 * headers the provider's API requires; the body is the translation's already.
 */
export function providerCall(r: RelayRequest, t: BodyTranslation | null): UpstreamCall {
  const { provider, payload } = r;
  const method = r.method ?? 'POST';
  const headers = upstreamRequestHeaders(r.req, r.requestId, provider.credential, r.forwarded, payload === null ? null : r.contentType);
  if (t !== null) {
    for (const [name, value] of t.defaultHeaders) if (r.req.headers[name] === undefined) headers.push(name, value);
    return { method, path: t.upstreamPath(provider.basePath), headers, body: payload, keepAliveMs: provider.keepAliveMs };
  }
  const endpoint = r.endpoint ?? '/chat/completions';
  const url = r.req.url ?? '';
  const q = url.indexOf('?');
  const asking = r.observer.metered && payload !== null && USAGE_ON_REQUEST.has(endpoint) && r.contentType === undefined ? askingUsage(payload) : null;
  return { method, path: `${provider.basePath}${endpoint}${q === -1 ? '' : url.slice(q)}`, headers, body: asking ?? payload, keepAliveMs: provider.keepAliveMs };
}

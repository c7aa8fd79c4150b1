/**
 * `proxy.forward_headers`: client request headers, beyond the built-in routing and
 * tracing ones, that the proxy passes on to providers. Names that would hand over a
 * credential or disturb the proxy's own framing of the request are refused here, in
 * the config, rather than silently dropped at request time.
 */
import { z } from 'zod';

/** Headers a config may not ask to forward, with the reason given to the user. */
export const NEVER_FORWARDED: ReadonlyMap<string, string> = new Map([
  ...['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie'].map(
    (h) => [h, 'credentials never reach a provider; give the provider its own api_key'] as const,
  ),
  ...['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length', 'content-type', 'content-encoding', 'accept-encoding', 'expect', 'x-request-id'].map(
    (h) => [h, 'the proxy sets this header itself'] as const,
  ),
]);

// An HTTP token (RFC 9110 §5.6.2), the only thing a header name may be.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const forwardHeadersSchema = z.array(
  z
    .string({ error: 'expected a header name' })
    .regex(TOKEN, { error: 'expected a header name (letters, digits and !#$%&\'*+.^_`|~-)' })
    .refine((name) => !NEVER_FORWARDED.has(name.toLowerCase()), {
      error: (issue) => `"${String(issue.input)}" cannot be forwarded: ${NEVER_FORWARDED.get(String(issue.input).toLowerCase()) ?? ''}`,
    }),
  { error: 'expected a list of header names, e.g. [x-tenant-id]' },
);

/**
 * Which upstream response headers reach the client. Hop-by-hop headers belong to
 * the upstream connection, not ours; cookies of an upstream have no business on
 * the proxy's origin; the upstream's request id is kept under another name because
 * `x-request-id` is ours.
 */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'set-cookie',
]);

/** Flat `[name, value, …]` list for `res.writeHead`, from the upstream's raw headers. */
export function clientHeaders(raw: readonly string[], requestId: string, dropLength = false): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (DROPPED.has(name) || (dropLength && name === 'content-length')) continue;
    if (name === 'x-request-id') out.push('x-upstream-request-id', raw[i + 1]!);
    else out.push(name, raw[i + 1]!);
  }
  out.push('x-request-id', requestId);
  return out;
}

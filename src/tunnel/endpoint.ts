import { err, ok, type Result } from '../kernel/result.js';

/**
 * One side of a forward as written in the config: a bare port, or `host:port` where
 * host is IPv4, a bracketed IPv6 address or a host name.
 */
export interface Endpoint {
  /** Address part, without brackets; null for a bare port. */
  host: string | null;
  port: number;
  /** The value exactly as written (quotes removed), used for the hash and the API. */
  text: string;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9_.-]{1,32})?$/;

export const ENDPOINT_EXPECTED = 'a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name)';

function parsePort(s: string): number | null {
  if (!/^\d{1,5}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : null;
}

function validIPv6(s: string): boolean {
  if (!IPV6.test(s) || !s.includes(':')) return false;
  const addr = s.split('%')[0] ?? '';
  const doubles = addr.split('::').length - 1;
  if (doubles > 1) return false;
  const groups = addr.split(':').filter((g) => g !== '');
  const last = groups[groups.length - 1] ?? '';
  const hasV4 = last.includes('.');
  if (hasV4 && !IPV4.test(last)) return false;
  const hexGroups = hasV4 ? groups.slice(0, -1) : groups;
  if (!hexGroups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const width = hexGroups.length + (hasV4 ? 2 : 0);
  return doubles === 1 ? width < 8 : width === 8;
}

/** Parses a port field; `written` is the scalar's text as written in the file. */
export function parseEndpoint(written: string): Result<Endpoint, string> {
  const bare = parsePort(written);
  if (bare !== null) return ok({ host: null, port: bare, text: written });
  if (written.startsWith('[')) {
    const m = /^\[([^\]]*)\]:([^:]*)$/.exec(written);
    const port = m ? parsePort(m[2] ?? '') : null;
    if (!m || port === null || !validIPv6(m[1] ?? '')) return err(ENDPOINT_EXPECTED);
    return ok({ host: m[1] ?? '', port, text: written });
  }
  const idx = written.lastIndexOf(':');
  if (idx <= 0) return err(ENDPOINT_EXPECTED);
  const host = written.slice(0, idx);
  const port = parsePort(written.slice(idx + 1));
  if (port === null) return err(ENDPOINT_EXPECTED);
  const looksNumeric = /^[\d.]+$/.test(host);
  if (looksNumeric ? !IPV4.test(host) : !HOSTNAME.test(host)) return err(ENDPOINT_EXPECTED);
  return ok({ host, port, text: written });
}

/** The address as ssh's -L/-R syntax wants it: IPv6 in brackets. */
export function sshAddress(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

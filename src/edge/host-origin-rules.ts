/**
 * Who may talk to a listener from a browser: the Host and Origin rules shared by the
 * daemon's TCP listener, `tunnel-manager proxy`'s and the panel (SPEC §6, §8). Pure:
 * they read header values only.
 *
 * A web page can reach a loopback listener two ways. By DNS rebinding, a name the page
 * controls is pointed at 127.0.0.1, so the browser sends the page's own name as
 * `Host`: the Host rule stops it, since only names that always mean this machine (or
 * the names the user listed) pass. By a cross-origin request, the browser says whose
 * page sent it in `Origin`: the Origin rule stops it.
 */
import { isLoopback } from './listen-address.js';

/** The header the panel's page adds to its own state-changing requests. */
export const PANEL_REQUEST_HEADER = 'x-panel-request';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True for the methods that change something (and that a CSRF would use). */
export function isStateChanging(method: string | undefined): boolean {
  // Node's parser gives the method in upper case; the common ones are answered without a copy.
  if (method === 'POST') return true;
  if (method === 'GET') return false;
  return UNSAFE.has((method ?? '').toUpperCase());
}

/** The host name of a `Host` header value (`[::1]` keeps its brackets), or null when it is not host[:port]. */
export function hostName(hostHeader: string): string | null {
  if (hostHeader === '' || /[\s/?#@\\]/.test(hostHeader)) return null;
  try {
    const url = new URL(`http://${hostHeader}`);
    return url.hostname === '' ? null : url.hostname;
  } catch {
    return null;
  }
}

/** True for names that always mean this machine; a DNS name could be rebound to anything. */
export function isLoopbackName(name: string): boolean {
  return isLoopback(bare(name));
}

/** The names a listener answers to besides loopback ones. */
export interface HostPolicy {
  /** The address it was told to listen on (`--listen`'s host). */
  listenHost: string;
  /** TUNNEL_API_ALLOWED_HOSTS: names a reverse proxy or the user's machines send. */
  allowedHosts: readonly string[];
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
/** The name lowercased, without brackets or a final dot; an IPv4-mapped IPv6 address (as the URL parser writes it, `::ffff:7f00:1`) as its IPv4 address. */
function bare(name: string): string {
  const n = name.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(n);
  if (mapped === null) return n;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * True when `name` is one of ours: a loopback name, the listen address, a listed
 * name, or, on a wildcard listen address, any IP address. An address is never the
 * result of a rebinding (that needs a DNS name), and on 0.0.0.0 every address of the
 * machine is the listen address.
 */
export function hostIsOurs(name: string, policy: HostPolicy): boolean {
  const n = bare(name);
  if (isLoopbackName(n)) return true;
  const listen = bare(policy.listenHost);
  if (n === listen) return true;
  if (policy.allowedHosts.some((h) => bare(h) === n)) return true;
  return WILDCARDS.has(policy.listenHost) && isIpAddress(n);
}

function isIpAddress(n: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(n) || (n.includes(':') && URL.canParse(`http://[${n}]/`));
}

/**
 * The Host rule. A request without Host (HTTP/1.0) passes: browsers always send it,
 * so its absence means a script or a tool, not a page.
 */
export function hostAllowed(hostHeader: string | undefined, policy: HostPolicy): boolean {
  if (hostHeader === undefined) return true;
  const name = hostName(hostHeader);
  return name !== null && hostIsOurs(name, policy);
}

/**
 * The Origin rule for a listener that serves no pages: no Origin (a tool, or a
 * browser navigating) passes; `null` (a sandboxed frame, a file) never does; any other
 * passes when its host is one of ours (a page this machine serves, such as the
 * reference's panel, whose server relays its page's Origin) or it is listed in
 * `extra` (`proxy.cors_origins` for `/v1`; `*` there means any origin).
 */
export function originAllowed(origin: string | undefined, policy: HostPolicy, extra: readonly string[] | null = null): boolean {
  if (origin === undefined) return true;
  if (origin === 'null' || origin === '') return false;
  if (extra !== null && (extra.includes('*') || extra.includes(origin))) return true;
  const parsed = parseOrigin(origin);
  return parsed !== null && hostIsOurs(parsed.hostname, policy);
}

function parseOrigin(origin: string): URL | null {
  if (!URL.canParse(origin)) return null;
  const o = new URL(origin);
  return o.protocol === 'http:' || o.protocol === 'https:' ? o : null;
}

/** True when `origin` is exactly the origin the request's Host names (same host and port). */
export function sameOrigin(origin: string, hostHeader: string | undefined): boolean {
  const o = parseOrigin(origin);
  if (o === null || hostHeader === undefined || hostName(hostHeader) === null) return false;
  return o.host === new URL(`http://${hostHeader}`).host;
}

/**
 * The panel's Host rule: without a password it trusts whoever reaches it, which is
 * only safe on loopback, so its Host must name loopback too; with a password the
 * session cookie is the protection and any name may be used.
 */
export function panelHostAllowed(hostHeader: string | undefined, passwordSet: boolean): boolean {
  if (passwordSet) return true;
  if (hostHeader === undefined) return false;
  const name = hostName(hostHeader);
  return name !== null && isLoopbackName(name);
}

/**
 * The panel's CSRF rule for state-changing methods: an Origin must be the panel's own
 * (same host and port as the request's Host); without Origin the request must carry
 * the panel's own header, which a foreign page cannot add without a CORS preflight
 * that the panel never grants.
 */
export function panelOriginAllowed(method: string, headers: { origin?: string | undefined; host?: string | undefined; panelHeader?: string | undefined }): boolean {
  if (!isStateChanging(method)) return true;
  const { origin, host } = headers;
  if (origin === undefined || origin === '') return headers.panelHeader === '1';
  return origin !== 'null' && sameOrigin(origin, host);
}

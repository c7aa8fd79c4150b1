/**
 * Checks every request passes before a handler sees it. Pure: they read headers only.
 */

/** The header the page adds to its own state-changing requests. */
export const PANEL_REQUEST_HEADER = 'x-panel-request';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hostName(hostHeader: string): string | null {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return null;
  }
}

/** True for names that always mean this machine; a DNS name could be rebound to anything. */
export function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return n === 'localhost' || n.endsWith('.localhost') || n === '[::1]' || /^127(\.\d{1,3}){3}$/.test(n);
}

/**
 * A panel without a password trusts whoever reaches it, which is only safe on
 * loopback; there the Host header must also name loopback, so that a web page whose
 * DNS name is rebound to 127.0.0.1 cannot read or drive the panel from the
 * visitor's browser. With a password, the session cookie is that protection.
 */
export function hostAllowed(hostHeader: string | undefined, passwordSet: boolean): boolean {
  if (passwordSet) return true;
  if (hostHeader === undefined) return false;
  const name = hostName(hostHeader);
  return name !== null && isLoopbackName(name);
}

/**
 * Cross-site request forgery guard for state-changing methods: an Origin header must
 * be the panel's own origin (same host and port as the request's Host); without
 * Origin, the request must carry the panel's own header, which a foreign page cannot
 * add without a CORS preflight that the panel never grants.
 */
export function originAllowed(method: string, headers: { origin?: string | undefined; host?: string | undefined; panelHeader?: string | undefined }): boolean {
  if (!UNSAFE.has(method.toUpperCase())) return true;
  const { origin, host } = headers;
  if (origin === undefined || origin === '') return headers.panelHeader === '1';
  if (origin === 'null' || host === undefined) return false;
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

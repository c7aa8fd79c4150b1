/**
 * The credentials that let another account through the identity rule
 * (account-gate.ts), and which routes of each listener they guard. Each listener
 * builds its gate from here, so that the daemon's, `tunnel-manager proxy`'s and the
 * panel's say the same thing.
 */
import { isPlainPath, isV1Path } from './http-listener.js';
import type { AllowedAccounts } from './account-names.js';
import type { AccountGate, Credential, Guards } from './account-gate.js';

/** TUNNEL_API_TOKEN, which guards the control routes, /events, /metrics and the login terminals on TCP. */
export function apiTokenCredential(tokens: readonly string[] | null): Credential {
  const set = tokens !== null && tokens.length > 0;
  return { grant: 'set TUNNEL_API_TOKEN and give the account a token', isSet: () => set };
}

/** `proxy.api_keys` or `proxy.clients`, which guard /v1 (read on every request: they reload with the config). */
export function proxyKeysCredential(keysSet: () => boolean): Credential {
  return { grant: 'set proxy.api_keys or proxy.clients in the config file and give the account a key', isSet: keysSet };
}

/** PANEL_TOKEN, the panel's password. */
export function panelPasswordCredential(password: string | null): Credential {
  const set = password !== null && password !== '';
  return { grant: 'set PANEL_TOKEN (the panel then asks for it) and give the account the password', isSet: () => set };
}

/** True when a proxy config section has keys that its /v1 routes check. */
export function proxyHasKeys(proxy: { api_keys?: readonly unknown[] | undefined; clients?: Record<string, unknown> | undefined } | null | undefined): boolean {
  return (proxy?.api_keys?.length ?? 0) > 0 || Object.keys(proxy?.clients ?? {}).length > 0;
}

/**
 * The daemon's TCP listener: /health is open to every account (container and kubelet
 * probes; it names nothing), /v1 is the proxy keys', every other route the token's. A
 * path the router could read as either needs both.
 */
export function daemonGuards(api: Credential, proxy: Credential): (path: string) => Guards {
  return (path) => {
    if (path === '/health') return 'open';
    if (!isPlainPath(path)) return [api, proxy];
    return isV1Path(path) ? [proxy] : [api];
  };
}

/** The gate of a listener run by this process. */
export function localGate(what: string, allowed: AllowedAccounts, guardsOf: (path: string) => Guards): AccountGate {
  return { ownUid: process.getuid?.() ?? 0, allowed, what, guardsOf };
}

import { parseListen, type ListenAddress } from '../edge/listen-address.js';
import { apiPortListen } from './reference-env.js';
import type { OwnListener } from '../tunnel/exposure.js';

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_API = '127.0.0.1:8080';
const DEFAULT_PANEL = '127.0.0.1:5000';

const set = (v: string | undefined): string | undefined => (v !== undefined && v !== '' ? v : undefined);

/**
 * Where the daemon's API listens by these flags and this environment, by the daemon's
 * own rule (--listen, TUNNEL_API_LISTEN, the reference's API_PORT, the default), for
 * those that do not listen themselves (`check`). `tunnel-manager proxy` reads the same.
 */
export function apiListenOf(flags: { listen?: unknown }, env: Env): ListenAddress {
  const flag = typeof flags.listen === 'string' ? set(flags.listen) : undefined;
  const text = flag ?? set(env.TUNNEL_API_LISTEN) ?? apiPortListen(env, false, 'TUNNEL_API_LISTEN', []) ?? DEFAULT_API;
  const r = parseListen(text);
  return r.ok ? r.value : { host: '127.0.0.1', port: 8080 };
}

/**
 * The product's own TCP listeners, which a tunnel must not quietly forward (SPEC §5):
 * the daemon's API at `api` (its /v1 group and `tunnel-manager proxy` with it), and the
 * panel where PANEL_LISTEN (or its default) puts it.
 */
export function ownListeners(api: ListenAddress, env: Env): OwnListener[] {
  const panel = parseListen(set(env.PANEL_LISTEN) ?? DEFAULT_PANEL);
  return [{ kind: 'api', host: api.host, port: api.port }, ...(panel.ok ? [{ kind: 'panel' as const, host: panel.value.host, port: panel.value.port }] : [])];
}

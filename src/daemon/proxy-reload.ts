import { loadConfigFile } from '../config/load.js';
import type { ProxyConfig } from '../config/proxy-schema.js';
import type { LoadResult } from '../config/types.js';
import type { DirectionMode } from '../tunnel/spec.js';
import { createReloadQueue } from './reload-queue.js';
import type { Log } from './log.js';

export interface ProxyReloadOptions {
  configPath: string;
  mode: DirectionMode;
  log: Log;
  /** Reads and validates the file; loadConfigFile unless a test slows it down. */
  load?: (path: string, opts: { mode: DirectionMode }) => Promise<LoadResult>;
}

export interface ProxyReload {
  /** The proxy section in force: the last one a usable file gave, null before any. */
  config(): ProxyConfig | null;
  /** Reads the file now, or once after the read in progress (reload-queue.ts); callers meanwhile share that read. */
  reload(): Promise<void>;
}

/**
 * The reload of `tunnel-manager proxy`, which runs the /v1 proxy alone: only the file's
 * proxy section is taken, and only from a file whose proxy section is valid; any other
 * file keeps the section in force. Reloads go through the daemon's queue, so a change
 * that arrives mid-reload is read once after it, never beside it.
 */
export function createProxyReload(opts: ProxyReloadOptions): ProxyReload {
  const load = opts.load ?? loadConfigFile;
  let current: ProxyConfig | null = null;

  async function reloadOnce(): Promise<void> {
    const r = await load(opts.configPath, { mode: opts.mode });
    if (r.kind === 'ok' || (r.kind === 'partial' && r.proxyValid)) current = r.config.proxy;
    opts.log({ event: 'proxy_config', result: r.kind, providers: Object.keys(current?.providers ?? {}).length });
    // Alone, the proxy has no tunnels: say at once which providers cannot work here.
    for (const [prefix, p] of Object.entries(current?.providers ?? {})) {
      if (p.tunnel !== undefined) opts.log({ event: 'proxy_tunnel_unavailable', provider: prefix, tunnel: p.tunnel, message: `provider "${prefix}" is bound to tunnel '${p.tunnel}'; tunnel-manager proxy runs no tunnels, so its requests are refused (503 tunnel_unavailable)` });
    }
  }

  const queue = createReloadQueue(reloadOnce);
  return { config: () => current, reload: () => queue.request() };
}

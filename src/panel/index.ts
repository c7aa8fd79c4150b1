import { homedir } from 'node:os';
import { serve, type ServerType } from '@hono/node-server';
import { isLoopback } from '../api/listen.js';
import type { DirectionMode } from '../tunnel/spec.js';
import { createPanelApp } from './app.js';
import { loadAssets } from './assets.js';
import { Sessions } from './auth.js';
import { ConfigStore, defaultBackupDir } from '../config-edit/store.js';
import { createDaemonClient } from './daemon-client.js';
import { EventsHub } from './events-hub.js';
import { readSshHosts } from './ssh-hosts.js';
import { createTerminalBridge } from './terminal-bridge.js';

export interface PanelOptions {
  listen: { host: string; port: number };
  configPath: string;
  /** The daemon's API, e.g. http://127.0.0.1:8080. */
  apiUrl: string;
  /** Sent to the daemon as a bearer token; never to a browser. */
  apiToken: string | null;
  /** PANEL_TOKEN: the page's password; required off loopback. */
  panelToken: string | null;
  sshConfigPath: string | null;
  mode: DirectionMode;
  /** Where previous versions of the config are kept; default `.panel-backups` next to the file. */
  backupDir?: string;
  /** How many backups to keep; default 10. */
  keepBackups?: number;
  log?: (e: Record<string, unknown>) => void;
}

export interface RunningPanel {
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the web panel. Throws an Error with a message for the user when it must not
 * or cannot start: a non-loopback address without PANEL_TOKEN, a port in use, a
 * missing page file.
 */
export async function startPanel(opts: PanelOptions): Promise<RunningPanel> {
  const password = opts.panelToken === '' ? null : opts.panelToken;
  const { host, port } = opts.listen;
  if (!isLoopback(host) && password === null) {
    throw new Error(
      `refusing to serve the panel on ${host}:${port} without PANEL_TOKEN: anyone who can reach it could edit the tunnels; set PANEL_TOKEN or listen on 127.0.0.1`,
    );
  }
  const log = opts.log ?? (() => undefined);
  const daemon = createDaemonClient(opts.apiUrl, opts.apiToken === '' ? null : opts.apiToken);
  const hub = new EventsHub(daemon);
  const shutdown = new AbortController();
  const home = (() => {
    try {
      return homedir();
    } catch {
      return null;
    }
  })();
  const sessions = new Sessions();
  const apiToken = opts.apiToken === '' ? null : opts.apiToken;
  const terminals = createTerminalBridge({ password, sessions, apiUrl: opts.apiUrl, apiToken, log });
  const app = createPanelApp({
    password,
    sessions,
    store: new ConfigStore({
      path: opts.configPath,
      writer: 'panel',
      mode: opts.mode,
      backupDir: opts.backupDir ?? defaultBackupDir(opts.configPath),
      keepBackups: opts.keepBackups ?? 10,
      log,
    }),
    mode: opts.mode,
    sshHosts: () => readSshHosts(opts.sshConfigPath, home),
    daemon,
    hub,
    shutdown: shutdown.signal,
    assets: await loadAssets(),
    log,
  });

  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', (e: NodeJS.ErrnoException) =>
      reject(new Error(e.code === 'EADDRINUSE' ? `${host}:${port} is already in use` : `cannot listen on ${host}:${port}: ${e.message}`)),
    );
  });
  server.on('upgrade', (req, socket, head) => terminals.upgrade(req, socket, head));
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;

  let closing: Promise<void> | null = null;
  return {
    port: bound,
    close() {
      closing ??= (async () => {
        shutdown.abort();
        await hub.close();
        terminals.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
      })();
      return closing;
    },
  };
}

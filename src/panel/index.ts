import { homedir } from 'node:os';
import { serve, type ServerType } from '@hono/node-server';
import { listenFailure, showAddress } from '../listen-failure.js';
import { panelListenProblem, type PanelSettings } from '../settings.js';
import { createPanelApp } from './app.js';
import { loadAssets } from './assets.js';
import { Sessions } from './auth.js';
import { ConfigStore, defaultBackupDir } from '../config-edit/store.js';
import { createDaemonClient } from './daemon-client.js';
import { EventsHub } from './events-hub.js';
import { readSshHosts } from './ssh-hosts.js';
import { createTerminalBridge } from './terminal-bridge.js';

/** The panel's settings (read by src/settings.ts, the one settings reader), plus what tests may change. */
export interface PanelOptions extends Omit<PanelSettings, 'warnings'> {
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
  const refused = panelListenProblem(opts.listen, password);
  if (refused !== null) throw new Error(refused);
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
    s.once('error', (e) => reject(new Error(listenFailure(showAddress(host, port), e))));
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

import { createServer } from 'node:http';
import { homedir } from 'node:os';
import { getRequestListener } from '@hono/node-server';
import { guardAccounts, guardAccountsUpgrade } from '../edge/account-gate.js';
import { localGate, panelPasswordCredential } from '../edge/credentials.js';
import { NO_OTHER_ACCOUNT } from '../edge/account-names.js';
import { listenFailure, showAddress } from '../edge/listen-failure.js';
import { panelListenProblem, type PanelSettings } from '../settings/settings.js';
import { createPanelApp, ownListenersOf } from './app.js';
import { loadAssets } from './assets.js';
import { Sessions } from './auth.js';
import { ConfigStore, defaultBackupDir } from '../config-edit/store.js';
import { createDaemonClient } from './daemon-client.js';
import { EventsHub } from './events-hub.js';
import { readSshHosts } from './ssh-hosts.js';
import { createTerminalBridge } from './terminal-bridge.js';
import { panelConfigFile, type PanelConfigFile } from './config-file.js';

/** The panel's settings (read by src/settings/settings.ts, the one settings reader), plus what tests may change. */
export interface PanelOptions extends Omit<PanelSettings, 'warnings' | 'allowedAccounts'> {
  /** How often to ask a daemon that does not answer yet which file it runs (default 10, 500 ms apart). */
  configAttempts?: number;
  /** TUNNEL_API_ALLOWED_USERS; none unless given. */
  allowedAccounts?: PanelSettings['allowedAccounts'];
  /** Where previous versions of the config are kept; default `.panel-backups` next to the file. */
  backupDir?: string;
  /** How many backups to keep; default 10. */
  keepBackups?: number;
  log?: (e: Record<string, unknown>) => void;
}

export interface RunningPanel {
  port: number;
  /** The file it edits, and where that came from (config-file.ts). */
  config: PanelConfigFile;
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
  const config = await panelConfigFile({
    given: opts.configPath,
    fallback: opts.defaultConfigPath,
    daemon,
    log,
    ...(opts.configAttempts !== undefined ? { attempts: opts.configAttempts } : {}),
  });
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
      path: config.path,
      writer: 'panel',
      mode: opts.mode,
      backupDir: opts.backupDir ?? defaultBackupDir(config.path),
      keepBackups: opts.keepBackups ?? 10,
      log,
    }),
    mode: opts.mode,
    sshHosts: () => readSshHosts(opts.sshConfigPath, home),
    daemon,
    hub,
    shutdown: shutdown.signal,
    assets: await loadAssets(),
    // The panel's own address, which a tunnel should not forward (SPEC §5), besides the daemon's.
    ownListeners: ownListenersOf(opts.apiUrl, { host, port }),
    log,
  });

  // The identity rule (SPEC §6) before every page, API call and terminal: without a
  // password the panel is the owner's alone, as the daemon's API is.
  const passwordGuard = [panelPasswordCredential(password)];
  const accounts = localGate('this web panel', opts.allowedAccounts ?? NO_OTHER_ACCOUNT, () => passwordGuard);
  const listener = getRequestListener(app.fetch);
  const server = createServer(guardAccounts((req, res) => void listener(req, res), accounts));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new Error(listenFailure(showAddress(host, port), e))));
    server.listen(port, host, () => resolve());
  });
  server.on('upgrade', guardAccountsUpgrade((req, socket, head) => terminals.upgrade(req, socket, head), accounts));
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;

  let closing: Promise<void> | null = null;
  return {
    port: bound,
    config,
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

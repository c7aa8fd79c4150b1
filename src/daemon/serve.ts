import { createDaemonApp } from '../api/app.js';
import { EventStreamSlots } from '../api/events.js';
import { createMetrics } from '../api/metrics.js';
import { stillLoading } from '../api/loading.js';
import { startListeners } from '../api/server.js';
import { createTerminalRoute, type TerminalRoute } from '../api/terminal.js';
import { watchConfig } from '../config/watch.js';
import { ConfigStore, defaultBackupDir } from '../config-edit/store.js';
import { createProxyApp, createProxyMetrics, v1RefusalJson } from '../proxy/index.js';
import { createSupervisor } from '../supervisor/index.js';
import { proxyHasKeys } from '../edge/credentials.js';
import { createConfigReload, type ConfigReload } from './config-reload.js';
import { localEndOf, tunnelListeningOn } from './local-tunnel.js';
import { ownListeners } from '../settings/own-listeners.js';
import type { Log } from './log.js';
import type { DaemonSettings } from '../settings/settings.js';

export interface RunningDaemon {
  engine: ConfigReload;
  tcpPort: number;
  /** The one shutdown path: stop watching → stop every ssh child → close listeners (and the socket). Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds and starts the daemon: supervisor (which first ends any ssh child left by a
 * crashed predecessor), the config in force, the API on TCP and on the unix socket
 * with the chat proxy mounted at /v1 on TCP, then the watcher and the first reload.
 */
export async function startDaemon(settings: DaemonSettings, log: Log, env: NodeJS.ProcessEnv): Promise<RunningDaemon> {
  const supervisor = await createSupervisor({
    sshBin: settings.sshBin,
    sshConfigPath: settings.sshConfigPath,
    stateDir: settings.stateDir,
    mode: settings.mode,
    log,
  });
  // The API's own port once bound (a test's port 0), for the exposure warnings.
  const own = () => ownListeners({ host: settings.listen.host, port: listeners?.tcpPort ?? settings.listen.port }, env);
  const engine = createConfigReload({ configPath: settings.configPath, mode: settings.mode, supervisor, log, ownListeners: own });

  let watcher: { close(): Promise<void> } | null = null;
  let listeners: { tcpPort: number; close(): Promise<void> } | null = null;
  let terminals: TerminalRoute[] = [];
  let closing: Promise<void> | null = null;

  const close = () => {
    closing ??= (async () => {
      await watcher?.close().catch((e: unknown) => log({ event: 'watch_close_failed', error: String(e) }));
      // Stopping the tunnels ends every login, and with it each attached terminal.
      await supervisor.shutdown();
      for (const t of terminals) t.close();
      await listeners?.close().catch((e: unknown) => log({ event: 'listener_close_failed', error: String(e) }));
    })();
    return closing;
  };

  try {
    const proxyMetrics = createProxyMetrics();
    const proxy = createProxyApp({
      getConfig: () => engine.config().proxy,
      env,
      log,
      metrics: proxyMetrics,
      // The supervisor's tunnels, not the config in force: during a reload its new tunnels
      // run (and say RUNNING) before the reload is done and the config in force follows.
      tunnel(name) {
        const end = localEndOf(supervisor.tunnels(), settings.mode, name);
        const s = end ? supervisor.status(end.hash) : undefined;
        return end && s ? { state: s.status, localHost: end.host, localPort: end.port } : undefined;
      },
      tunnelForLocalEndpoint(host, port) {
        const t = tunnelListeningOn(supervisor.tunnels(), settings.mode, host, port);
        const s = t ? supervisor.status(t.hash) : undefined;
        return t && s ? { name: t.name, hash: t.hash, status: s.status } : undefined;
      },
    });
    const metrics = createMetrics(engine, { also: [proxyMetrics.registry] });
    // The daemon writes the config file only here: on an explicit /config request.
    const configFile = new ConfigStore({
      path: settings.configPath,
      writer: 'api',
      mode: settings.mode,
      backupDir: defaultBackupDir(settings.configPath),
      keepBackups: 10,
      log,
    });
    const eventSlots = new EventStreamSlots();
    const tcpTerminal = createTerminalRoute({ engine, tokens: settings.tokens, log });
    const socketTerminal = createTerminalRoute({ engine, tokens: null, log });
    terminals = [tcpTerminal, socketTerminal];
    listeners = await startListeners({
      upgrade: { tcp: (req, socket, head) => tcpTerminal.upgrade(req, socket, head), socket: (req, socket, head) => socketTerminal.upgrade(req, socket, head) },
      tcpApp: createDaemonApp({ engine, configFile, transport: 'tcp', tokens: settings.tokens, proxy, metrics, eventSlots }),
      // The proxy's endpoints skip Hono (same routes, same answers): no WHATWG Request per call.
      tcpFastPath: proxy.fastPath,
      socketApp: createDaemonApp({ engine, configFile, transport: 'socket', tokens: null, metrics, eventSlots }),
      listen: settings.listen,
      socketPath: settings.socketPath,
      tokens: settings.tokens,
      allowedHosts: settings.allowedHosts,
      allowedAccounts: settings.allowedAccounts,
      proxyKeysSet: () => proxyHasKeys(engine.config().proxy),
      corsOrigins: () => engine.config().proxy?.cors_origins ?? null,
      v1ErrorJson: v1RefusalJson,
      loading: () => stillLoading(engine),
    });
    // The API before the first reload, so that nothing (ssh -G look-ups, a thousand
    // tunnels handed to the supervisor) delays it: /health answers at once and says
    // `loading`; every other route answers 503 `loading` until that reload is done,
    // never an empty or partial config. `started` below marks the first reload done.
    log({ event: 'listening', listen: `${settings.listen.host}:${listeners.tcpPort}`, socket: settings.socketPath });

    // The watcher before the first load, so that a change made while it runs is not missed.
    watcher = await watchConfig(settings.configPath, () => void engine.reload().catch((e: unknown) => log({ event: 'reload_failed', error: String(e) })), {
      onError: (e) => log({ event: 'watch_error', error: e.message }),
    });
    await engine.reload();
  } catch (e) {
    await close();
    throw e;
  }
  log({
    event: 'started',
    listen: `${settings.listen.host}:${listeners.tcpPort}`,
    socket: settings.socketPath,
    config: settings.configPath,
    state_dir: settings.stateDir,
    mode: settings.mode,
    tunnels: engine.tunnels().length,
  });
  return { engine, tcpPort: listeners.tcpPort, close };
}

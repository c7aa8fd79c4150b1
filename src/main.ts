#!/usr/bin/env node
/**
 * Composition root of `tunnel-manager`: reads settings, builds the part asked for
 * (daemon, panel, proxy, check), wires signals and sets the exit code. With
 * cli/main.ts, the only module that reads the command line and the environment for
 * settings, handles signals or sets the exit code. Elsewhere `process` serves only as
 * the operating system's interface: signalling a child by pid (supervisor), the own
 * pid in temporary file names, the uid and umask around the API socket, and the
 * environment as the default where a caller passes none (`${VAR}` in proxy keys,
 * SSH_AUTH_SOCK in `check`).
 */
import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { cac } from 'cac';
import { defaultSocketPath, defaultStateDir } from './settings/default-paths.js';
import { checkExitCode, formatReport, runChecks } from './check/index.js';
import { formatProblem } from './check/report.js';
import { checkSshDir, showPathUnder } from './check/ssh-dir.js';
import { watchConfig } from './config/watch.js';
import { runMigrate } from './migrate/index.js';
import { batchLines, createLog, type Log } from './daemon/log.js';
import { startDaemon } from './daemon/serve.js';
import { createProxyReload } from './daemon/proxy-reload.js';
import { daemonSettings, panelSettings, proxySettings, type Account, type Flags } from './settings/settings.js';
import { startPanel } from './panel/index.js';
import { startProxyServer } from './proxy/index.js';
import { showAddress } from './edge/listen-failure.js';
import { apiListenOf, ownListeners } from './settings/own-listeners.js';
import type { Result } from './kernel/result.js';
import { packageVersion } from './kernel/version.js';
import { tidyHelp } from './cli/help.js';

const EXIT_USAGE = 2;
const SHUTDOWN_LIMIT_MS = 15_000;

/**
 * Everything this program writes to stderr, its log lines and its messages alike, in
 * one queue (their order kept), written at most LINE_WINDOW_MS after the line (log.ts).
 * What is queued is written on exit, and before a SIGTERM or SIGINT that comes before
 * the command has its own handler (onShutdown) ends the process as it would have.
 */
const stderr = batchLines((text) => process.stderr.write(text));
process.on('exit', stderr.flush);
const flushThenDie = (signal: NodeJS.Signals) => {
  stderr.flush();
  process.removeListener(signal, flushThenDie);
  process.kill(process.pid, signal);
};
process.on('SIGTERM', flushThenDie);
process.on('SIGINT', flushThenDie);

const log: Log = createLog(stderr.write);

function account(): Account {
  let home = homedir();
  try {
    home = userInfo().homedir;
  } catch {
    // No passwd entry for this uid (a container started with --user): HOME it is.
  }
  const uid = process.getuid?.() ?? 0;
  return {
    home,
    // Relative paths in the settings are taken from here, once (SPEC §3).
    cwd: process.cwd(),
    uid,
    hasUserSshConfig: existsSync(join(home, '.ssh', 'config')),
    defaultSocketPath: defaultSocketPath(process.env, uid),
    defaultStateDir: defaultStateDir(process.env, home),
  };
}

/**
 * The settings, or exit 2 with every problem. Settings that were set but are not used
 * (the reference implementation's, or one overridden by another) are reported: as log
 * lines by the long-running commands, as plain lines by the others.
 */
function settingsOrExit<T extends { warnings: string[] }>(r: Result<T, string[]>, how: 'log' | 'text' = 'log'): T | null {
  if (r.ok) {
    for (const w of r.value.warnings) {
      if (how === 'log') log({ event: 'setting_warning', warning: w });
      else stderr.write(`tunnel-manager: warning: ${w}\n`);
    }
    return r.value;
  }
  for (const p of r.error) stderr.write(`tunnel-manager: ${p}\n`);
  process.exitCode = EXIT_USAGE;
  return null;
}

/**
 * Runs `close` once on SIGTERM/SIGINT (or a crash), bounded in time: a second
 * signal or the time limit exits at once — after the supervisor has had its chance
 * to end the ssh children, which also die with us through execa's cleanup.
 */
function onShutdown(close: () => Promise<void>): void {
  let started = false;
  const stop = (why: string, code: number) => {
    if (started) {
      log({ event: 'shutdown_forced', why });
      process.exit(code || 1);
    }
    started = true;
    log({ event: 'shutdown', why });
    const limit = setTimeout(() => {
      log({ event: 'shutdown_timeout', limit_ms: SHUTDOWN_LIMIT_MS });
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    limit.unref();
    close()
      .catch((e: unknown) => log({ event: 'shutdown_failed', error: String(e) }))
      .finally(() => {
        clearTimeout(limit);
        process.exitCode = code;
        log({ event: 'stopped', exit_code: code });
      });
  };
  process.removeListener('SIGTERM', flushThenDie);
  process.removeListener('SIGINT', flushThenDie);
  process.on('SIGTERM', () => stop('SIGTERM', 0));
  process.on('SIGINT', () => stop('SIGINT', 0));
  // A bug must not leave ssh children behind: shut down in order, then exit non-zero.
  process.on('uncaughtException', (e) => {
    log({ event: 'crash', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    stop('uncaughtException', 1);
  });
  process.on('unhandledRejection', (e) => {
    log({ event: 'crash', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    stop('unhandledRejection', 1);
  });
}

/**
 * The SSH directory, as `check` and the container's entrypoint judge it: what ssh
 * itself refuses stops the start with the fix; what it accepts is logged with the fix.
 */
async function sshDirUsable(sshConfigPath: string | null): Promise<boolean> {
  if (sshConfigPath === null) return true;
  const dir = dirname(sshConfigPath);
  // ssh needs the folder only once a tunnel runs: start without it (no tunnels yet, the
  // API, the panel); each tunnel fails with ssh's reason, the config it cannot open.
  if (!existsSync(dir)) {
    log({ event: 'ssh_dir_missing', where: dir, warning: `the SSH directory ${dir} does not exist: starting without it; tunnels cannot run until ${sshConfigPath} is there`, fix: `create it (mkdir -p -m 700 ${dir}) or, in a container, mount your SSH directory there (-v ~/.ssh:${dir}:ro)` });
    return true;
  }
  const found = await checkSshDir(dir, sshConfigPath, process.getuid?.() ?? 0, showPathUnder(dir, undefined));
  for (const w of found.warned) log({ event: 'ssh_dir_warning', where: w.where, warning: w.what, fix: w.fix });
  if (found.refused.length === 0) return true;
  stderr.write(`tunnel-manager: the SSH directory ${dir} is not usable (ssh refuses these):\n${found.refused.map(formatProblem).join('\n')}\n`);
  process.exitCode = 1;
  return false;
}

async function serve(flags: Flags): Promise<void> {
  const settings = settingsOrExit(daemonSettings(flags, process.env, account()));
  if (!settings) return;
  if (!(await sshDirUsable(settings.sshConfigPath))) return;
  try {
    const daemon = await startDaemon(settings, log, process.env);
    onShutdown(daemon.close);
    // The usual daemon convention: SIGHUP reads the config file again now.
    process.on('SIGHUP', () => void daemon.engine.reload().catch((e: unknown) => log({ event: 'reload_failed', error: String(e) })));
  } catch (e) {
    stderr.write(`tunnel-manager: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}

async function panel(flags: Flags): Promise<void> {
  const settings = settingsOrExit(panelSettings(flags, process.env, account()));
  if (!settings) return;
  try {
    const running = await startPanel({ ...settings, log });
    log({ event: 'panel_started', listen: `${settings.listen.host}:${running.port}`, config: running.config.path, config_from: running.config.source, api: settings.apiUrl });
    onShutdown(running.close);
  } catch (e) {
    stderr.write(`tunnel-manager panel: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}

async function proxy(flags: Flags): Promise<void> {
  const settings = settingsOrExit(proxySettings(flags, process.env, account()));
  if (!settings) return;
  const proxyConfig = createProxyReload({ configPath: settings.configPath, mode: settings.mode, log });
  // The watcher before the first load (a change made meanwhile is not missed), and
  // closed again when the listener cannot start: an open watcher would keep the
  // process alive after the error line.
  let watcher: { close(): Promise<void> } | null = null;
  try {
    watcher = await watchConfig(settings.configPath, () => void proxyConfig.reload());
    await proxyConfig.reload();
    const server = await startProxyServer({ host: settings.listen.host, port: settings.listen.port, allowedHosts: settings.allowedHosts, allowedAccounts: settings.allowedAccounts, deps: { getConfig: proxyConfig.config, env: process.env, log } });
    log({ event: 'proxy_started', listen: showAddress(settings.listen.host, server.port) });
    process.on('SIGHUP', () => void proxyConfig.reload());
    const open = watcher;
    onShutdown(async () => {
      await open.close();
      await server.close();
    });
  } catch (e) {
    await watcher?.close().catch(() => undefined);
    stderr.write(`tunnel-manager proxy: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}

async function check(flags: Flags): Promise<void> {
  const settings = settingsOrExit(daemonSettings({ ...flags, listen: undefined }, { ...process.env, TUNNEL_API_LISTEN: undefined }, account()), 'text');
  if (!settings) return;
  const report = await runChecks({
    configPath: settings.configPath,
    sshConfigPath: settings.sshConfigPath,
    stateDir: settings.stateDir,
    sshBin: settings.sshBin,
    mode: settings.mode,
    // Where the daemon (and the panel) this environment starts would listen, for the exposure warnings.
    ownListeners: ownListeners(apiListenOf(flags, process.env), process.env),
    ...(process.env.SSH_DIR_HOST ? { hostSshDir: process.env.SSH_DIR_HOST } : {}),
  });
  // Its stdout after what it has told stderr so far, as when both go to one terminal.
  stderr.flush();
  process.stdout.write(formatReport(report));
  process.exitCode = checkExitCode(report);
}

async function migrateCommand(flags: Flags & { write?: boolean }): Promise<void> {
  const settings = settingsOrExit(daemonSettings({ ...flags, listen: undefined }, { ...process.env, TUNNEL_API_LISTEN: undefined }, account()), 'text');
  if (!settings) return;
  // Told as the user named it: the path under this folder, else the absolute one.
  const under = relative(process.cwd(), settings.configPath);
  const shownPath = under !== '' && !under.startsWith('..') && !isAbsolute(under) ? under : settings.configPath;
  const r = await runMigrate({ configPath: settings.configPath, shownPath, write: flags.write === true });
  stderr.flush();
  process.stdout.write(r.out);
  stderr.write(r.err);
  process.exitCode = r.code;
}

function main(argv: string[]): void {
  const cli = cac('tunnel-manager');
  const daemonFlags = (c: ReturnType<typeof cli.command>) =>
    c
      .option('--config <path>', 'the YAML file of tunnels (TUNNEL_CONFIG, default config/config.yaml)')
      .option('--listen <host:port>', 'HTTP API and /v1 proxy (TUNNEL_API_LISTEN, default 127.0.0.1:8080)')
      .option('--socket <path>', 'unix socket of the API, mode 0600 (TUNNEL_SOCKET)')
      .option('--ssh-config <path>', 'passed to ssh as -F (SSH_CONFIG, default ~/.ssh/config if it exists)')
      .option('--ssh-bin <path>', 'the OpenSSH client (SSH_BIN, default ssh)')
      .option('--state-dir <path>', 'desired states, known_hosts, child pids (TUNNEL_STATE_DIR)')
      .option('--direction-mode <mode>', 'default or ssh-standard (TUNNEL_DIRECTION_MODE)');

  const run = (task: (flags: Flags) => Promise<void>) => (flags: Flags) => {
    void task(flags);
  };
  // No command runs the daemon: the usage line's [command] may be left out, and serve says so.
  daemonFlags(cli.command('', 'run the daemon (same as serve)').usage('[command] [options]')).action(run(serve));
  daemonFlags(cli.command('serve', 'run the daemon (also without a command): supervisor, HTTP API, unix socket, /v1 model proxy for OpenAI and Anthropic clients')).action(run(serve));
  daemonFlags(cli.command('check', 'check the config file and the SSH setup; prints every problem with its fix')).action(run(check));
  cli
    .command('migrate', "turn a config written for autossh-tunnel-dockerized into valid YAML with the same hashes; prints the diff and every hash that changes")
    .option('--config <path>', 'the YAML file of tunnels (TUNNEL_CONFIG, default config/config.yaml)')
    .option('--write', 'replace the file (atomically, after a backup) instead of only printing the diff')
    .action(run(migrateCommand));
  cli
    .command('panel', 'run the web panel')
    .option('--listen <host:port>', 'the page (PANEL_LISTEN, default 127.0.0.1:5000; non-loopback needs PANEL_TOKEN)')
    .option('--config <path>', "the file it edits (TUNNEL_CONFIG, default the file the daemon runs, as the daemon says)")
    .option('--api <url>', "the daemon's API (TUNNEL_API_URL, default http://127.0.0.1:8080)")
    .option('--ssh-config <path>', 'Host entries offered as remote_host (SSH_CONFIG)')
    .option('--direction-mode <mode>', 'default or ssh-standard (TUNNEL_DIRECTION_MODE)')
    .action(run(panel));
  cli
    .command('proxy', 'run the /v1 model proxy (OpenAI and Anthropic formats) alone, without the daemon')
    .option('--config <path>', 'the YAML file with the proxy: section (TUNNEL_CONFIG)')
    .option('--listen <host:port>', 'where to serve /v1 (TUNNEL_API_LISTEN, default 127.0.0.1:8080)')
    .action(run(proxy));
  cli.help((sections) => tidyHelp(sections, 'tunnel-manager', cli.commands, cli.matchedCommand));
  cli.version(packageVersion());

  try {
    cli.parse(argv, { run: false });
    const name = cli.matchedCommandName;
    if (cli.options.help || cli.options.version) return;
    if (cli.matchedCommand === undefined && cli.args.length > 0) {
      stderr.write(`tunnel-manager: unknown command ${JSON.stringify(name ?? cli.args[0])}; see tunnel-manager --help\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    void cli.runMatchedCommand();
  } catch (e) {
    stderr.write(`tunnel-manager: ${e instanceof Error ? e.message : String(e)}; see tunnel-manager --help\n`);
    process.exitCode = EXIT_USAGE;
  }
}

main(process.argv);

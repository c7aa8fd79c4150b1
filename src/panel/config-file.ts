import { setTimeout as sleep } from 'node:timers/promises';
import type { DaemonClient } from './daemon-client.js';

/**
 * Which file the panel edits. Named (--config, TUNNEL_CONFIG): that one. Not named: the
 * file the daemon runs, as the daemon reports it (its absolute path, on
 * /health/details), so that a panel started in another folder than the daemon edits
 * the daemon's file rather than a `config/config.yaml` of its own folder — a file the
 * daemon never reads, whose page would call every running tunnel one the file does not
 * list. Only when the daemon cannot be asked is the default (config/config.yaml of the
 * panel's folder, made absolute by the settings) taken, with a warning in the log.
 */
export interface PanelConfigFile {
  path: string;
  /** Where the path came from: the panel's own setting, the daemon, or the default. */
  source: 'setting' | 'daemon' | 'default';
}

export interface ConfigFileOptions {
  /** --config / TUNNEL_CONFIG, absolute; null when neither is given. */
  given: string | null;
  /** The default's absolute path, for a daemon that cannot be asked. */
  fallback: string;
  daemon: DaemonClient;
  log: (e: Record<string, unknown>) => void;
  /** How often to ask a daemon that does not answer yet (it may be starting beside the panel), and how far apart. */
  attempts?: number;
  intervalMs?: number;
  signal?: AbortSignal;
}

/** The daemon's config file, or why it could not say. */
async function askDaemon(daemon: DaemonClient): Promise<{ path: string } | { why: string }> {
  const r = await daemon.get<{ config_path?: unknown }>('/health/details');
  if (!r.ok) return { why: r.error.message };
  const path = r.value.config_path;
  if (typeof path !== 'string' || !path.startsWith('/')) return { why: 'its /health/details names no config file (a daemon older than this panel)' };
  return { path };
}

export async function panelConfigFile(opts: ConfigFileOptions): Promise<PanelConfigFile> {
  if (opts.given !== null) {
    // Both named: say so when they differ, since the page then shows the daemon's tunnels beside another file.
    const theirs = await askDaemon(opts.daemon);
    if ('path' in theirs && theirs.path !== opts.given) {
      opts.log({ event: 'panel_config_differs', config: opts.given, daemon_config: theirs.path, warning: `the panel edits ${opts.given}, the daemon at ${opts.daemon.where} runs ${theirs.path}: saves here do not change its tunnels; leave --config and TUNNEL_CONFIG unset to edit the daemon's file` });
    }
    return { path: opts.given, source: 'setting' };
  }
  const attempts = Math.max(1, opts.attempts ?? 10);
  let why = '';
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(opts.intervalMs ?? 500, undefined, opts.signal ? { signal: opts.signal } : undefined);
    const theirs = await askDaemon(opts.daemon);
    if ('path' in theirs) return { path: theirs.path, source: 'daemon' };
    why = theirs.why;
  }
  opts.log({ event: 'panel_config_default', config: opts.fallback, warning: `could not ask the daemon at ${opts.daemon.where} which config file it runs (${why}); editing ${opts.fallback}. Set --config or TUNNEL_CONFIG to the daemon's file` });
  return { path: opts.fallback, source: 'default' };
}

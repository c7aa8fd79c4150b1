import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatProblem, loadConfigFile } from '../config/load.js';
import { EMPTY_CONFIG, type Config, type LoadResult } from '../config/types.js';
import type { SupervisorApi } from '../supervisor/types.js';
import type { DirectionMode } from '../tunnel/spec.js';
import type { OwnListener } from '../tunnel/exposure.js';
import { createExposureLog } from './exposure-log.js';
import { createReloadQueue } from './reload-queue.js';
import { startable } from './startable.js';
import type { ConfigHealth, EngineApi } from '../api/engine-api.js';
import type { ReloadRecord } from '../api/types.js';
import { unreachable } from '../kernel/unreachable.js';

export interface ConfigReloadOptions {
  configPath: string;
  mode: DirectionMode;
  supervisor: SupervisorApi;
  log: (entry: Record<string, unknown>) => void;
  now?: () => Date;
  /** How long an empty file must stay empty before it stops the tunnels (see settledLoad). */
  emptySettleMs?: number;
  /** The product's own listeners (the API, the panel), for the exposure warnings; read at each load. None: only open listeners are told. */
  ownListeners?: () => readonly OwnListener[];
}

/** At least the config watcher's debounce, so that a writer's truncate and write are one event to it. */
const EMPTY_SETTLE_MS = 250;

/**
 * What a missing file means, said as it is: before any file ran there is no last good
 * config to keep (the daemon runs no tunnels and waits for the file); after one ran,
 * its tunnels keep running until the file is back (SPEC §2).
 */
export function missingFileMessage(path: string, lastGood: { at: string; tunnels: number } | null): string {
  const watching = `the daemon watches ${dirname(path)} and loads the file when it appears`;
  if (lastGood === null) return `${path} does not exist yet: no config has run, so no tunnel runs; ${watching}`;
  const count = lastGood.tunnels === 1 ? '1 tunnel' : `${lastGood.tunnels} tunnels`;
  return `${path} does not exist: the config last applied at ${lastGood.at} keeps running (${count}) until the file is back; ${watching}`;
}

/** The health of a file applied whole (or of none yet, before the first reload): nothing refused, held or missing. */
function appliedWhole(path: string, warnings: string[], exposure: ConfigHealth['exposure'], loadedAt: string | null): ConfigHealth {
  return { path, valid: true, applied: 'all', error: null, problems: [], rejected: [], held: [], missing: false, warnings, exposure, loaded_at: loadedAt };
}

export interface ConfigReload extends EngineApi {
  /** The config in force: the tunnels the supervisor was last given, and the proxy section. */
  config(): Config;
}

/**
 * The daemon's reload, and the config in force it leaves: read → validate → decide what
 * may change → apply (SPEC §3, §5), one reload at a time (reload-queue.ts). A file without problems is applied whole: added tunnels start,
 * removed ones stop, changed ones restart. A file with problems never stops or changes
 * a running tunnel: its valid new entries start and everything else stays as it was
 * (`held`). A file that is not usable at all, or missing, changes nothing. The
 * problems are reported (per entry) until a file without problems replaces it.
 */
export function createConfigReload(opts: ConfigReloadOptions): ConfigReload {
  const now = opts.now ?? (() => new Date());
  let current: Config = EMPTY_CONFIG;
  let health: ConfigHealth = appliedWhole(opts.configPath, [], [], null);
  /** When a file was last applied (whole or in part); null while none has been. */
  let lastAppliedAt: string | null = null;
  const tellExposure = createExposureLog(opts.mode, opts.ownListeners ?? (() => []), opts.log);
  const listeners = new Set<(r: ReloadRecord) => void>();
  const unchangedRecord = (at: string, error: string): ReloadRecord => ({
    type: 'reload',
    at,
    ok: false,
    error,
    added: [],
    removed: [],
    unchanged: current.tunnels.map((t) => t.hash),
    changed: [],
    left_out: health.rejected.length,
  });

  /**
   * The file as loaded, unless it is empty while tunnels run: a file is empty for a moment
   * whenever it is rewritten in place (truncated, then written), and a reload that falls
   * in that moment (SIGHUP, the watcher's at-once read of a renamed file that its writer
   * then rewrote) would stop every tunnel. An empty file is taken once it stayed empty.
   */
  async function settledLoad(): Promise<LoadResult> {
    const load = await loadConfigFile(opts.configPath, { mode: opts.mode });
    if (load.kind !== 'ok' || load.config.tunnels.length > 0 || current.tunnels.length === 0) return load;
    const size = await stat(opts.configPath).then((s) => s.size, () => -1);
    // Written since (or a file that says "no tunnels" in so many words): read as it is now.
    if (size !== 0) return loadConfigFile(opts.configPath, { mode: opts.mode });
    await sleep(opts.emptySettleMs ?? EMPTY_SETTLE_MS);
    return loadConfigFile(opts.configPath, { mode: opts.mode });
  }

  async function reloadOnce(): Promise<ReloadRecord> {
    const at = now().toISOString();
    const load: LoadResult = await settledLoad();
    let record: ReloadRecord;
    switch (load.kind) {
      case 'missing':
        health = { ...health, missing: true, valid: true, applied: 'none', error: null, problems: [], rejected: [], loaded_at: at };
        record = unchangedRecord(at, missingFileMessage(opts.configPath, lastAppliedAt === null ? null : { at: lastAppliedAt, tunnels: current.tunnels.length }));
        break;
      case 'invalid': {
        const error = load.problems.map(formatProblem).join('\n');
        health = { ...health, missing: false, valid: false, applied: 'none', error, problems: load.problems, rejected: [], loaded_at: at };
        record = unchangedRecord(at, error);
        break;
      }
      case 'partial': {
        // Running tunnels stay exactly as they are (their spec included); new valid entries join
        // them, except one that would listen where a tunnel kept from an earlier file listens.
        const inForce = new Set(current.tunnels.map((t) => t.hash));
        const inFile = new Set(load.config.tunnels.map((t) => t.hash));
        const held = current.tunnels.filter((t) => !inFile.has(t.hash));
        const { start, waiting } = startable(load.config.tunnels.filter((t) => !inForce.has(t.hash)), held, load.positions, opts.mode);
        const tunnels = [...current.tunnels, ...start];
        const report = await opts.supervisor.apply(tunnels);
        current = { tunnels, proxy: load.proxyValid ? load.config.proxy : current.proxy };
        const problems = [...load.problems, ...waiting.flatMap((w) => w.problems)].sort((a, b) => a.line - b.line || a.column - b.column);
        const rejected = [...load.rejected, ...waiting].sort((a, b) => a.index - b.index);
        const error = problems.map(formatProblem).join('\n');
        health = {
          ...health,
          missing: false,
          valid: false,
          applied: 'partial',
          error,
          problems,
          rejected,
          held: held.map((t) => t.hash),
          warnings: load.warnings.map(formatProblem),
          exposure: tellExposure(tunnels),
          loaded_at: at,
        };
        lastAppliedAt = at;
        record = { type: 'reload', at, ok: true, error, ...report, changed: report.changed ?? [], left_out: rejected.length };
        break;
      }
      case 'ok': {
        const report = await opts.supervisor.apply(load.config.tunnels);
        current = load.config;
        health = appliedWhole(opts.configPath, load.warnings.map(formatProblem), tellExposure(current.tunnels), at);
        lastAppliedAt = at;
        record = { type: 'reload', at, ok: true, error: null, ...report, changed: report.changed ?? [], left_out: 0 };
        break;
      }
      default:
        return unreachable(load, 'config load result');
    }
    opts.log({
      event: 'reload',
      ok: record.ok,
      added: record.added.length,
      removed: record.removed.length,
      unchanged: record.unchanged.length,
      left_out: record.left_out,
      held: health.held.length,
      error: record.error,
    });
    for (const l of listeners) l(record);
    return record;
  }

  const queue = createReloadQueue(reloadOnce);

  return {
    supervisor: opts.supervisor,
    config: () => current,
    tunnels: () => current.tunnels,
    configHealth: () => health,
    reload: () => queue.request(),
    subscribeReloads(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

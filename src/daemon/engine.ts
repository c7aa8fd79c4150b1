import { formatProblem, loadConfigFile } from '../config/load.js';
import { EMPTY_CONFIG, type Config } from '../config/types.js';
import type { SupervisorApi } from '../supervisor/types.js';
import type { DirectionMode } from '../tunnel/spec.js';
import type { ConfigHealth, EngineApi } from '../api/engine-api.js';
import type { ReloadRecord } from '../api/types.js';
import { unreachable } from '../unreachable.js';

export interface EngineOptions {
  configPath: string;
  mode: DirectionMode;
  supervisor: SupervisorApi;
  log: (entry: Record<string, unknown>) => void;
  now?: () => Date;
}

export interface Engine extends EngineApi {
  /** The config in force (the last good one). */
  config(): Config;
}

/**
 * The config in force and the reload path: read → validate → apply. An invalid or
 * missing file changes nothing (the last good config keeps running) and is reported
 * until a valid file replaces it. Reloads never overlap: a request that arrives while
 * one runs is folded into a single follow-up, so the file's latest state always gets
 * applied exactly once more, and never twice at the same time.
 */
export function createEngine(opts: EngineOptions): Engine {
  const now = opts.now ?? (() => new Date());
  let current: Config = EMPTY_CONFIG;
  let health: ConfigHealth = {
    path: opts.configPath,
    valid: true,
    error: null,
    problems: [],
    missing: false,
    warnings: [],
    loaded_at: null,
  };
  const listeners = new Set<(r: ReloadRecord) => void>();

  let running: Promise<ReloadRecord> | null = null;
  let queued: Promise<ReloadRecord> | null = null;

  async function reloadOnce(): Promise<ReloadRecord> {
    const at = now().toISOString();
    const load = await loadConfigFile(opts.configPath, { mode: opts.mode });
    let record: ReloadRecord;
    switch (load.kind) {
      case 'missing':
        health = { ...health, missing: true, valid: true, error: null, problems: [], loaded_at: at };
        record = {
          type: 'reload',
          at,
          ok: false,
          error: `${opts.configPath} does not exist; the last good config keeps running`,
          added: [],
          removed: [],
          unchanged: current.tunnels.map((t) => t.hash),
          changed: [],
        };
        break;
      case 'invalid': {
        const error = load.problems.map(formatProblem).join('\n');
        health = { ...health, missing: false, valid: false, error, problems: load.problems, loaded_at: at };
        record = { type: 'reload', at, ok: false, error, added: [], removed: [], unchanged: current.tunnels.map((t) => t.hash), changed: [] };
        break;
      }
      case 'ok': {
        const report = await opts.supervisor.apply(load.config.tunnels);
        current = load.config;
        health = {
          ...health,
          missing: false,
          valid: true,
          error: null,
          problems: [],
          warnings: load.warnings.map(formatProblem),
          loaded_at: at,
        };
        record = { type: 'reload', at, ok: true, error: null, ...report, changed: report.changed ?? [] };
        break;
      }
      default:
        return unreachable(load, 'config load result');
    }
    opts.log({ event: 'reload', ok: record.ok, added: record.added.length, removed: record.removed.length, unchanged: record.unchanged.length, error: record.error });
    for (const l of listeners) l(record);
    return record;
  }

  function reload(): Promise<ReloadRecord> {
    if (queued) return queued;
    if (running) {
      queued = running
        .catch(() => undefined)
        .then(() => {
          running = queued;
          queued = null;
          return reloadOnce();
        });
      const mine = queued;
      void mine.finally(() => {
        if (running === mine) running = null;
      });
      return mine;
    }
    const mine = reloadOnce();
    running = mine;
    void mine.catch(() => undefined).finally(() => {
      if (running === mine) running = null;
    });
    return mine;
  }

  return {
    supervisor: opts.supervisor,
    config: () => current,
    tunnels: () => current.tunnels,
    configHealth: () => health,
    reload,
    subscribeReloads(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

import type { ConfigProblem } from '../config/types.js';
import type { SupervisorApi } from '../supervisor/types.js';
import type { TunnelSpec } from '../tunnel/spec.js';
import type { ReloadRecord } from './types.js';

/** The config file's state as /health, /status and the panel report it. */
export interface ConfigHealth {
  path: string;
  /** False while the file on disk is invalid (the last good config keeps running). */
  valid: boolean;
  /** The problems, formatted one per line with line and column; null when valid. */
  error: string | null;
  problems: ConfigProblem[];
  /** True when the file does not exist (the last good config, or none, keeps running). */
  missing: boolean;
  /** Warnings of the config in force (unknown keys). */
  warnings: string[];
  /** ISO 8601 of the last reload attempt. */
  loaded_at: string | null;
}

/**
 * The running daemon as its API sees it: the supervisor plus the config in force.
 * Built by the composition root; the API only reads it and calls its methods.
 */
export interface EngineApi {
  supervisor: SupervisorApi;
  /** Tunnels of the config in force (the last good one). */
  tunnels(): TunnelSpec[];
  configHealth(): ConfigHealth;
  /** Reads the file now and applies it; one reload at a time (a request during one waits for the next). */
  reload(): Promise<ReloadRecord>;
  subscribeReloads(listener: (r: ReloadRecord) => void): () => void;
}

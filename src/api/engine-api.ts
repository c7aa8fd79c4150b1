import type { ConfigProblem, RejectedEntry } from '../config/types.js';
import type { SupervisorApi } from '../supervisor/types.js';
import type { Exposure } from '../tunnel/exposure.js';
import type { TunnelSpec } from '../tunnel/spec.js';
import type { ReloadRecord } from './types.js';

/** The config file's state as /health, /status and the panel report it. */
export interface ConfigHealth {
  path: string;
  /** False while the file on disk has any problem. */
  valid: boolean;
  /**
   * How much of the file on disk is in force: `all`; `partial` (its valid entries run,
   * the entries with problems are left out, and nothing that was running was stopped or
   * changed); `none` (not usable, or missing: the last good config keeps running).
   */
  applied: 'all' | 'partial' | 'none';
  /** The problems, formatted one per line with line and column; null when valid. */
  error: string | null;
  problems: ConfigProblem[];
  /** Entries left out because of their problems (the others run). */
  rejected: RejectedEntry[];
  /** Hashes of running tunnels the file no longer has as they are: kept until a file without problems. */
  held: string[];
  /** True when the file does not exist (the last good config, or none, keeps running). */
  missing: boolean;
  /** Warnings of the config in force (unknown keys). */
  warnings: string[];
  /** What the tunnels in force open to more than this machine (SPEC §5), each in the words of tunnel/exposure.ts. */
  exposure: TunnelExposure[];
  /** ISO 8601 of the last reload attempt. */
  loaded_at: string | null;
}

/** One exposure warning of a tunnel in force. */
export interface TunnelExposure {
  hash: string;
  name: string;
  /** The entry's line in the file it was loaded from. */
  line: number;
  exposure: Exposure;
  /** The sentence (exposureText), naming who can reach what. */
  message: string;
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

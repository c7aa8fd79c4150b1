import type { ProxyConfig } from './proxy-schema.js';
import type { TunnelSpec } from '../tunnel/spec.js';

/**
 * One thing wrong (or worth a warning) in the config file: where it is, which field,
 * what was expected and what was found. Line and column are 1-based; 0 when the
 * problem is about the whole file (too big, unreadable).
 */
export interface ConfigProblem {
  line: number;
  column: number;
  /** A path such as `tunnels[2].local_port`, or `(file)`. */
  field: string;
  expected: string;
  found: string;
}

/** A config file that passed validation: what the daemon runs. */
export interface Config {
  tunnels: TunnelSpec[];
  /** The `proxy:` section, or null when the file has none. */
  proxy: ProxyConfig | null;
}

/** An entry of `tunnels:` left out because of its problems; every other entry still runs. */
export interface RejectedEntry {
  /** 0-based position in `tunnels:`. */
  index: number;
  line: number;
  column: number;
  /** The name as written (`unnamed` when none), to tell the entry by; null when it is not a map. */
  name: string | null;
  problems: ConfigProblem[];
}

/**
 * What reading the config file gave. `missing` is not an error: the daemon runs
 * with no tunnels (at start) or keeps the last good config (when it was deleted).
 * `partial`: some entries (or the proxy section) have problems; `config` holds the
 * valid entries, and the proxy section only when it is valid. `invalid`: nothing in
 * the file can be used (not YAML, or a problem that concerns every entry).
 */
export type LoadResult =
  | { kind: 'ok'; config: Config; warnings: ConfigProblem[] }
  | {
      kind: 'partial';
      config: Config;
      proxyValid: boolean;
      rejected: RejectedEntry[];
      /** Where each valid entry is, by hash, for problems found later (a running tunnel in the way). */
      positions: { hash: string; index: number; line: number; column: number }[];
      /** Every problem, sorted by position (those of rejected entries and of the proxy section). */
      problems: ConfigProblem[];
      warnings: ConfigProblem[];
    }
  | { kind: 'missing' }
  | { kind: 'invalid'; problems: ConfigProblem[] };

export const EMPTY_CONFIG: Config = { tunnels: [], proxy: null };

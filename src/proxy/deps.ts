import type { ProxyConfig } from '../config/proxy-schema.js';
import type { ProxyMetrics } from './observe/metrics.js';

/** What the proxy may know of a tunnel: its state and where its local end listens. */
export interface TunnelView {
  state: string;
  localHost: string;
  localPort: number;
}

/** Finds a tunnel by name; undefined when there is none with a local end. */
export type TunnelLookup = (name: string) => TunnelView | undefined;

/** What the proxy needs from the program that hosts it. */
export interface ProxyDeps {
  /** The current `proxy:` section; read on every request because the config reloads live. Null: no proxy section. */
  getConfig(): ProxyConfig | null;
  /** Where `${VAR}` in keys is read from; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * The tunnel whose local end is host:port, if any, so that a 502 can say
   * "127.0.0.1:11434 is the local end of tunnel 'llm' (…), which is RETRYING, not RUNNING".
   */
  tunnelForLocalEndpoint?(host: string, port: number): { name: string; hash: string; status: string } | undefined;
  /**
   * The tunnels of providers bound with `tunnel:`. Absent where no tunnels run
   * (`tunnel-manager proxy`): such providers are refused with a message saying so.
   */
  tunnel?: TunnelLookup;
  /** Where the request series go; the host serves its registry on /metrics. */
  metrics?: ProxyMetrics;
  /** Structured log sink. Entries never hold a key. */
  log?(entry: Record<string, unknown>): void;
  /** Largest request body accepted, in bytes; 16 MiB by default. */
  maxBodyBytes?: number;
  /** The clock for resting providers (tests pass their own). */
  now?(): number;
}

export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

import type { Direction } from './spec.js';

/**
 * SPEC §5 states. RUNNING means ssh reported the forward established, not merely
 * that a process exists. AUTH_REQUIRED: an interactive tunnel waits for a person to
 * log in (SPEC §13). Where each one comes from: src/supervisor/tunnel/tunnel-lifecycle.ts.
 */
export type TunnelState = 'STOPPED' | 'STARTING' | 'RUNNING' | 'RETRYING' | 'FAILED' | 'AUTH_REQUIRED';
export const TUNNEL_STATES: readonly TunnelState[] = ['STOPPED', 'STARTING', 'RUNNING', 'RETRYING', 'FAILED', 'AUTH_REQUIRED'];

/** How the last ssh child ended. */
export interface LastExit {
  code: number | null;
  signal: string | null;
  /** ISO 8601. */
  at: string;
}

/** The status record of SPEC §5, as the API returns it. Ports are the text as written. */
export interface StatusRecord {
  hash: string;
  name: string;
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: Direction;
  status: TunnelState;
  pid: number | null;
  /** ISO 8601: when the tunnel entered `status`. */
  since: string;
  restarts: number;
  last_exit: LastExit | null;
  /** The meaningful line of ssh's stderr, classified (e.g. "authentication failed: Permission denied (publickey)"). */
  last_error: string | null;
  /** ISO 8601, while RETRYING. */
  next_retry_at: string | null;
  /** Whether the tunnel carries anything (SPEC §5); rules in tunnel/health.ts. */
  health: HealthRecord;
  /** The shared connection that carries the forward (SPEC §14); null for a tunnel with an ssh of its own. */
  connection: ConnectionRecord | null;
}

/** A shared connection as a status record names it. */
export interface ConnectionRecord {
  /** Stable while the tunnels' grouping (host and whole ssh option set) does not change. */
  id: string;
  /** The master ssh's pid, while one runs. */
  pid: number | null;
  state: 'down' | 'connecting' | 'awaiting_login' | 'up' | 'retrying' | 'stopping';
}

/** `health` as the API shows it. */
export interface HealthRecord {
  state: 'ok' | 'degraded' | 'unknown';
  /** Why, in a sentence; null when ok. */
  reason: string | null;
  /** ISO 8601: when state or reason last changed. */
  since: string;
}

/** What the user asked for a tunnel; persisted in the state dir. */
export type DesiredState = 'started' | 'stopped';

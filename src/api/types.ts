/**
 * The control API's wire types (SPEC §6). tunnel-cli imports these and nothing else
 * of the daemon, so the two sides agree on the shapes without sharing code.
 */
export type { StatusRecord, TunnelState, LastExit } from '../tunnel/status.js';
import type { TunnelState } from '../tunnel/status.js';

/** What one reload did; sent on /events as `{"type":"reload", ...}`. */
export interface ReloadRecord {
  type: 'reload';
  at: string;
  ok: boolean;
  /** The file's problems (invalid, missing, or entries left out when `ok` and `left_out` > 0), else null. */
  error: string | null;
  added: string[];
  removed: string[];
  unchanged: string[];
  /** Same hash, other ssh_options: restarted. */
  changed: string[];
  /** Entries of the file left out because of their problems (`error` lists them); 0 when none. */
  left_out: number;
}

/**
 * Every error body: `{"error": {"code", "message"}}`; `matches` only for an ambiguous
 * prefix; `fields` (per form field) and `general` only for a refused config write.
 */
export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; matches?: string[]; fields?: Record<string, string>; general?: string[] };
}

/** Error codes with their HTTP status. */
export const API_ERRORS = {
  invalid_hash: 400,
  invalid_body: 400,
  invalid_tunnel: 400,
  unauthorized: 401,
  tunnel_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  ambiguous_hash: 409,
  terminal_busy: 409,
  not_interactive: 409,
  already_running: 409,
  foreign_origin: 403,
  /** A body over the control API's limit (CONTROL_BODY_LIMIT). */
  request_too_large: 413,
  /** The file changed on disk since the client read it (If-Match), or while the write ran. */
  config_conflict: 409,
  /** The file cannot be edited without losing something (not YAML, not a map, over 1 MiB). */
  config_not_editable: 409,
  internal_error: 500,
  config_invalid: 503,
  too_many_streams: 503,
} as const;
export type ApiErrorCode = keyof typeof API_ERRORS;

/** GET /list: the entry as written in the config file, plus its `hash`, effective `name` and current `status`. */
export type ListRecord = Record<string, unknown> & { hash: string; name: string; status: TunnelState };

/** GET /health: always 200 while the daemon runs. */
export interface HealthBody {
  ok: true;
  config: {
    valid: boolean;
    error: string | null;
    missing: boolean;
    /** How much of the file on disk is in force: all, partial (entries with problems left out), none. */
    applied: 'all' | 'partial' | 'none';
    /** The entries left out, each with its problems (formatted with line and column). */
    rejected: { index: number; line: number; column: number; problems: string[] }[];
  };
}

/**
 * GET /auth/<hash> upgraded to a WebSocket: a person's terminal on an interactive
 * tunnel's login (SPEC §13). Binary frames carry the terminal's bytes both ways (what
 * ssh shows; what the person types); text frames carry these JSON messages.
 */
export type TerminalClientMessage = { type: 'resize'; cols: number; rows: number };

export type TerminalServerMessage =
  /** First message: the terminal is attached to this tunnel's login. */
  | { type: 'attached'; hash: string; name: string }
  /** Last message before the daemon closes: how the login ended (RUNNING: the forward is up). */
  | { type: 'end'; status: 'RUNNING' | 'FAILED' | 'STOPPED' | 'AUTH_REQUIRED'; message: string | null };

/** The largest frame a terminal may send (keystrokes and pastes, not files). */
export const TERMINAL_MAX_FRAME = 64 * 1024;
/** GET /logs/:hash, in the reference's shape: `log` is the lines joined by newlines, `lines` the same oldest first. */
export interface LogsBody {
  status: 'success';
  tunnel_hash: string;
  log: string;
  lines: string[];
}

/** GET /logs: one entry per tunnel with output; `modified` is when its last line arrived (ISO 8601). */
export interface LogsListEntry {
  hash: string;
  name: string;
  lines: number;
  modified: string | null;
}

/** A successful write of the reference's configuration API that has no record to return. */
export interface SuccessBody {
  status: 'success';
  message: string;
}

export type { ReferenceTunnel } from './reference-tunnel.js';


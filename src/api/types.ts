/**
 * The control API's wire types (SPEC §6), most of them taken from the schemas in
 * schemas.ts, with which tunnel-cli checks the daemon's answers: one description of
 * each body for both sides.
 */
import type { z } from 'zod';
import type { exposureRecordSchema, healthBodySchema, healthConfigSchema, healthDetailsSchema, listRecordSchema, logsBodySchema, logsListSchema, reloadRecordSchema, terminalServerMessageSchema } from './schemas.js';
export type { StatusRecord, TunnelState, LastExit } from '../tunnel/status.js';
import type { ReferenceTunnel } from './reference-tunnel.js';

/** What one reload did; sent on /events as `{"type":"reload", ...}`. */
export type ReloadRecord = z.infer<typeof reloadRecordSchema>;

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
  /** The daemon has not finished its first load of the config file (see api/loading.ts). */
  loading: 503,
} as const;
export type ApiErrorCode = keyof typeof API_ERRORS;

/** GET /list: the entry as written in the config file, plus its `hash`, effective `name` and current `status`. */
export type ListRecord = z.infer<typeof listRecordSchema>;

/** GET /health (see healthBodySchema): `config` is null while the first load runs. */
export type HealthBody = z.infer<typeof healthBodySchema>;
/** GET /health/details (see healthDetailsSchema): /health with the config's problems and the tunnels' exposure. */
export type HealthDetails = z.infer<typeof healthDetailsSchema>;
export type HealthConfig = z.infer<typeof healthConfigSchema>;
export type ExposureRecord = z.infer<typeof exposureRecordSchema>;

/**
 * GET /auth/<hash> upgraded to a WebSocket: a person's terminal on an interactive
 * tunnel's login (SPEC §13). Binary frames carry the terminal's bytes both ways (what
 * ssh shows; what the person types); text frames carry these JSON messages.
 */
export type TerminalClientMessage = { type: 'resize'; cols: number; rows: number };

export type TerminalServerMessage = z.infer<typeof terminalServerMessageSchema>;

/** The largest frame a terminal may send (keystrokes and pastes, not files). */
export const TERMINAL_MAX_FRAME = 64 * 1024;
/** GET /logs/:hash and GET /logs (see their schemas). */
export type LogsBody = z.infer<typeof logsBodySchema>;
export type LogsListEntry = z.infer<typeof logsListSchema>[number];

/** A successful write of the reference's configuration API that has no record to return. */
export interface SuccessBody {
  status: 'success';
  message: string;
}

export type { ReferenceTunnel } from './reference-tunnel.js';

/**
 * The answer to `POST /config/new` and `POST|PUT /config/<hash>`: the tunnel in the
 * reference's shape, with the exposure warnings (SPEC §5) of it as the daemon runs it
 * (`[]` when it opens nothing beyond this machine).
 */
export interface WrittenTunnel extends ReferenceTunnel {
  warnings: string[];
}


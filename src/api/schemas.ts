/**
 * The control API's answers as zod schemas: the one description of each body, from
 * which types.ts takes its types, and with which a client (tunnel-cli) checks what a
 * daemon sent before using it. Imports nothing but zod, so that the CLI loads none of
 * the daemon. Records the daemon builds elsewhere (the status record, the reference
 * tunnel) are checked against their types at compile time below.
 */
import { z } from 'zod';
import type { StatusRecord } from '../tunnel/status.js';
import type { ReferenceTunnel } from './reference-tunnel.js';

const tunnelState = z.enum(['STOPPED', 'STARTING', 'RUNNING', 'RETRYING', 'FAILED', 'AUTH_REQUIRED']);
const isoTime = z.string();

/** A status record (SPEC §5): GET /status, POST /start, /stop, /restart, and each /events status event. */
export const statusRecordSchema = z.object({
  hash: z.string(),
  name: z.string(),
  remote_host: z.string(),
  remote_port: z.string(),
  local_port: z.string(),
  direction: z.enum(['local_to_remote', 'remote_to_local', 'socks']),
  status: tunnelState,
  pid: z.number().int().nullable(),
  since: isoTime,
  restarts: z.number().int(),
  last_exit: z.object({ code: z.number().int().nullable(), signal: z.string().nullable(), at: isoTime }).nullable(),
  last_error: z.string().nullable(),
  next_retry_at: isoTime.nullable(),
  health: z.object({ state: z.enum(['ok', 'degraded', 'unknown']), reason: z.string().nullable(), since: isoTime }),
  /** The shared connection carrying the forward (SPEC §14); null for a tunnel with an ssh of its own. */
  connection: z.object({ id: z.string(), pid: z.number().int().nullable(), state: z.enum(['down', 'connecting', 'awaiting_login', 'up', 'retrying', 'stopping']) }).nullable(),
});
export const statusListSchema = z.array(statusRecordSchema);

/** GET /list: the entry as written in the config file (any keys), plus its `hash`, effective `name` and current `status`. */
export const listRecordSchema = z.looseObject({ hash: z.string(), name: z.string(), status: tunnelState });
export const listSchema = z.array(listRecordSchema);

/** What one reload did: POST /reload, and `{"type":"reload", ...}` on /events. */
export const reloadRecordSchema = z.object({
  type: z.literal('reload'),
  at: isoTime,
  ok: z.boolean(),
  /** The file's problems (invalid, missing, or entries left out when `ok` and `left_out` > 0), else null. */
  error: z.string().nullable(),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  unchanged: z.array(z.string()),
  /** Same hash, other ssh_options: restarted. */
  changed: z.array(z.string()),
  /** Entries of the file left out because of their problems (`error` lists them); 0 when none. */
  left_out: z.number().int(),
});

/**
 * The config file's state as GET /health shows it to every caller: usable or not,
 * there or not, and how many problems — no tunnel, host, path, line or message
 * (`error` only says that there are problems, and where to read them).
 */
export const healthConfigOpenSchema = z.object({
  valid: z.boolean(),
  error: z.string().nullable(),
  missing: z.boolean(),
  /** How many problems the file on disk has (0 when valid or missing). */
  problems: z.number().int(),
});

const healthCounts = {
  /** Tunnels supervised (the config in force). */
  tunnels: z.number().int(),
  /** Of them, RUNNING (the forward established). */
  running: z.number().int(),
};

/**
 * GET /health: always 200 while the daemon runs, the same body for every caller on
 * every listener (container and kubelet probes, any account). While the first load of
 * the config file runs, `loading` is true and `config` null: nothing is known of the file yet.
 */
export const healthBodySchema = z.object({ ok: z.literal(true), loading: z.boolean(), config: healthConfigOpenSchema.nullable(), ...healthCounts });

/** The config file's state in full, as GET /health/details shows it behind the token. */
export const healthConfigSchema = z.object({
  valid: z.boolean(),
  /** The problems, one per line with line and column; null when valid. */
  error: z.string().nullable(),
  missing: z.boolean(),
  problems: z.number().int(),
  /** How much of the file on disk is in force: all, partial (entries with problems left out), none. */
  applied: z.enum(['all', 'partial', 'none']),
  /** The entries left out, each with its problems (formatted with line and column). */
  rejected: z.array(z.object({ index: z.number().int(), line: z.number().int(), column: z.number().int(), problems: z.array(z.string()) })),
  /** Warnings of the config in force (unknown keys, values read leniently), with line and column. */
  warnings: z.array(z.string()),
});

/** A tunnel in force that opens a port to more than this machine (SPEC §5): `message` names who can reach what. */
export const exposureRecordSchema = z.object({
  hash: z.string(),
  name: z.string(),
  line: z.number().int(),
  kind: z.enum(['open_listener', 'remote_all', 'own_listener']),
  message: z.string(),
});

/**
 * GET /health/details: what /health says, with the detail it leaves out — the file's
 * problems and warnings, and the tunnels' exposure. A control route: the token on TCP,
 * none on the socket.
 */
export const healthDetailsSchema = z.object({
  ok: z.literal(true),
  loading: z.boolean(),
  /** The config file the daemon runs, absolute (absent from daemons before it was added). */
  config_path: z.string().optional(),
  config: healthConfigSchema.nullable(),
  ...healthCounts,
  exposure: z.array(exposureRecordSchema),
});

/** GET /logs/:hash, in the reference's shape: `log` is the lines joined by newlines, `lines` the same oldest first. */
export const logsBodySchema = z.object({ status: z.literal('success'), tunnel_hash: z.string(), log: z.string(), lines: z.array(z.string()) });

/** GET /logs: one entry per tunnel with output; `modified` is when its last line arrived (ISO 8601). */
export const logsListSchema = z.array(z.object({ hash: z.string(), name: z.string(), lines: z.number().int(), modified: isoTime.nullable() }));

/** GET /config/:hash: one tunnel in the shape of the reference implementation's configuration API. */
export const referenceTunnelSchema = z.object({
  name: z.string(),
  remote_host: z.string(),
  remote_port: z.string(),
  local_port: z.string(),
  direction: z.string(),
  interactive: z.boolean(),
  hash: z.string(),
});

/**
 * Every error body: `{"error": {"code", "message"}}`. Read leniently (any code), since a
 * newer daemon may have codes this client does not know; the message is what it shows.
 */
export const errorBodySchema = z.object({ error: z.looseObject({ code: z.string(), message: z.string() }) });

/** The daemon's text frames on a login terminal (GET /auth/<hash> upgraded to a WebSocket). */
export const terminalServerMessageSchema = z.discriminatedUnion('type', [
  /**
   * First message: the terminal is attached to this tunnel's login. `shared_with`: the
   * other tunnels on that login (SPEC §14); absent from older daemons.
   */
  z.object({ type: z.literal('attached'), hash: z.string(), name: z.string(), shared_with: z.array(z.string()).optional() }),
  /** Last message before the daemon closes: how the login ended (RUNNING: the forward is up). */
  z.object({ type: z.literal('end'), status: z.enum(['RUNNING', 'FAILED', 'STOPPED', 'AUTH_REQUIRED']), message: z.string().nullable() }),
]);

// The records built elsewhere must be exactly what their schemas accept: a field added
// to one side and not the other fails the build here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameStatus: Same<z.infer<typeof statusRecordSchema>, StatusRecord> = true;
const sameReference: Same<z.infer<typeof referenceTunnelSchema>, ReferenceTunnel> = true;
void sameStatus;
void sameReference;

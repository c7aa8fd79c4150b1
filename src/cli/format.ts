/**
 * tunnel-cli's human output: tables and lines from the API's records. Pure: the
 * clock and whether to colour are passed in.
 */
import type { ExposureRecord, HealthConfig, ListRecord, ReloadRecord, StatusRecord, TunnelState } from '../api/types.js';

export interface FormatOptions {
  /** ANSI colours (only on a terminal, and never with NO_COLOR). */
  color: boolean;
  now: Date;
}

const ANSI = { reset: '\x1b[0m', green: '\x1b[32m', yellow: '\x1b[33m', red: '\x1b[31m', dim: '\x1b[2m', bold: '\x1b[1m' };
const STATE_COLOR: Record<TunnelState, keyof typeof ANSI> = {
  RUNNING: 'green',
  STARTING: 'yellow',
  RETRYING: 'yellow',
  FAILED: 'red',
  STOPPED: 'dim',
  AUTH_REQUIRED: 'yellow',
};

const paint = (on: boolean, color: keyof typeof ANSI, text: string) => (on ? `${ANSI[color]}${text}${ANSI.reset}` : text);
const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

/** Whether to colour: a terminal, and NO_COLOR unset or empty (https://no-color.org). */
export function useColor(isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return isTTY && !env.NO_COLOR && env.TERM !== 'dumb';
}

export const shortHash = (hash: string) => hash.slice(0, 8);

export function directionWords(direction: string): string {
  if (direction === 'remote_to_local') return 'remote to local';
  if (direction === 'local_to_remote') return 'local to remote';
  if (direction === 'socks') return 'SOCKS proxy';
  return direction;
}

/** 42s, 3m05s, 2h07m, 4d03h. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor((s % 86400) / 3600))}h`;
}

/** Columns padded to their widest cell (ANSI codes not counted); no trailing blanks. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visible(c).length))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** What a cell shows for a field that has no value. */
export const NONE = '-';

// SPEC §3: an entry without `direction` (configs written for the reference often have
// none) means remote_to_local, as config/identity.ts reads it.
const DEFAULT_DIRECTION = 'remote_to_local';

/**
 * A field of an entry as written (GET /list passes the file's entry through): absent,
 * null and empty are `-` (a SOCKS tunnel has no remote_port), a scalar its text, and
 * anything else (a newer daemon's structure) its JSON rather than `[object Object]`.
 */
export function writtenCell(value: unknown): string {
  if (value === undefined || value === null || value === '') return NONE;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** A written `direction` in words; absent, null or empty is the default it stands for. */
export function writtenDirection(value: unknown): string {
  return directionWords(value === undefined || value === null || value === '' ? DEFAULT_DIRECTION : writtenCell(value));
}

export function formatList(records: ListRecord[]): string {
  if (records.length === 0) return 'no tunnels configured\n';
  return table(
    ['NAME', 'HASH', 'DIRECTION', 'REMOTE HOST', 'REMOTE', 'LOCAL'],
    records.map((r) => [r.name, shortHash(r.hash), writtenDirection(r.direction), writtenCell(r.remote_host), writtenCell(r.remote_port), writtenCell(r.local_port)]),
  );
}

function formatState(state: TunnelState, o: FormatOptions): string {
  return paint(o.color, STATE_COLOR[state] ?? 'reset', state);
}

/** What the tunnel is doing beyond its state: uptime when RUNNING, the next try when RETRYING. */
function detail(r: StatusRecord, o: FormatOptions): string {
  const since = Date.parse(r.since);
  if (r.status === 'RUNNING' && !Number.isNaN(since)) return `up ${formatDuration(o.now.getTime() - since)}`;
  if (r.status === 'RETRYING' && r.next_retry_at) {
    const at = Date.parse(r.next_retry_at);
    if (!Number.isNaN(at)) return `retry in ${formatDuration(at - o.now.getTime())}`;
  }
  return '-';
}

const HEALTH_COLOR: Record<StatusRecord['health']['state'], keyof typeof ANSI> = { ok: 'green', degraded: 'red', unknown: 'yellow' };

/**
 * Health matters while RUNNING (SPEC §5): `ok`, or the state with its reason, so that
 * a RUNNING tunnel that carries nothing says so and why. `-` in any other state.
 */
export function formatHealth(r: StatusRecord, o: FormatOptions): string {
  if (r.status !== 'RUNNING' || r.health === undefined) return '-';
  const h = r.health;
  const state = paint(o.color, HEALTH_COLOR[h.state] ?? 'reset', h.state);
  return h.reason === null ? state : `${state}: ${oneLine(h.reason)}`;
}

export function formatStatus(records: StatusRecord[], o: FormatOptions): string {
  if (records.length === 0) return 'no tunnels configured\n';
  return table(
    ['NAME', 'HASH', 'DIRECTION', 'STATE', 'UPTIME', 'RESTARTS', 'LAST ERROR', 'HEALTH'],
    records.map((r) => [
      r.name,
      shortHash(r.hash),
      directionWords(r.direction),
      formatState(r.status, o),
      detail(r, o),
      String(r.restarts),
      r.last_error === null ? '-' : oneLine(r.last_error),
      formatHealth(r, o),
    ]),
  );
}

/** `db (1a2b3c4d): RUNNING, up 3s` — one tunnel after start-tunnel/stop-tunnel, and wait progress. */
export function formatRecordLine(r: StatusRecord, o: FormatOptions): string {
  const parts = [`${r.name} (${shortHash(r.hash)}): ${formatState(r.status, o)}`];
  const d = detail(r, o);
  if (d !== '-') parts.push(d);
  if (r.last_error !== null && r.status !== 'RUNNING' && r.status !== 'STOPPED') parts.push(oneLine(r.last_error));
  if (r.status === 'RUNNING' && r.health !== undefined && r.health.state !== 'ok') parts.push(`health ${formatHealth(r, o)}`);
  return parts.join(', ') + '\n';
}

/** The one live line shown on a terminal while start waits: `waiting 3s: db RUNNING, web RETRYING (connection refused)`. */
export function formatProgress(records: StatusRecord[], elapsedMs: number, o: FormatOptions, columns = 80): string {
  const parts = records.map((r) => {
    const why = r.status === 'RETRYING' && r.last_error ? ` (${oneLine(r.last_error)})` : '';
    return `${r.name} ${formatState(r.status, o)}${why}`;
  });
  const text = `waiting ${formatDuration(elapsedMs)}: ${parts.join(', ')}`;
  return fit(text, Math.max(20, columns - 1));
}

/** Cuts to `width` visible characters, keeping colour codes balanced. */
function fit(text: string, width: number): string {
  if (visible(text).length <= width) return text;
  let out = '';
  let shown = 0;
  for (const m of text.matchAll(/\x1b\[[0-9;]*m|[^\x1b]/g)) {
    const piece = m[0];
    if (piece.startsWith('\x1b')) out += piece;
    else if (shown < width - 1) {
      out += piece;
      shown++;
    }
  }
  return `${out}…${text.includes('\x1b') ? ANSI.reset : ''}`;
}

export function formatReload(r: ReloadRecord): string {
  const n = (xs: string[], what: string) => `${xs.length} ${what}`;
  // A tunnel whose ssh_options, health_check or shared changed keeps its hash and is restarted: counted apart.
  const restarted = r.changed.length > 0 ? `, ${n(r.changed, 'restarted with changed settings')}` : '';
  const done = `reloaded: ${n(r.added, 'added')}, ${n(r.removed, 'removed')}, ${n(r.unchanged, 'unchanged')}${restarted}`;
  if (!r.left_out) return `${done}\n`;
  // The entries' problems as the daemon listed them; a daemon that sent none has only the count.
  const problems = r.error === null || r.error === '' ? [] : r.error.split('\n').map((l) => `  ${l}`);
  return [`${done}; ${r.left_out} left out (nothing running was stopped or changed)${problems.length > 0 ? ':' : ''}`, ...problems].join('\n') + '\n';
}

/** Shown above the status table while the config file cannot be used. */
export function formatConfigProblem(config: Pick<HealthConfig, 'valid' | 'error' | 'missing' | 'applied' | 'rejected'>, o: FormatOptions): string {
  if (config.missing) return paint(o.color, 'yellow', 'config file missing: the last good config keeps running') + '\n';
  if (config.valid) return '';
  const lines = (config.error ?? 'invalid').split('\n').map((l) => `  ${l}`);
  // Older daemons send no `applied`: their invalid file changed nothing.
  if (config.applied !== 'partial') return [paint(o.color, 'red', 'config file invalid, the last good config keeps running:'), ...lines].join('\n') + '\n';
  const n = config.rejected.length;
  const head = n > 0
    ? `config file has problems: ${n} ${n === 1 ? 'entry' : 'entries'} left out, the valid ones run; nothing running was stopped or changed:`
    : 'config file has problems: its valid parts run; nothing running was stopped or changed:';
  return [paint(o.color, 'yellow', head), ...lines].join('\n') + '\n';
}

/** The tunnels that open a port to more than this machine (SPEC §5), above the status table; nothing when none does. */
export function formatExposure(records: readonly ExposureRecord[], o: FormatOptions): string {
  if (records.length === 0) return '';
  const n = records.length;
  const head = paint(o.color, 'yellow', `${n} exposure ${n === 1 ? 'warning' : 'warnings'} (these tunnels open a port to more than this machine):`);
  return [head, ...records.map((r) => `  ${r.name} (${shortHash(r.hash)}, line ${r.line}): ${r.message}`)].join('\n') + '\n';
}

function oneLine(s: string): string {
  const flat = s.replace(/\s*\n\s*/g, ' ');
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}

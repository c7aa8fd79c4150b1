import type { HealthConfig, LogsBody, LogsListEntry, ReferenceTunnel, StatusRecord } from '../api/types.js';
import { NONE, shortHash, table, writtenCell } from './format.js';

/**
 * The reference CLI's read-only commands with our bodies: `logs` (all or one),
 * `show-tunnel` and `validate`. Each formats what the daemon answered; the requests
 * are made by commands/ (`hash`, which asks nothing, is hash-args.ts).
 */

/** `logs` without a hash: the tunnels with output, newest first. */
export function formatLogsList(entries: LogsListEntry[]): string {
  if (entries.length === 0) return 'no tunnel has ssh output yet\n';
  const rows = [...entries]
    .sort((a, b) => (b.modified ?? '').localeCompare(a.modified ?? ''))
    .map((e) => [e.name, shortHash(e.hash), String(e.lines), e.modified ?? NONE]);
  return `${table(['NAME', 'HASH', 'LINES', 'LAST LINE AT'], rows)}(tunnel-cli logs <hash> prints one tunnel's output)\n`;
}

/** `logs <hash>`: the lines as ssh wrote them. */
export function formatLogs(body: LogsBody): string {
  return body.lines.map((l) => `${l}\n`).join('');
}

/** `show-tunnel <hash>`: the entry as written in the file and, when it runs in this daemon, its state. */
export function formatTunnel(t: ReferenceTunnel, s: StatusRecord | null): string {
  // The file's text, which the daemon runs by another value when it reads it leniently
  // (`direction: ~` is remote_to_local): both, then.
  const direction = s !== null && s.direction !== t.direction ? `${t.direction || NONE} (runs as ${s.direction})` : t.direction;
  const rows: [string, string][] = [
    ['name', t.name],
    ['hash', t.hash],
    // Empty: a SOCKS tunnel's remote_port, or a field missing from an entry with problems.
    ['remote_host', writtenCell(t.remote_host)],
    ['remote_port', writtenCell(t.remote_port)],
    ['local_port', writtenCell(t.local_port)],
    ['direction', writtenCell(direction)],
    ['interactive', String(t.interactive)],
    ['status', s?.status ?? 'not in the config in force (saved but not loaded yet, or refused: see tunnel-cli validate)'],
  ];
  if (s) {
    rows.push(['since', s.since], ['pid', s.pid === null ? NONE : String(s.pid)], ['restarts', String(s.restarts)]);
    if (s.last_error) rows.push(['last_error', s.last_error]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
}

/** `validate`: the daemon's verdict on the file on disk; true when it has no problem. */
export function formatValidation(c: Pick<HealthConfig, 'valid' | 'error' | 'missing' | 'applied' | 'rejected'>): { text: string; valid: boolean } {
  if (c.missing) return { text: 'the config file does not exist (an empty config: no tunnels)\n', valid: true };
  if (c.valid) return { text: 'the config file is valid\n', valid: true };
  const problems = c.error === null || c.error === '' ? '' : `${c.error}\n`;
  // Entries left out while the others run are not a file that changed nothing (SPEC §3).
  const n = c.rejected.length;
  const head =
    c.applied !== 'partial'
      ? 'the config file has problems (the last good config keeps running)'
      : n > 0
        ? `the config file has problems: ${n} ${n === 1 ? 'entry' : 'entries'} left out, the valid ones run (nothing running was stopped or changed)`
        : 'the config file has problems: its valid parts run (nothing running was stopped or changed)';
  return { text: `${head}${problems === '' ? '' : ':'}\n${problems}`, valid: false };
}


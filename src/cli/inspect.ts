import type { HealthConfig, LogsBody, LogsListEntry, ReferenceTunnel, StatusRecord } from '../api/types.js';
import { tunnelHash } from '../tunnel/hash.js';
import { shortHash, table } from './format.js';

/**
 * The reference CLI's read-only commands with our bodies: `logs` (all or one),
 * `show-tunnel`, `validate` and `hash`. Each formats what the daemon answered; the
 * requests are made by commands.ts.
 */

/** `logs` without a hash: the tunnels with output, newest first. */
export function formatLogsList(entries: LogsListEntry[]): string {
  if (entries.length === 0) return 'no tunnel has ssh output yet\n';
  const rows = [...entries]
    .sort((a, b) => (b.modified ?? '').localeCompare(a.modified ?? ''))
    .map((e) => [e.name, shortHash(e.hash), String(e.lines), e.modified ?? '-']);
  return `${table(['NAME', 'HASH', 'LINES', 'LAST LINE AT'], rows)}(tunnel-cli logs <hash> prints one tunnel's output)\n`;
}

/** `logs <hash>`: the lines as ssh wrote them. */
export function formatLogs(body: LogsBody): string {
  return body.lines.map((l) => `${l}\n`).join('');
}

/** `show-tunnel <hash>`: the entry as written in the file and, when it runs in this daemon, its state. */
export function formatTunnel(t: ReferenceTunnel, s: StatusRecord | null): string {
  const rows: [string, string][] = [
    ['name', t.name],
    ['hash', t.hash],
    ['remote_host', t.remote_host],
    ['remote_port', t.remote_port],
    ['local_port', t.local_port],
    ['direction', t.direction],
    ['interactive', String(t.interactive)],
    ['status', s?.status ?? 'not in the config in force (saved but not loaded yet, or refused: see tunnel-cli validate)'],
  ];
  if (s) {
    rows.push(['since', s.since ?? '-'], ['pid', s.pid === null ? '-' : String(s.pid)], ['restarts', String(s.restarts)]);
    if (s.last_error) rows.push(['last_error', s.last_error]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
}

/** `validate`: the daemon's verdict on the file on disk; true when it has no problem. */
export function formatValidation(c: Pick<HealthConfig, 'valid' | 'error' | 'missing'>): { text: string; valid: boolean } {
  if (c.missing) return { text: 'the config file does not exist (an empty config: no tunnels)\n', valid: true };
  if (c.valid) return { text: 'the config file is valid\n', valid: true };
  return { text: `the config file has problems (the last good config keeps running):\n${c.error ?? ''}\n`, valid: false };
}

/**
 * `hash <name> <remote_host> <remote_port> <local_port> [direction] [interactive]`: the
 * tunnel's hash as the daemon and the reference compute it, without asking the daemon.
 */
export function hashOf(args: readonly string[]): { hash: string } | { error: string } {
  const [name, host, rport, lport, direction = 'remote_to_local', interactive = 'false'] = args;
  if (name === undefined || host === undefined || rport === undefined || lport === undefined || args.length > 6) {
    return { error: `expected <name> <remote_host> <remote_port> <local_port> [direction] [interactive], found ${args.length} argument(s)` };
  }
  // The text is hashed as written (`True` and `true` give other hashes), as in the config file.
  if (!/^(true|false|yes|no)$/i.test(interactive)) return { error: `interactive: expected true or false, found ${JSON.stringify(interactive)}` };
  const hash = tunnelHash({ name: name === '' ? 'unnamed' : name, remote_host: host, remote_port: rport, local_port: lport, direction, interactive });
  return { hash };
}

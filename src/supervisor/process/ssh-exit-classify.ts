// Turns how an ssh child ended (exit code, signal, its stderr) into a decision:
// FAILED for errors a retry will not fix, RETRYING for the rest, with the one line
// of stderr that explains it. Pure: the patterns were captured from OpenSSH 9.2.

/** Why an attempt ended; `reason` is stable and meant for programs. */
export type FailureReason =
  // A retry will not fix these: FAILED until the config changes or the user starts it.
  | 'auth'
  | 'host_key'
  | 'unknown_host'
  | 'bad_arguments'
  | 'spawn_failed'
  | 'forwarding_refused'
  // Everything else: RETRYING.
  | 'refused'
  | 'timeout'
  | 'unreachable'
  | 'local_port_busy'
  | 'remote_forward_failed'
  | 'connection_lost'
  | 'start_timeout'
  | 'signal'
  | 'unknown';

/**
 * What a retry should wait for besides the backoff: `ssh-port` when the server could
 * not be reached (a TCP probe of its ssh port tells when it is back), `local-bind`
 * when our listening port was taken (trying to bind it tells when it is free).
 */
export type ProbeKind = 'ssh-port' | 'local-bind';

export interface Failure {
  reason: FailureReason;
  /** False: FAILED, no retry. */
  retry: boolean;
  probe: ProbeKind | null;
  /** For last_error: what happened, then ssh's own line. */
  message: string;
}

export interface ExitFacts {
  code: number | null;
  signal: string | null;
  /** Every stderr line of the attempt (debug lines included), oldest first. */
  lines: readonly string[];
  /** The forward flag and, for -R, the remote bind address as configured (null: server default). */
  flag: '-L' | '-R' | '-D';
  remoteBind: string | null;
}

interface Rule {
  pattern: RegExp;
  reason: FailureReason;
  label: string;
}

/**
 * sshd refusing forwarding altogether. For -R it sends "Server has disabled port
 * forwarding." (a debug message the client prints as "debug1: Remote: …") before
 * the failure, which tells it apart from a taken port; for -L every channel is
 * "administratively prohibited" (also when PermitOpen forbids the target).
 */
const FORWARDING_REFUSED = /^debug1: Remote: Server has disabled port forwarding|open failed: administratively prohibited/i;
const FORWARDING_REFUSED_LABEL = 'the server refuses port forwarding (AllowTcpForwarding, PermitOpen or a no-port-forwarding key option)';

// Order matters: the first rule whose pattern matches any line wins.
const RULES: readonly Rule[] = [
  { pattern: /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed|host key for .* has changed|No \S+ host key is known for/i, reason: 'host_key', label: 'host key verification failed' },
  // The key ssh would have used, refused or unreadable (OpenSSH's sshkey_perm_ok): the
  // cause of the "Permission denied" that follows. check names the fix for its layout.
  { pattern: /^Load key ".*": bad permissions$/i, reason: 'auth', label: 'ssh ignored the private key: it belongs to the user ssh runs as and group or others can read it (tunnel-manager check names the fix)' },
  { pattern: /^Load key ".*": Permission denied$/i, reason: 'auth', label: 'the user ssh runs as cannot read the private key (tunnel-manager check names the fix)' },
  { pattern: /Permission denied \(|Too many authentication failures|Authentication failed/i, reason: 'auth', label: 'authentication failed' },
  { pattern: /Could not resolve hostname .*(Name or service not known|No address associated|nodename nor servname)/i, reason: 'unknown_host', label: 'unknown host' },
  { pattern: /Temporary failure in name resolution|Could not resolve hostname/i, reason: 'unreachable', label: 'name resolution failed' },
  {
    pattern: /Bad configuration option|Bad port|Bad (local|remote|dynamic) forwarding specification|unknown option --|^usage: ssh|Unsupported option|Missing argument|no argument after keyword|garbage at end of line|Can't open user config file|Bad owner or permissions on|Unable to negotiate|command-line line \d+:|terminating, \d+ bad configuration options/i,
    reason: 'bad_arguments',
    label: 'bad ssh arguments or configuration',
  },
  { pattern: /^bind .*: Permission denied/i, reason: 'bad_arguments', label: 'not allowed to listen on this local address' },
  { pattern: /Address already in use|cannot listen to port|Could not request local forwarding/i, reason: 'local_port_busy', label: 'local port is busy' },
  { pattern: /remote port forwarding failed for listen port/i, reason: 'remote_forward_failed', label: 'remote forward refused by the server' },
  { pattern: /Connection refused/i, reason: 'refused', label: 'connection refused' },
  { pattern: /Timeout, server .* not responding|Connection timed out|Operation timed out|timed out during banner exchange/i, reason: 'timeout', label: 'server not responding' },
  { pattern: /Network is unreachable|No route to host|Host is unreachable/i, reason: 'unreachable', label: 'network unreachable' },
  { pattern: /closed by remote host|Connection closed by|Connection reset|kex_exchange_identification|Broken pipe|Disconnected from|client_loop: send disconnect/i, reason: 'connection_lost', label: 'connection lost' },
];

const PROBES: Partial<Record<FailureReason, ProbeKind>> = {
  refused: 'ssh-port',
  timeout: 'ssh-port',
  unreachable: 'ssh-port',
  local_port_busy: 'local-bind',
};

const FATAL: ReadonlySet<FailureReason> = new Set(['auth', 'host_key', 'unknown_host', 'bad_arguments', 'spawn_failed', 'forwarding_refused']);

/** ssh's debug output (LogLevel DEBUG1..3); never the meaningful line. */
export function isDebugLine(line: string): boolean {
  return /^debug\d: /.test(line);
}

// Informational lines that explain nothing about a failure.
const NOISE = /^(Transferred: |Bytes per second: |Warning: Permanently added |Authenticated to |@{5,}|Pseudo-terminal |\s*$)/;

function usefulLines(lines: readonly string[]): string[] {
  return lines.map((l) => l.trim()).filter((l) => !isDebugLine(l) && !NOISE.test(l));
}

function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h);
}

function failure(reason: FailureReason, message: string): Failure {
  return { reason, retry: !FATAL.has(reason), probe: PROBES[reason] ?? null, message };
}

/** Decides FAILED or RETRYING for an ssh child that ended without being asked to. */
export function classifyExit(facts: ExitFacts): Failure {
  // Checked before the debug lines are dropped: sshd's reason arrives as one.
  const refused = forwardingRefused(facts.lines);
  if (refused !== null) return refused;
  const useful = usefulLines(facts.lines);
  for (const rule of RULES) {
    const hit = useful.find((l) => rule.pattern.test(l));
    if (hit === undefined) continue;
    if (rule.reason === 'remote_forward_failed') {
      const bind = facts.remoteBind;
      const hint = bind !== null && !isLoopback(bind)
        ? `the port may be taken on the server, or the server needs "GatewayPorts clientspecified" (or yes) to bind ${bind}`
        : 'the port may be taken on the server';
      return failure(rule.reason, `${rule.label}: ${hit} (${hint})`);
    }
    if (rule.reason === 'local_port_busy') {
      // "bind [127.0.0.1]:7001: Address already in use" names the address; prefer it.
      const bindLine = useful.find((l) => /Address already in use/i.test(l)) ?? hit;
      return failure(rule.reason, `${rule.label}: ${bindLine}`);
    }
    return failure(rule.reason, `${rule.label}: ${hit}`);
  }
  const last = useful[useful.length - 1];
  if (facts.signal !== null) {
    return failure('signal', `ssh was ended by ${facts.signal}${last !== undefined ? `: ${last}` : ''}`);
  }
  const code = facts.code === null ? 'no exit code' : `exit code ${facts.code}`;
  return failure('unknown', last !== undefined ? `ssh exited (${code}): ${last}` : `ssh exited unexpectedly (${code})`);
}

/**
 * A line that proves the server refuses forwarding, as the FAILED cause; null for any
 * other line. Also used while the tunnel runs: a -L channel refused this way means
 * every connection through the tunnel fails, and a retry cannot fix it.
 */
export function forwardingRefusedLine(line: string): Failure | null {
  const l = line.trim();
  if (!FORWARDING_REFUSED.test(l)) return null;
  const said = l.replace(/^debug1: Remote: /, '');
  return failure('forwarding_refused', `${FORWARDING_REFUSED_LABEL}: ${said}`);
}

function forwardingRefused(lines: readonly string[]): Failure | null {
  for (const l of lines) {
    const f = forwardingRefusedLine(l);
    if (f !== null) return f;
  }
  return null;
}

/** The failure of an attempt that never reported its forward in time. */
export function startTimeoutFailure(seconds: number): Failure {
  return failure('start_timeout', `ssh did not report the forward established within ${seconds} s`);
}

/** The failure of an ssh binary that could not be run at all (missing, not executable). */
export function spawnFailure(detail: string): Failure {
  return failure('spawn_failed', `could not run ssh: ${detail}`);
}

import { sshAddress, type Endpoint } from './endpoint.js';
import type { DirectionMode, TunnelSpec } from './spec.js';

/** Options every tunnel gets unless ssh_options override them (ssh keeps the first value). */
export const SSH_DEFAULTS: Readonly<Record<string, string>> = {
  ExitOnForwardFailure: 'yes',
  BatchMode: 'yes',
  // BatchMode silently sets ServerAliveInterval to 300 s, so both are always explicit.
  ServerAliveInterval: '5',
  ServerAliveCountMax: '3',
  ConnectTimeout: '10',
  StrictHostKeyChecking: 'accept-new',
};

/**
 * Options the daemon depends on and that no config may change: DEBUG1 is what tells
 * us the forward is established; a shared ControlMaster would let the forward outlive
 * the child we supervise.
 */
export const SSH_FIXED: Readonly<Record<string, string>> = {
  LogLevel: 'DEBUG1',
  ControlMaster: 'no',
  ControlPath: 'none',
  RequestTTY: 'no',
};

export type ForwardFlag = '-L' | '-R' | '-D';

/** Whether the forward listens on this machine (-L, -D) rather than on the server (-R). */
export const listensHere = (flag: ForwardFlag): boolean => flag !== '-R';

/** Which ssh forward a direction means under the given mode (SPEC §4). */
export function forwardFlag(direction: TunnelSpec['direction'], mode: DirectionMode): ForwardFlag {
  // A SOCKS proxy listens here and connects wherever its clients ask, in either mode.
  if (direction === 'socks') return '-D';
  const exposeLocal = direction === 'local_to_remote';
  if (mode === 'default') return exposeLocal ? '-R' : '-L';
  return exposeLocal ? '-L' : '-R';
}

/** Where a bare listening port binds. */
export const LOOPBACK_BIND = '127.0.0.1';

const bindPrefix = (e: Endpoint, fallback: string | null) =>
  e.host !== null ? `${sshAddress(e.host)}:` : fallback !== null ? `${fallback}:` : '';
const target = (e: Endpoint) => `${e.host !== null ? sshAddress(e.host) : 'localhost'}:${e.port}`;

/**
 * The forward specification. A bare port listens on 127.0.0.1, named, on either side
 * (SPEC §4): with `localhost` (ssh's and sshd's default) ssh or sshd quietly bind
 * [::1] alone when 127.0.0.1's port is taken, and another program answers on
 * 127.0.0.1 while the tunnel looks fine. Named, a taken port is a clear failure.
 */
export function forwardSpec(spec: TunnelSpec, mode: DirectionMode): { flag: ForwardFlag; value: string } {
  const flag = forwardFlag(spec.direction, mode);
  if (flag === '-D') return { flag, value: `${bindPrefix(spec.local_port, LOOPBACK_BIND)}${spec.local_port.port}` };
  if (flag === '-L') {
    return { flag, value: `${bindPrefix(spec.local_port, LOOPBACK_BIND)}${spec.local_port.port}:${target(spec.remote_port)}` };
  }
  return { flag, value: `${bindPrefix(spec.remote_port, LOOPBACK_BIND)}${spec.remote_port.port}:${target(spec.local_port)}` };
}

/**
 * One UserKnownHostsFile path as `-o` takes it: ssh expands `%` tokens in this option
 * (`%h`, `%d`…), and the paths given here are literal (`ssh -G` prints them already
 * expanded; the state directory may hold a `%`), so `%` is doubled; a path with white
 * space is quoted.
 */
function knownHostsPath(path: string): string {
  const literal = path.replace(/%/g, '%%');
  return /\s/.test(literal) ? `"${literal}"` : literal;
}

export interface SshArgsInput {
  spec: TunnelSpec;
  mode: DirectionMode;
  /** Passed as -F when set. */
  sshConfigPath: string | null;
  /** The daemon's writable known_hosts first, then the user's own files. */
  knownHostsFiles: readonly string[];
  /**
   * For an interactive tunnel: the file its debug lines go to (`-E`), so that its
   * terminal shows only prompts and the log parser never reads what a person types.
   */
  debugLog?: string | null;
}

/**
 * Everything before the forward and the destination: the options that belong to the
 * login. Tunnels whose base is the same can share one connection (SPEC §14): it is the
 * whole effective option set, and the one source of a shared connection's identity.
 */
export function sshBaseArgs(input: SshArgsInput): string[] {
  const { spec } = input;
  const args = ['-N'];
  if (input.sshConfigPath) args.push('-F', input.sshConfigPath);
  if (spec.interactive && input.debugLog) args.push('-E', input.debugLog);
  for (const [k, v] of Object.entries(SSH_FIXED)) args.push('-o', `${k}=${v}`);
  // Config options first: ssh keeps the first value it sees, so they override the defaults.
  for (const [k, v] of Object.entries(spec.ssh_options)) args.push('-o', `${k}=${v}`);
  for (const [k, v] of Object.entries(SSH_DEFAULTS)) {
    // A person answers an interactive tunnel's prompts (SPEC §13); every other default
    // stays. Said explicitly, since the daemon's -F file says BatchMode yes for every host.
    args.push('-o', `${k}=${spec.interactive && k === 'BatchMode' ? 'no' : v}`);
  }
  if (input.knownHostsFiles.length > 0) {
    args.push('-o', `UserKnownHostsFile=${input.knownHostsFiles.map(knownHostsPath).join(' ')}`);
  }
  return args;
}

/** The complete argv after the ssh binary, for a tunnel with an ssh of its own. An array, never a shell string. */
export function sshArgs(input: SshArgsInput): string[] {
  const fwd = forwardSpec(input.spec, input.mode);
  return [...sshBaseArgs(input), fwd.flag, fwd.value, '--', input.spec.remote_host];
}

/**
 * A shared connection's master (SPEC §14): the tunnels' base, made a ControlMaster
 * listening on `controlPath`. These come first, so they win over SSH_FIXED's "no
 * sharing"; ControlPersist=no ends the master with its process, never in the background.
 */
export function masterArgs(base: readonly string[], destination: string, controlPath: string): string[] {
  return ['-o', 'ControlMaster=yes', '-o', `ControlPath=${controlPath.replace(/%/g, '%%')}`, '-o', 'ControlPersist=no', ...base, '--', destination];
}

/**
 * One run of `ssh -O forward|cancel` on a master's control socket, carrying one or
 * more forwards. `-F none`: the master holds every option; this client only talks to
 * its socket (`-O` ignores -p, -l, -i and the rest).
 */
export function controlArgs(controlPath: string, op: 'forward' | 'cancel', forwards: readonly { flag: string; value: string }[]): string[] {
  const args = ['-F', 'none', '-o', `ControlPath=${controlPath.replace(/%/g, '%%')}`, '-o', 'LogLevel=ERROR', '-O', op];
  for (const f of forwards) args.push(f.flag, f.value);
  // The destination is required by ssh's syntax; the master decides where it goes.
  args.push('--', 'shared');
  return args;
}

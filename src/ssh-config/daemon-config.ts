// The ssh config file the daemon hands every ssh it runs (`-F`): its safety options
// for every host, then the user's own config by Include. The reason is ProxyJump:
// ssh runs each jump hop as a separate `ssh -W` that gets none of the tunnel's `-o`
// options but does get `-F` (OpenSSH passes -F on to the hop, and to the hop's own
// hops). Through this file the hop gets the same safety as the tunnel — no prompt,
// the daemon's known_hosts with accept-new, no shared master, keep-alives — while the
// user's config still decides everything else (ssh keeps the first value it sees, so
// these come first). Pure.
//
// A hop whose own config names known_hosts files (a per-host UserKnownHostsFile) gets
// a `Host <hop>` block before `Host *`: the daemon's file first (where accepted keys
// go), then the hop's own, so a key pinned there is checked rather than a new one
// accepted. Without it `Host *` would win for the hop and its files go unread.
import { PLAIN_HOST } from './jump-hops.js';

/**
 * What every hop gets. The tunnel's own ssh gets the same through `-o` (ssh-args.ts),
 * where ssh_options may override the defaults; a hop has no ssh_options.
 * LogLevel ERROR: a hop's stderr is the tunnel's; its debug lines would read as the
 * tunnel's own ("Entering interactive session."), while its errors must still show.
 */
export function hopOptions(defaults: Readonly<Record<string, string>>): Record<string, string> {
  return {
    ...defaults,
    BatchMode: 'yes',
    StrictHostKeyChecking: 'accept-new',
    ControlMaster: 'no',
    ControlPath: 'none',
    ControlPersist: 'no',
    LogLevel: 'ERROR',
  };
}

/**
 * A path ssh puts into a shell command unquoted: the implicit ProxyCommand of a
 * ProxyJump is `ssh … -F <path> -W … hop`, run by /bin/sh. Only these characters are
 * safe there.
 */
export function isShellSafePath(path: string): boolean {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(path);
}

/** True when a value can go into the config file between quotes. */
export function quotable(value: string): boolean {
  return !/["\n\r]/.test(value);
}

/** A path for the config file, quoted; `%` escaped where ssh expands tokens (known_hosts files). */
function quoted(value: string, tokens = false): string {
  if (!quotable(value)) throw new Error(`a path with a quote or line break cannot go into an ssh config: ${JSON.stringify(value)}`);
  return `"${tokens ? value.replace(/%/g, '%%') : value}"`;
}

/**
 * The known_hosts list of a host: the daemon's writable file first (ssh writes
 * accepted keys to the first file), then the files the user's config gives the host.
 */
export function oursFirst(ours: string, theirs: readonly string[]): string[] {
  return [ours, ...theirs.filter((f) => f !== ours)];
}

/** A jump host and the known_hosts files the user's config gives it. */
export interface HopKnownHosts {
  /** The name the hop's ssh matches `Host` against (jump-hops.ts hopHost). */
  host: string;
  /** Its UserKnownHostsFile list as `ssh -G <host>` printed it: `~` and %-tokens already expanded, so literal paths. */
  files: readonly string[];
}

export interface DaemonSshConfigInput {
  /** From hopOptions(). */
  options: Readonly<Record<string, string>>;
  /** The daemon's writable known_hosts first, then the user's default files. */
  knownHostsFiles: readonly string[];
  /** The user's config files, in the order ssh would read them (`~` allowed). */
  includes: readonly string[];
  /** Jump hosts with their own known_hosts files (none by default). */
  hops?: readonly HopKnownHosts[];
}

/** The file's text. Paths come from the daemon's settings, never from the tunnels file. */
export function daemonSshConfigText(input: DaemonSshConfigInput): string {
  const lines = [
    '# Written by tunnel-manager whenever it reads the ssh config; do not edit (edit your own ssh config instead).',
    '# Safety options for every ssh the daemon runs, jump hosts included, then your config.',
  ];
  const ours = input.knownHostsFiles[0];
  for (const hop of input.hops ?? []) {
    // hopHost() lets only plain names through; anything else here is a bug, never written.
    if (!PLAIN_HOST.test(hop.host) || hop.host.startsWith('-')) throw new Error(`not a plain host name: ${JSON.stringify(hop.host)}`);
    if (ours === undefined) throw new Error('a jump host block needs the daemon\'s known_hosts');
    lines.push(`Host "${hop.host}"`);
    lines.push(`  UserKnownHostsFile ${oursFirst(ours, hop.files).map((f) => quoted(f, true)).join(' ')}`);
  }
  lines.push('Host *');
  for (const [k, v] of Object.entries(input.options)) {
    if (!/^[A-Za-z]+$/.test(k) || /[\s"]/.test(v)) throw new Error(`unexpected ssh option ${k}=${v}`);
    lines.push(`  ${k} ${v}`);
  }
  lines.push(`  UserKnownHostsFile ${input.knownHostsFiles.map((f) => quoted(f, true)).join(' ')}`);
  for (const inc of input.includes) {
    // ssh expands a leading `~` only outside quotes; the daemon's own `~/.ssh/config` has no space.
    lines.push(`Include ${/^~\/[^\s"]+$/.test(inc) ? inc : quoted(inc)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The user's config as ssh would read it: the -F file alone, else ~/.ssh/config then the system file. */
export function userConfigFiles(sshConfigPath: string | null): string[] {
  return sshConfigPath !== null ? [sshConfigPath] : ['~/.ssh/config', '/etc/ssh/ssh_config'];
}

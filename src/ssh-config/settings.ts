// What `ssh -G` prints, read once for everyone (the daemon's plans and `check`):
// lower-case keys, one setting per line, repeated keys (identityfile) in order, `~`
// and %-tokens left unexpanded (but userknownhostsfile is printed expanded, as literal
// paths), and paths printed without quotes, spaces and all.
// Pure.

/** `ssh -G` output as key → values, in the order printed. */
export type SshSettings = ReadonlyMap<string, readonly string[]>;

export function parseSshG(text: string): SshSettings {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (m?.[1] === undefined || m[2] === undefined) continue;
    const key = m[1].toLowerCase();
    const list = out.get(key) ?? [];
    list.push(m[2].trim());
    out.set(key, list);
  }
  return out;
}

export function first(settings: SshSettings, key: string): string | undefined {
  return settings.get(key)?.[0];
}

/**
 * Splits a path list such as `userknownhostsfile` as ssh prints it. ssh prints the
 * paths joined by spaces without quoting them, so `/a b/kh /c` is ambiguous; a new
 * path starts at a word that starts like a path (`/`, `~`, `%`), and any other word
 * belongs to the path before it. Only a path holding " /" or " ~" is split wrongly.
 */
export function pathList(value: string): string[] {
  const out: string[] = [];
  for (const word of value.split(' ')) {
    const last = out.length - 1;
    if (out.length === 0 || /^[/~%]/.test(word)) out.push(word);
    else out[last] = `${out[last] ?? ''} ${word}`;
  }
  return out.map((p) => p.trim()).filter((p) => p !== '' && p.toLowerCase() !== 'none');
}

/** What the daemon needs to know about how ssh reaches a tunnel's host. */
export interface HostInfo {
  /** The server's address and ssh port; null when ssh reaches it through a proxy (nothing to probe directly). */
  endpoint: { host: string; port: number } | null;
  hostname: string | null;
  port: string;
  user: string | null;
  /** The effective UserKnownHostsFile list for this host. */
  knownHostsFiles: string[];
  /** The ProxyJump chain as ssh prints it (`user@hop:port,hop2`), or null. */
  proxyJump: string | null;
}

const isSet = (v: string | undefined): v is string => v !== undefined && v.toLowerCase() !== 'none';

/** ProxyJump and ProxyCommand mean the server's own port is not ours to reach, so no endpoint. */
export function hostInfo(s: SshSettings): HostInfo {
  const hostname = first(s, 'hostname') ?? null;
  const portText = first(s, 'port') ?? '22';
  const port = Number(portText);
  const proxyJump = first(s, 'proxyjump');
  const proxied = isSet(proxyJump) || isSet(first(s, 'proxycommand'));
  const endpoint = !proxied && hostname !== null && Number.isInteger(port) && port > 0 && port < 65536 ? { host: hostname, port } : null;
  return {
    endpoint,
    hostname,
    port: portText,
    user: first(s, 'user') ?? null,
    knownHostsFiles: pathList(first(s, 'userknownhostsfile') ?? ''),
    proxyJump: isSet(proxyJump) ? proxyJump : null,
  };
}

/** When `ssh -G` cannot tell (it failed): ssh's own defaults, and no probing. */
export const FALLBACK_HOST_INFO: HostInfo = {
  endpoint: null,
  hostname: null,
  port: '22',
  user: null,
  knownHostsFiles: ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'],
  proxyJump: null,
};

/** The meaningful line of ssh's stderr (debug lines and the noise about terminals dropped). */
export function sshErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Pseudo-terminal') && !/^(debug\d|OpenSSH_)/.test(l));
  return lines.find((l) => /bad configuration|terminating|can't open|no such|no user/i.test(l)) ?? lines[0] ?? 'ssh -G failed';
}

/**
 * The files behind the settings, from `ssh -v -G`'s stderr: every configuration file
 * ssh read (the config, the files it Includes), and the patterns of Includes that
 * matched nothing yet (a file created there later counts too).
 */
export function configSources(stderr: string): { files: string[]; emptyIncludes: string[] } {
  const files: string[] = [];
  const emptyIncludes: string[] = [];
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    const read = /^debug1: Reading configuration data (.+)$/.exec(line);
    if (read?.[1] !== undefined) files.push(read[1]);
    const none = /^debug1: .+ line \d+: include (.+) matched no files$/.exec(line);
    if (none?.[1] !== undefined) emptyIncludes.push(none[1]);
  }
  return { files: [...new Set(files)], emptyIncludes: [...new Set(emptyIncludes)] };
}

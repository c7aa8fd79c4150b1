// What the user's ssh config makes of a tunnel's remote_host, read once with `ssh -G`:
// where to probe while the server is down, and which known_hosts files it uses.
import { execa } from 'execa';

export interface HostInfo {
  /** The server's address and ssh port, or null when ssh reaches it through a proxy (nothing to probe directly). */
  endpoint: { host: string; port: number } | null;
  /** The effective UserKnownHostsFile list for this host, as ssh prints it. */
  knownHostsFiles: string[];
}

/**
 * Reads `ssh -G` output (lower-case keys, one setting per line). ProxyJump and
 * ProxyCommand mean the server's own port is not ours to reach, so no endpoint.
 */
export function hostInfoFromSshG(text: string): HostInfo {
  const settings = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (m?.[1] === undefined || m[2] === undefined) continue;
    const key = m[1].toLowerCase();
    if (!settings.has(key)) settings.set(key, m[2].trim());
  }
  const proxied = ['proxyjump', 'proxycommand'].some((k) => {
    const v = settings.get(k);
    return v !== undefined && v.toLowerCase() !== 'none';
  });
  const host = settings.get('hostname');
  const port = Number(settings.get('port') ?? '22');
  const endpoint = !proxied && host !== undefined && Number.isInteger(port) && port > 0 && port < 65536 ? { host, port } : null;
  const files = (settings.get('userknownhostsfile') ?? '').split(/\s+/).filter((f) => f !== '' && f.toLowerCase() !== 'none');
  return { endpoint, knownHostsFiles: files };
}

/** When `ssh -G` cannot tell (it failed): ssh's own defaults, and no probing. */
export const FALLBACK_HOST_INFO: HostInfo = {
  endpoint: null,
  knownHostsFiles: ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'],
};

export type ResolveHost = (remoteHost: string) => Promise<HostInfo>;

/** Runs `ssh -G [-F cfg] -- remoteHost`; falls back to FALLBACK_HOST_INFO when it fails. */
export function sshGResolver(sshBin: string, sshConfigPath: string | null): ResolveHost {
  return async (remoteHost) => {
    const args = ['-G', ...(sshConfigPath ? ['-F', sshConfigPath] : []), '--', remoteHost];
    const r = await execa(sshBin, args, { reject: false, stdin: 'ignore', timeout: 5_000 });
    if (r.failed || r.exitCode !== 0) return FALLBACK_HOST_INFO;
    return hostInfoFromSshG(r.stdout);
  };
}

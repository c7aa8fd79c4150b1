// Reading `ssh -G` output: lower-case keys, one setting per line, repeated keys
// (identityfile) in order, and `~` and %-tokens left unexpanded.

/** `ssh -G` output as key → values, in the order printed. */
export type SshSettings = Map<string, string[]>;

export function parseSshG(text: string): SshSettings {
  const out: SshSettings = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (!m || m[1] === undefined || m[2] === undefined) continue;
    const key = m[1].toLowerCase();
    const list = out.get(key) ?? [];
    list.push(m[2]);
    out.set(key, list);
  }
  return out;
}

export function first(settings: SshSettings, key: string): string | undefined {
  return settings.get(key)?.[0];
}

/** What the tokens of an IdentityFile expand to (ssh_config(5), TOKENS). */
export interface TokenValues {
  home: string;
  localUser: string;
  hostname: string;
  remoteUser: string;
  port: string;
}

/**
 * Expands `~`, `%d`, `%u`, `%h`, `%r`, `%p` and `%%` as ssh does for IdentityFile;
 * returns null when another token remains (the check then cannot know the path).
 */
export function expandIdentityPath(raw: string, v: TokenValues): string | null {
  let s = raw === '~' ? v.home : raw.startsWith('~/') ? `${v.home}${raw.slice(1)}` : raw;
  let unknown = false;
  s = s.replace(/%(.)/g, (_all, t: string) => {
    switch (t) {
      case '%': return '%';
      case 'd': return v.home;
      case 'u': return v.localUser;
      case 'h': return v.hostname;
      case 'r': return v.remoteUser;
      case 'p': return v.port;
      default:
        unknown = true;
        return `%${t}`;
    }
  });
  return unknown ? null : s;
}

/** The identities ssh tries when the config names none (OpenSSH 9). */
export const DEFAULT_IDENTITY_NAMES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_xmss', 'id_dsa'];

export function isDefaultIdentity(raw: string): boolean {
  return DEFAULT_IDENTITY_NAMES.some((n) => raw === `~/.ssh/${n}` || raw === `%d/.ssh/${n}`);
}

/** The meaningful line of ssh's stderr (the noise about terminals dropped). */
export function sshErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Pseudo-terminal'));
  return lines.find((l) => /bad configuration|terminating|can't open|no such|no user/i.test(l)) ?? lines[0] ?? 'ssh -G failed';
}

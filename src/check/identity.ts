// Which private keys ssh will try for a host, as `check` verifies them: IdentityFile
// paths from `ssh -G` (see ssh-config/read.ts) with their tokens expanded.

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

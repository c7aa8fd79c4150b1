import type { CheckProblem } from './report.js';
import { unreachable } from '../kernel/unreachable.js';

// The permission rules for the SSH directory and their wording. docker/entrypoint.sh
// applies the same rules with the same sentences; change both together.
//
// Refused (ssh itself refuses these, so no tunnel could work): a private key of ours
// that group or others may read or write ("UNPROTECTED PRIVATE KEY FILE"; a key of
// another owner — root's, in a Kubernetes Secret — ssh only needs to read), and an SSH config
// file that group or others may write, or that belongs to another user than us or
// root ("Bad owner or permissions"). Everything ssh accepts but that is looser than
// it need be (a 755 folder, a 644 config, a public key others may write, files of
// another owner) is a warning with the command that tightens it.
//
// A file of a Kubernetes Secret or ConfigMap volume (see kubelet-volume.ts) gets its
// mode and owner from the manifest: what ssh refuses there is fixed in the manifest
// (defaultMode, fsGroup, runAsUser), and what it accepts is as the manifest made it,
// so no warning is given for it.

/** Where a file lives, which decides how it can be fixed. */
export type Layout = 'plain' | 'kubelet';

/**
 * ssh's own rule for a private key (OpenSSH's sshkey_perm_ok, checked with ssh 9.2 as
 * uid 1500: a root-owned 0644 key and a root:group 0440 key are used, a 0644 or 0640
 * key of uid 1500 is refused): refused only when it belongs to the user ssh runs as
 * and group or others have any access to it.
 */
export function sshRefusesKey(mode: number, owner: number, uid: number): boolean {
  return owner === uid && (mode & 0o077) !== 0;
}

/** What ssh refuses (`refused`) and what it accepts but could be tighter (`warned`). */
export interface Findings {
  refused: CheckProblem[];
  warned: CheckProblem[];
}

/** A private key ssh will not use, with the fix; shared with the check of keys outside the SSH directory. */
export function unprotectedKeyProblem(shown: string, mode: number, owner: number, layout: Layout = 'plain'): CheckProblem {
  if (layout === 'kubelet') {
    return {
      where: shown,
      what: `mode is ${octal(mode)} and owned by uid ${owner}, the user ssh runs as: ssh refuses its own private key when group or others can read it, and chmod cannot change a file of a Kubernetes Secret volume`,
      fix: `in the manifest, set defaultMode: 0400 on the Secret volume and no fsGroup (fsGroup adds group read), or run as a uid other than ${owner} (runAsUser) with fsGroup, so that ssh reads the key through its group`,
    };
  }
  return {
    where: shown,
    what: `mode is ${octal(mode)}: ssh refuses a private key that group or others can read`,
    fix: `chmod 600 ${shellQuote(shown)}`,
  };
}

/** A private key the daemon's user cannot read (ssh then skips it). */
export function unreadableKeyProblem(shown: string, uid: number, layout: Layout = 'plain'): CheckProblem {
  return {
    where: shown,
    what: `not readable by uid ${uid} (the user tunnel-manager runs as)`,
    fix:
      layout === 'kubelet'
        ? `in the manifest, set fsGroup to a group of uid ${uid} (the kubelet gives the Secret's files that group) and defaultMode: 0440 on the Secret volume`
        : `sudo chown ${uid} ${shellQuote(shown)}`,
  };
}

/** Names that hold nothing secret: others may read them. */
export function isPublicFile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return (
    base.endsWith('.pub') ||
    ['known_hosts', 'known_hosts2', 'known_hosts.old', 'authorized_keys', 'authorized_keys2'].includes(base)
  );
}

const SAFE = /^[A-Za-z0-9_@%+=:,./~-]+$/;

/** Quotes a path for a command line; a leading `~/` stays outside the quotes so it still expands. */
export function shellQuote(path: string): string {
  if (path.startsWith('~/')) return `~/${shellQuote(path.slice(2))}`;
  if (SAFE.test(path)) return path;
  return `'${path.replaceAll("'", "'\\''")}'`;
}

export function octal(mode: number): string {
  return (mode & 0o7777).toString(8);
}

/** What one entry of the SSH directory (the directory itself included) is. */
export type EntryKind = 'dir' | 'ssh-config' | 'private-key' | 'public' | 'other';

/** Findings for one entry of the SSH directory. */
export function entryFindings(shown: string, kind: EntryKind, mode: number, owner: number, uid: number, layout: Layout = 'plain'): Findings {
  const found = plainFindings(shown, kind, mode, owner, uid, layout);
  return layout === 'kubelet' ? { refused: found.refused, warned: [] } : found;
}

function plainFindings(shown: string, kind: EntryKind, mode: number, owner: number, uid: number, layout: Layout): Findings {
  const out: Findings = { refused: [], warned: [] };
  const q = shellQuote(shown);
  const perm = octal(mode);
  const open = (mode & 0o077) !== 0;
  switch (kind) {
    case 'dir':
      if (open) out.warned.push({ where: shown, what: `mode is ${perm}; ssh accepts it, 700 keeps the folder private`, fix: `chmod 700 ${q}` });
      break;
    case 'ssh-config':
      if ((mode & 0o022) !== 0) {
        const fix = layout === 'kubelet' ? 'in the manifest, set defaultMode: 0440 (or 0400) on the volume' : `chmod 600 ${q}`;
        out.refused.push({ where: shown, what: `mode is ${perm}: ssh refuses a config file that group or others can write`, fix });
      } else if (open) {
        out.warned.push({ where: shown, what: `mode is ${perm}; ssh accepts it, 600 keeps it private`, fix: `chmod 600 ${q}` });
      }
      if (owner !== uid && owner !== 0) {
        out.refused.push({ where: shown, what: `owned by uid ${owner}: ssh refuses a config file owned by another user than uid ${uid} or root`, fix: `sudo chown ${uid} ${q}` });
        return out;
      }
      break;
    case 'private-key':
      if (sshRefusesKey(mode, owner, uid)) out.refused.push(unprotectedKeyProblem(shown, mode, owner, layout));
      break;
    case 'public':
      if ((mode & 0o022) !== 0) {
        out.warned.push({ where: shown, what: `mode is ${perm}; ssh accepts it, but others should not write it (644 is fine for public keys and known_hosts)`, fix: `chmod 644 ${q}` });
      }
      break;
    case 'other':
      if (open) out.warned.push({ where: shown, what: `mode is ${perm}; ssh accepts it, 600 keeps it private`, fix: `chmod 600 ${q}` });
      break;
    default:
      return unreachable(kind);
  }
  if (owner !== uid) {
    out.warned.push({ where: shown, what: `owned by uid ${owner}, not by uid ${uid} (the user tunnel-manager runs as)`, fix: `sudo chown ${uid} ${q}` });
  }
  return out;
}

export function missingDirProblem(shown: string): CheckProblem {
  return { where: shown, what: 'the SSH directory does not exist', fix: `mkdir -p -m 700 ${shellQuote(shown)}` };
}

export function notADirProblem(shown: string): CheckProblem {
  return { where: shown, what: 'is not a directory', fix: null };
}

export function missingSshConfigProblem(shown: string): CheckProblem {
  const q = shellQuote(shown);
  return {
    where: shown,
    what: 'the SSH config file does not exist (tunnels take host names, users and keys from it)',
    fix: `touch ${q} && chmod 600 ${q}`,
  };
}

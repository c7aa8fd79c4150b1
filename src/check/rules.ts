import type { CheckProblem } from './report.js';

// The permission rules for the SSH directory and their wording. docker/entrypoint.sh
// applies the same rules with the same sentences; change both together.
//
// Chosen rules: every folder 700 and every private file (keys, the config) 600 —
// no group or other bits at all; public keys, known_hosts and authorized_keys may be
// read by others (644) but not written. Everything owned by the uid the daemon runs as.

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

/** Problems with one entry of the SSH directory (the directory itself included). */
export function entryProblems(
  shown: string,
  kind: 'dir' | 'file',
  mode: number,
  owner: number,
  uid: number,
): CheckProblem[] {
  const out: CheckProblem[] = [];
  const q = shellQuote(shown);
  const perm = octal(mode);
  if (kind === 'dir') {
    if ((mode & 0o077) !== 0) {
      out.push({ where: shown, what: `mode is ${perm}, must be 700 (no access for group or others)`, fix: `chmod 700 ${q}` });
    }
  } else if (isPublicFile(shown)) {
    if ((mode & 0o022) !== 0) {
      out.push({
        where: shown,
        what: `mode is ${perm}, must not be writable by group or others (644 is fine for public keys and known_hosts)`,
        fix: `chmod 644 ${q}`,
      });
    }
  } else if ((mode & 0o077) !== 0) {
    out.push({
      where: shown,
      what: `mode is ${perm}, must be 600 (private keys and the SSH config are for the owner only)`,
      fix: `chmod 600 ${q}`,
    });
  }
  if (owner !== uid) {
    out.push({
      where: shown,
      what: `owned by uid ${owner}, must be owned by uid ${uid} (the user tunnel-manager runs as)`,
      fix: `sudo chown ${uid} ${q}`,
    });
  }
  return out;
}

export function missingDirProblem(shown: string): CheckProblem {
  return { where: shown, what: 'the SSH directory does not exist', fix: `mkdir -m 700 ${shellQuote(shown)}` };
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

// Writes the daemon's ssh config (ssh-config/daemon-config.ts) where every ssh the
// daemon runs, and every jump hop those run, can read it: at start, and again when
// the jump hosts' known_hosts files are read anew (host-views.ts), before any ssh
// that needs them starts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonSshConfigText, hopOptions, isShellSafePath, userConfigFiles, type HopKnownHosts } from '../../ssh-config/daemon-config.js';
import { SSH_DEFAULTS } from '../../tunnel/ssh-args.js';
import { writeFileAtomic, type StatePaths } from '../state/state-files.js';

/** ssh's own default known_hosts files, after the daemon's. */
const USER_KNOWN_HOSTS = ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'];

export interface DaemonSshConfigFile {
  /** Where it is: what every ssh gets with -F. */
  readonly path: string;
  /** Writes it with these jump hosts' blocks; untouched when the text is the same. */
  write(hops: readonly HopKnownHosts[]): void;
}

/**
 * Writes the file (no jump hosts yet) and returns it: in the state dir, or, when the
 * state dir's path holds characters a shell would read (ssh puts it unquoted into the
 * ProxyJump command), in a private temp folder of its own.
 */
export function writeDaemonSshConfig(paths: StatePaths, userConfigPath: string | null, log: (e: Record<string, unknown>) => void): DaemonSshConfigFile {
  let path = paths.sshConfig;
  if (!isShellSafePath(path)) {
    path = join(mkdtempSync(join(tmpdir(), 'tunnel-manager-ssh-')), 'ssh_config');
    log({ event: 'ssh_config_elsewhere', path, reason: 'the state dir path holds characters ssh cannot pass to a jump host unquoted' });
  }
  let written: string | null = null;
  const write = (hops: readonly HopKnownHosts[]) => {
    const text = daemonSshConfigText({
      options: hopOptions(SSH_DEFAULTS),
      knownHostsFiles: [paths.knownHosts, ...USER_KNOWN_HOSTS],
      includes: userConfigFiles(userConfigPath),
      hops,
    });
    if (text === written) return;
    writeFileAtomic(path, text);
    written = text;
  };
  write([]);
  return { path, write };
}

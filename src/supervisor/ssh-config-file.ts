// Writes the daemon's ssh config (ssh-config/daemon-config.ts) where every ssh the
// daemon runs, and every jump hop those run, can read it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonSshConfigText, hopOptions, isShellSafePath, userConfigFiles } from '../ssh-config/daemon-config.js';
import { SSH_DEFAULTS } from '../tunnel/ssh-args.js';
import { writeFileAtomic, type StatePaths } from './state-files.js';

/** ssh's own default known_hosts files, after the daemon's. */
const USER_KNOWN_HOSTS = ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'];

/**
 * Writes the file and returns its path: in the state dir, or, when the state dir's
 * path holds characters a shell would read (ssh puts it unquoted into the ProxyJump
 * command), in a private temp folder of its own.
 */
export function writeDaemonSshConfig(paths: StatePaths, userConfigPath: string | null, log: (e: Record<string, unknown>) => void): string {
  let path = paths.sshConfig;
  if (!isShellSafePath(path)) {
    path = join(mkdtempSync(join(tmpdir(), 'tunnel-manager-ssh-')), 'ssh_config');
    log({ event: 'ssh_config_elsewhere', path, reason: 'the state dir path holds characters ssh cannot pass to a jump host unquoted' });
  }
  writeFileAtomic(
    path,
    daemonSshConfigText({
      options: hopOptions(SSH_DEFAULTS),
      knownHostsFiles: [paths.knownHosts, ...USER_KNOWN_HOSTS],
      includes: userConfigFiles(userConfigPath),
    }),
  );
  return path;
}

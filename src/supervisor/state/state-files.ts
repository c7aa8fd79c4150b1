// The supervisor's files in the state dir. Every write is atomic (temp file + rename
// in the same folder), so a crash never leaves half a file behind.
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface StatePaths {
  dir: string;
  desired: string;
  children: string;
  knownHosts: string;
  /** Debug logs (ssh -E) of the interactive tunnels' ssh, one per tunnel, removed when it exits. */
  loginLogs: string;
  /** The ssh config every ssh the daemon runs gets with -F (ssh-config/daemon-config.ts). */
  sshConfig: string;
}

export function statePaths(dir: string): StatePaths {
  return {
    dir,
    desired: join(dir, 'desired.json'),
    children: join(dir, 'children.json'),
    knownHosts: join(dir, 'known_hosts'),
    loginLogs: join(dir, 'logins'),
    sshConfig: join(dir, 'ssh_config'),
  };
}

/**
 * Creates the state dir (0700: it holds known hosts and pids) and a writable
 * known_hosts, which ssh fills with StrictHostKeyChecking=accept-new.
 */
export function prepareStateDir(paths: StatePaths): void {
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  chmodSync(paths.dir, 0o700);
  closeSync(openSync(paths.knownHosts, 'a', 0o600));
  mkdirSync(paths.loginLogs, { recursive: true, mode: 0o700 });
}

let tempCounter = 0;

export function writeFileAtomic(path: string, data: string): void {
  const temp = join(dirname(path), `.${process.pid}.${tempCounter++}.tmp`);
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/** The parsed JSON of a file, or undefined when it is missing or unreadable. */
export function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

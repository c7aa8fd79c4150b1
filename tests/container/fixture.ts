// Shared by the container tests: a temp "host" with an SSH directory, a stub
// tunnel-manager first on PATH, and a way to run docker/entrypoint.sh as root.
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const ENTRYPOINT = join(REPO, 'docker/entrypoint.sh');
export const UID = 4242;

export interface Fixture {
  root: string;
  bin: string;
  sshDir: string;
  sshConfig: string;
  key: string;
  env: Record<string, string>;
  cleanup: () => Promise<void>;
}

/** Writes an executable stub named `name` that prints who runs it and its arguments. */
export async function writeStub(bin: string, name = 'tunnel-manager'): Promise<void> {
  await writeFile(
    join(bin, name),
    '#!/bin/sh\necho "uid=$(id -u) gid=$(id -g) groups=$(id -G) args=$*"\n',
    { mode: 0o755 },
  );
}

/**
 * A good SSH directory owned by `owner` (UID unless said): folder 700, config and key 600, the public
 * key and known_hosts 644. Folders on the way are 755 so that UID can reach them.
 */
export async function makeFixture(owner = UID): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), 'tm-container-'));
  await chmod(root, 0o755);
  const bin = join(root, 'bin');
  await mkdir(bin, { mode: 0o755 });
  await writeStub(bin);
  const sshDir = join(root, 'ssh');
  await mkdir(sshDir, { mode: 0o700 });
  const key = join(sshDir, 'id_test');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key], { stdio: 'ignore' });
  await chmod(key, 0o600);
  await chmod(`${key}.pub`, 0o644);
  await writeFile(join(sshDir, 'known_hosts'), '', { mode: 0o644 });
  await chmod(join(sshDir, 'known_hosts'), 0o644);
  const sshConfig = join(sshDir, 'config');
  await writeFile(
    sshConfig,
    `Host testalias\n  HostName 127.0.0.1\n  Port 2222\n  User bob\n  IdentityFile ${key}\n  IdentitiesOnly yes\n`,
    { mode: 0o600 },
  );
  await chmod(sshConfig, 0o600);
  await chmod(sshDir, 0o700);
  for (const p of [sshDir, sshConfig, key, `${key}.pub`, join(sshDir, 'known_hosts')]) await chown(p, owner, owner);
  const env = {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: root,
    PUID: String(UID),
    PGID: String(UID),
    SSH_DIR: sshDir,
    SSH_CONFIG: sshConfig,
    TUNNEL_CONFIG: join(root, 'config/config.yaml'),
    TUNNEL_STATE_DIR: join(root, 'state'),
    TUNNEL_SOCKET: join(root, 'run/api.sock'),
  };
  return { root, bin, sshDir, sshConfig, key, env, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** Runs the entrypoint with exactly `env` (nothing inherited). */
export function entrypoint(
  env: Record<string, string | undefined>,
  args: string[] = [],
  opts: Options = {},
): ResultPromise<{ env: Record<string, string>; extendEnv: false; reject: false }> {
  const clean = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return execa('sh', [ENTRYPOINT, ...args], { ...opts, env: clean, extendEnv: false, reject: false }) as never;
}

/** The `ENV` names and values of the Dockerfile's last stage. */
export async function dockerfileEnv(): Promise<Record<string, string>> {
  const text = (await readFile(join(REPO, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM /m);
  const last = stages[stages.length - 1] ?? '';
  const env: Record<string, string> = {};
  for (const line of last.split('\n')) {
    const m = /^ENV\s+(.*)$/.exec(line.trim());
    if (!m || m[1] === undefined) continue;
    for (const pair of m[1].matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) {
      env[pair[1] as string] = (pair[2] as string).replace(/^"|"$/g, '');
    }
  }
  return env;
}

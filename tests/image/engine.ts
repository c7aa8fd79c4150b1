// The container engine and image that scripts/test-image built, for the image tests.
// These files run only through scripts/test-image (vitest.image.config.ts): without
// the image they fail with the reason, they never pass by skipping.
import { readFileSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type Result } from 'execa';

export const ENGINE = process.env.TM_IMAGE_ENGINE ?? '';
export const IMAGE = process.env.TM_IMAGE ?? '';
/** The ids the container runs as: neither root, nor 1000 (the base image's node), nor the image's 911. */
export const PUID = 4242;
export const PGID = 4343;

/** Throws with what to run when the image is not given (a missing image is a failure, not a skip). */
export function requireImage(): void {
  if (!['podman', 'docker'].includes(ENGINE) || !IMAGE) {
    throw new Error(
      'TM_IMAGE_ENGINE (podman or docker) and TM_IMAGE are not set: these tests run the image ' +
        'that scripts/test-image builds; run scripts/test-image',
    );
  }
}

export async function engine(args: string[], opts: { reject?: boolean } = {}): Promise<Result> {
  const r = await execa(ENGINE, args, { reject: false, all: true });
  if (opts.reject !== false && r.exitCode !== 0) {
    throw new Error(`${ENGINE} ${args.join(' ')} exited ${r.exitCode}: ${String(r.all).trim()}`);
  }
  return r;
}

/** The image's own health check, run now (podman has no timer without systemd; docker's runs on its interval). */
export async function healthy(container: string, timeoutMs = 30_000): Promise<void> {
  if (ENGINE === 'podman') {
    const r = await engine(['healthcheck', 'run', container], { reject: false });
    if (r.exitCode !== 0) throw new Error(`podman healthcheck run ${container} exited ${r.exitCode}: ${String(r.all).trim()}`);
    return;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await engine(['inspect', '--format', '{{.State.Health.Status}}', container]);
    if (String(r.stdout).trim() === 'healthy') return;
    if (Date.now() > deadline) throw new Error(`${container} is ${String(r.stdout).trim()} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

/** uid and gid of each process named `name` in the container, from /proc. */
export async function processIds(container: string, name: string): Promise<string[]> {
  const script =
    'for s in /proc/[0-9]*/status; do awk \'/^Name:/{n=$2} /^Uid:/{u=$2} /^Gid:/{g=$2} END{print n, u, g}\' "$s" 2>/dev/null; done';
  const r = await engine(['exec', container, 'sh', '-c', script]);
  return String(r.stdout)
    .split('\n')
    .filter((l) => l.startsWith(`${name} `))
    .map((l) => l.slice(name.length + 1));
}

/** An echo server on 127.0.0.1: what tunnels carry data to. */
export async function echoServer(port: number): Promise<net.Server> {
  const srv = net.createServer((s) => s.pipe(s));
  await new Promise<void>((res, rej) => srv.once('error', rej).listen(port, '127.0.0.1', () => res()));
  return srv;
}

/** Sends `text` to 127.0.0.1:port and resolves with what came back. */
export function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((res, rej) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    let got = '';
    s.setTimeout(5000, () => s.destroy(new Error(`no answer on 127.0.0.1:${port} within 5 s (got ${JSON.stringify(got)})`)));
    s.on('data', (d) => {
      got += String(d);
      if (got.length >= text.length) s.end();
    });
    s.on('error', rej);
    s.on('close', () => res(got));
    s.write(text);
  });
}

export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = undefined; // an earlier error (the server not up yet) is no longer the reason
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

export interface SshDir {
  root: string;
  dir: string;
  cleanup(): Promise<void>;
}

/**
 * A host's SSH directory for the container, owned by PUID as a user's own: the sshd's
 * client key and host key, and a config whose alias `testhost` names them by
 * autossh-tunnel-dockerized's absolute paths (/home/myuser/.ssh/...), as configs written
 * for it do.
 */
export async function sshDir(server: { port: number; user: string; clientKey: string; hostKey: string }): Promise<SshDir> {
  const root = await mkdtemp(join(tmpdir(), 'tm-image-'));
  await chmod(root, 0o755);
  const dir = join(root, 'ssh');
  await mkdir(dir, { mode: 0o700 });
  await copyFile(server.clientKey, join(dir, 'id_test'));
  const hostPub = readFileSync(`${server.hostKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
  await writeFile(join(dir, 'known_hosts'), `[127.0.0.1]:${server.port} ${hostPub}\n`);
  await writeFile(
    join(dir, 'config'),
    [
      'Host testhost',
      '  HostName 127.0.0.1',
      `  Port ${server.port}`,
      `  User ${server.user}`,
      '  IdentityFile /home/myuser/.ssh/id_test',
      '  IdentitiesOnly yes',
      '  UserKnownHostsFile /home/myuser/.ssh/known_hosts',
      '',
    ].join('\n'),
  );
  for (const [f, mode] of [['id_test', 0o600], ['known_hosts', 0o644], ['config', 0o600]] as const) {
    await chmod(join(dir, f), mode);
    await chown(join(dir, f), PUID, PGID);
  }
  await chown(dir, PUID, PGID);
  return { root, dir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

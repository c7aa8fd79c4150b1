// compose.yaml started the way the README says (mkdir -p config; the .env line; compose
// up -d --build), by docker-compose against the engine scripts/test-image used, with a
// real sshd on this host: both services come up with host networking, the daemon carries
// data, the CLI answers inside, the panel serves, the health checks pass, and `down`
// stops them. The README's lines run as an ordinary user (PUID), as a user runs them.
import { appendFile, chmod, chown, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper shared with the other suites
import { freePort, startSshd } from '../../scripts/lib/sshd.mjs';
import { ENGINE, PGID, PUID, echoServer, engine, requireImage, roundTrip, sshDir, until, type SshDir } from './engine.js';

const CONTEXT = process.env.TM_IMAGE_CONTEXT ?? '';
const COMPOSE = process.env.TM_COMPOSE ?? 'docker-compose';
const project = `tmimage${process.pid}`;

let server: { port: number; user: string; clientKey: string; hostKey: string; stop(): Promise<void> };
let ssh: SshDir;
let dir: string;
let echo: net.Server;
let echoPort: number;
let apiPort: number;
let panelPort: number;
let lPort: number;

function compose(args: string[]) {
  return execa(COMPOSE, args, { cwd: dir, env: { COMPOSE_PROJECT_NAME: project }, reject: false, all: true });
}

/** A line of the README's, run by sh in the project folder as PUID/PGID. */
function asUser(line: string) {
  return execa('setpriv', [`--reuid=${PUID}`, `--regid=${PGID}`, '--clear-groups', 'sh', '-c', line], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
}

async function readmeBlock(): Promise<string[]> {
  const readme = await readFile(join(CONTEXT, 'README.md'), 'utf8');
  const m = /```sh\n(mkdir -p config\n[\s\S]*?docker compose up -d --build\n)```/.exec(readme);
  if (!m?.[1]) throw new Error('README.md has no ```sh block with mkdir -p config … docker compose up -d --build');
  return m[1].trim().split('\n');
}

describe('compose.yaml as the README starts it', () => {
  beforeAll(async () => {
    requireImage();
    if (!CONTEXT) throw new Error('TM_IMAGE_CONTEXT (the repository to build from) is not set: run scripts/test-image');
    server = await startSshd();
    ssh = await sshDir(server);
    [echoPort, apiPort, panelPort, lPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    echo = await echoServer(echoPort);
    // The files compose builds from, in a folder of the user's.
    dir = await mkdtemp(join(tmpdir(), 'tm-compose-'));
    for (const f of ['compose.yaml', 'Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json', 'scripts/build.mjs', 'src', 'docker']) {
      await mkdir(dirname(join(dir, f)), { recursive: true });
      await cp(join(CONTEXT, f), join(dir, f), { recursive: true });
    }
    await chown(dir, PUID, PGID);
    await chmod(dir, 0o755);
  }, 60_000);

  afterAll(async () => {
    if (dir) {
      await compose(['down', '-v', '--timeout', '5']);
      await rm(dir, { recursive: true, force: true });
    }
    echo?.close();
    await server?.stop();
    await ssh?.cleanup();
  }, 60_000);

  it('comes up with the README\'s commands', async () => {
    const [mkdir, env, up, ...rest] = await readmeBlock();
    expect([mkdir, rest]).toEqual(['mkdir -p config', []]);
    expect(up).toBe('docker compose up -d --build');
    await asUser(mkdir as string);
    await asUser(env as string);
    expect(await readFile(join(dir, '.env'), 'utf8')).toBe(`PUID=${PUID}\nPGID=${PGID}\n`);
    // This machine's own settings: the SSH directory to mount and ports nobody else uses.
    await appendFile(join(dir, '.env'), `SSH_DIR_HOST=${ssh.dir}\nTUNNEL_API_LISTEN=127.0.0.1:${apiPort}\nPANEL_LISTEN=127.0.0.1:${panelPort}\n`);
    await writeFile(
      join(dir, 'config/config.yaml'),
      `tunnels:\n  - name: composed\n    remote_host: testhost\n    remote_port: ${echoPort}\n    local_port: "127.0.0.1:${lPort}"\n`,
    );
    await chown(join(dir, 'config/config.yaml'), PUID, PGID);
    // `docker compose` (v2) as the README writes it; Debian ships compose v1 as docker-compose.
    const r = await compose(['up', '-d', '--build']);
    expect(r.exitCode, String(r.all)).toBe(0);
  }, 600_000);

  it('runs the daemon: its tunnel carries data, the CLI answers inside', async () => {
    await until('the tunnel RUNNING', async () => {
      const s = (await (await fetch(`http://127.0.0.1:${apiPort}/status`)).json()) as { name: string; status: string }[];
      return s.some((t) => t.name === 'composed' && t.status === 'RUNNING');
    }, 60_000).catch(async (e: unknown) => { throw new Error(`${String(e)}\n${String((await compose(['logs'])).all)}`); });
    expect(await roundTrip(lPort, 'composed\n')).toBe('composed\n');
    const cli = await compose(['exec', '-T', 'tunnel-manager', 'tunnel-cli', 'status']);
    expect(cli.exitCode, String(cli.all)).toBe(0);
    expect(String(cli.stdout)).toMatch(/composed[\s\S]*RUNNING/);
  });

  it('runs the panel, and both services\' health checks pass', async () => {
    const page = await until('the panel', async () => {
      const res = await fetch(`http://127.0.0.1:${panelPort}/`).catch(() => null);
      return res?.status === 200 ? res.text() : undefined;
    });
    expect(page).toMatch(/<html/i);
    for (const service of ['tunnel-manager', 'panel']) {
      const container = `${project}_${service}_1`;
      if (ENGINE === 'podman') {
        // compose's healthcheck (the panel's differs from the image's) as podman runs it.
        const r = await engine(['healthcheck', 'run', container], { reject: false });
        expect(r.exitCode, `${container}: ${String(r.all)}`).toBe(0);
      } else {
        await until(`${container} healthy`, async () =>
          String((await engine(['inspect', '--format', '{{.State.Health.Status}}', container])).stdout).trim() === 'healthy', 60_000);
      }
    }
  });

  it('stops both with `down`, each exiting 0', async () => {
    const r = await compose(['stop', '--timeout', '20']);
    expect(r.exitCode, String(r.all)).toBe(0);
    for (const service of ['tunnel-manager', 'panel']) {
      const exit = await engine(['inspect', '--format', '{{.State.ExitCode}}', `${project}_${service}_1`]);
      expect(`${service} ${String(exit.stdout).trim()}`).toBe(`${service} 0`);
    }
    const down = await compose(['down', '-v']);
    expect(down.exitCode, String(down.all)).toBe(0);
  });
});

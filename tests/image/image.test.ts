// The built image run by a real engine (scripts/test-image builds it and runs this file):
// host networking, PUID/PGID, tunnels both ways through a real sshd on this host, the
// image's health check, the panel, the CLI over the socket, node-pty, and a clean stop.
// The SSH config names its keys by autossh-tunnel-dockerized's paths (/home/myuser/.ssh).
import { chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS helper shared with the other suites
import { freePort, portIsFree, startSshd } from '../../scripts/lib/sshd.mjs';
import {
  ENGINE, IMAGE, PGID, PUID, echoServer, engine, healthy, processIds, requireImage, roundTrip, sshDir, until,
  type SshDir,
} from './engine.js';

interface Server { port: number; user: string; clientKey: string; hostKey: string; sessionPids(): number[]; stop(): Promise<void> }
interface Status { name: string; status: string; pid: number | null }

const name = `tm-image-${process.pid}`;
const panelName = `${name}-panel`;
const dropInName = `${name}-myuser`;
let server: Server;
let ssh: SshDir;
let work: string;
let echo: net.Server;
let echoPort: number;
let apiPort: number;
let lPort: number;
let rPort: number;
const statuses = async (port = apiPort) => (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as Status[];

/** `engine run -d` of the image with host networking and PUID/PGID; `extra` goes before the image. */
async function run(container: string, extra: string[], command: string[] = []): Promise<void> {
  const health = ENGINE === 'docker' ? ['--health-interval', '1s'] : [];
  await engine(['rm', '-f', '-v', container], { reject: false });
  await engine(['run', '-d', '--name', container, '--network', 'host', '-e', `PUID=${PUID}`, '-e', `PGID=${PGID}`, ...health, ...extra, IMAGE, ...command]);
}

const logs = async (container: string) => String((await engine(['logs', container], { reject: false })).all);

describe('the image', () => {
  beforeAll(async () => {
    requireImage();
    server = await startSshd();
    ssh = await sshDir(server);
    work = await mkdtemp(join(tmpdir(), 'tm-image-work-'));
    [echoPort, apiPort, lPort, rPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    echo = await echoServer(echoPort);
    // The user's own folders, as compose's ./config is: the panel writes there.
    await mkdir(join(work, 'config'));
    await chown(join(work, 'config'), PUID, PGID);
    await mkdir(join(work, 'state'));
    await writeFile(
      join(work, 'config/config.yaml'),
      [
        'tunnels:',
        '  - name: here',
        '    remote_host: testhost',
        `    remote_port: ${echoPort}`,
        `    local_port: "127.0.0.1:${lPort}"`,
        '    direction: remote_to_local',
        '  - name: there',
        '    remote_host: testhost',
        `    remote_port: "127.0.0.1:${rPort}"`,
        `    local_port: ${echoPort}`,
        '    direction: local_to_remote',
        '',
      ].join('\n'),
    );
    await run(name, [
      '-e', `TUNNEL_API_LISTEN=127.0.0.1:${apiPort}`,
      '-v', `${ssh.dir}:/home/tunnel/.ssh:ro`,
      '-v', `${join(work, 'config')}:/config`,
      '-v', `${join(work, 'state')}:/var/lib/tunnel-manager`,
    ]);
    try {
      await until('both tunnels RUNNING', async () => {
        const s = await statuses();
        return s.length === 2 && s.every((t) => t.status === 'RUNNING');
      }, 60_000);
    } catch (e) {
      throw new Error(`${String(e)}\n--- container log ---\n${await logs(name)}`, { cause: e });
    }
  }, 120_000);

  afterAll(async () => {
    // One at a time: an engine may refuse the whole list when one of them does not exist.
    if (ENGINE && IMAGE) for (const c of [name, panelName, dropInName]) await engine(['rm', '-f', '-v', c], { reject: false });
    echo?.close();
    await server?.stop();
    await ssh?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('runs the daemon and its ssh children as PUID/PGID, and hands it the state folder', async () => {
    const node = await processIds(name, 'node');
    const sshs = await processIds(name, 'ssh');
    expect(node).toEqual([`${PUID} ${PGID}`]);
    // One ssh per connection: both tunnels go to testhost, so by default they share one.
    const connections = new Set((await statuses()).map((t) => t.pid));
    expect(connections.has(null)).toBe(false);
    expect(sshs.length).toBeGreaterThanOrEqual(connections.size);
    expect(new Set(sshs)).toEqual(new Set([`${PUID} ${PGID}`]));
    const st = await stat(join(work, 'state'));
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([PUID, PGID, 0o700]);
  });

  it('shares the host network: the API and a -L port answer on the host\'s loopback', async () => {
    const health = await fetch(`http://127.0.0.1:${apiPort}/health`);
    expect(health.status).toBe(200);
    expect(await portIsFree(lPort)).toBe(false);
  });

  it('carries data both ways through the real sshd on the host (keys named by /home/myuser/.ssh paths)', async () => {
    // -L: the container listens on the host's 127.0.0.1:lPort, the server connects to the echo server.
    expect(await roundTrip(lPort, 'through -L\n')).toBe('through -L\n');
    // -R: the server listens on rPort, the container (host network) connects to the echo server.
    expect(await roundTrip(rPort, 'through -R\n')).toBe('through -R\n');
  });

  it('answers tunnel-cli over its unix socket inside the container', async () => {
    const r = await engine(['exec', '--user', `${PUID}:${PGID}`, name, 'tunnel-cli', 'status']);
    expect(String(r.stdout)).toMatch(/here[\s\S]*RUNNING/);
    expect(String(r.stdout)).toMatch(/there[\s\S]*RUNNING/);
  });

  it('has a health check that the engine runs and that passes', async () => {
    const r = await engine(['image', 'inspect', '--format', '{{json .Config.Healthcheck}}', IMAGE]);
    expect(JSON.parse(String(r.stdout))).toMatchObject({ Test: ['CMD', 'node', '/usr/local/lib/tunnel-manager/healthcheck.mjs'] });
    await healthy(name);
  });

  it('loads node-pty (interactive tunnels) and opens a terminal in it as PUID', async () => {
    const code = 'require("node-pty").spawn("/bin/sh", ["-c", "id -u"], {}).onData((d) => process.stdout.write(d))';
    const r = await engine(['run', '--rm', '--network', 'none', '-e', `PUID=${PUID}`, '-e', `PGID=${PGID}`, IMAGE, 'node', '-e', code]);
    expect(String(r.stdout).trim()).toBe(String(PUID));
  });

  it('carries no package caches, package lists or compilers (they belong to the build stages)', async () => {
    // Bases differ in whether apt cleans up after itself; the image must not depend on it.
    const script = [
      'find /var/cache/apt /var/lib/apt/lists -type f ! -name lock ! -path "*/partial/*" | head -20',
      'for t in g++ gcc make python3; do command -v "$t" || true; done',
    ].join('; ');
    const r = await engine(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', IMAGE, '-c', script]);
    expect(String(r.stdout).trim()).toBe('');
  });

  it('serves the panel, which reads the config and the SSH hosts', async () => {
    const panelPort: number = await freePort();
    await run(panelName, [
      '-e', `PANEL_LISTEN=127.0.0.1:${panelPort}`,
      '-e', `TUNNEL_API_URL=http://127.0.0.1:${apiPort}`,
      '-v', `${ssh.dir}:/home/tunnel/.ssh:ro`,
      '-v', `${join(work, 'config')}:/config`,
    ], ['panel']);
    const page = await until('the panel page', async () => {
      if (String((await engine(['inspect', '--format', '{{.State.Running}}', panelName])).stdout).trim() !== 'true') {
        throw new Error('the panel\'s container is not running');
      }
      const res = await fetch(`http://127.0.0.1:${panelPort}/`).catch(() => null);
      return res?.status === 200 ? res.text() : undefined;
    }).catch(async (e: unknown) => { throw new Error(`${String(e)}\n--- panel log ---\n${await logs(panelName)}`); });
    expect(page).toMatch(/<html/i);
    const headers = { 'x-panel-request': '1' };
    const config = (await (await fetch(`http://127.0.0.1:${panelPort}/api/config`, { headers })).json()) as { config: unknown };
    expect(JSON.stringify(config.config)).toContain('"here"');
    const hosts = await (await fetch(`http://127.0.0.1:${panelPort}/api/ssh-hosts`, { headers })).text();
    expect(hosts).toContain('testhost');
    await engine(['stop', '-t', '10', panelName]);
    const exit = await engine(['inspect', '--format', '{{.State.ExitCode}}', panelName]);
    expect(String(exit.stdout).trim()).toBe('0');
  });

  it('stops cleanly: exit 0 well within the grace period, ssh children gone, ports freed', async () => {
    const started = Date.now();
    await engine(['stop', '-t', '20', name]);
    const took = Date.now() - started;
    const exit = await engine(['inspect', '--format', '{{.State.ExitCode}}', name]);
    const log = await logs(name);
    expect(String(exit.stdout).trim(), log).toBe('0');
    expect(took, 'a stop that waited for the grace period ended in SIGKILL').toBeLessThan(15_000);
    expect(log).toMatch(/"event":"stopped","exit_code":0/);
    await until('the server to have no sessions left', async () => server.sessionPids().length === 0, 10_000);
    expect(await portIsFree(lPort)).toBe(true);
  });

  it('works with the SSH directory mounted where autossh-tunnel-dockerized mounts it (/home/myuser/.ssh)', async () => {
    const [api, local] = [await freePort(), await freePort()];
    const config = join(work, 'config-myuser');
    await mkdir(config);
    await writeFile(
      join(config, 'config.yaml'),
      `tunnels:\n  - name: moved\n    remote_host: testhost\n    remote_port: ${echoPort}\n    local_port: "127.0.0.1:${local}"\n`,
    );
    await run(dropInName, ['-e', `TUNNEL_API_LISTEN=127.0.0.1:${api}`, '-v', `${ssh.dir}:/home/myuser/.ssh:ro`, '-v', `${config}:/config`]);
    await until('moved RUNNING', async () => (await statuses(api)).some((t) => t.name === 'moved' && t.status === 'RUNNING'), 60_000)
      .catch(async (e: unknown) => { throw new Error(`${String(e)}\n--- container log ---\n${await logs(dropInName)}`); });
    expect(await roundTrip(local, 'from /home/myuser/.ssh\n')).toBe('from /home/myuser/.ssh\n');
    await engine(['stop', '-t', '10', dropInName]);
  });
});

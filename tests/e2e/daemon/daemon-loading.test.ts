// The built daemon never shows an empty or partial config while it loads the file:
// asked the moment its port accepts, every route but /health answers 503 `loading`
// (with Retry-After) or the whole config; /health says `loading`; tunnel-cli waits for
// the load. The same after a crash (kill -9) and a restart on the same state dir. With
// a token, a caller without it is refused 401 first and never told `loading`, and no
// odd spelling of a path (percent-encoded, dot segments) reaches a route meanwhile.
//
// The window is made wide on purpose: `ssh -G` (which the first load runs per host)
// goes through a wrapper that takes a second, as a slow DNS or Match exec would.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, MAIN, port } from '../daemon-harness.js';

const TUNNELS = 1000;
let dir: string;
let apiPort: number;
let socketPath: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tm-loading-'));
  apiPort = await port();
  socketPath = join(dir, 'api.sock');
  // Interactive tunnels never start by themselves: the load is all this file measures, no ssh logins.
  const entries = Array.from({ length: TUNNELS }, (_, i) => `  - name: t${i}\n    remote_host: user@h${i % 4}\n    remote_port: ${10000 + i}\n    local_port: ${20000 + i}\n    interactive: true\n`);
  writeFileSync(join(dir, 'config.yaml'), `tunnels:\n${entries.join('')}`);
  writeFileSync(join(dir, 'slow-ssh'), '#!/bin/sh\nfor a in "$@"; do [ "$a" = -G ] && sleep 1; done\nexec ssh "$@"\n');
  chmodSync(join(dir, 'slow-ssh'), 0o755);
});

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startDaemon(env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(
    process.execPath,
    [MAIN, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${apiPort}`, '--socket', socketPath, '--state-dir', join(dir, 'state'), '--ssh-config', '/dev/null', '--ssh-bin', join(dir, 'slow-ssh')],
    { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, TUNNEL_API_TOKEN: '', ...env } },
  );
  children.push(child);
  return child;
}

const connects = (to: net.NetConnectOpts) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(to, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

/** Resolves once the TCP port and then the socket accept a connection (polled; the daemon is starting). */
async function accepting(child: ChildProcess): Promise<void> {
  for (const to of [{ port: apiPort, host: '127.0.0.1' }, { path: socketPath }]) {
    while (!(await connects(to))) {
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over TCP or the socket; for /events only the head and first bytes. */
function get(path: string, via: 'tcp' | 'socket', headers: http.OutgoingHttpHeaders = {}): Promise<Answer> {
  const where = via === 'tcp' ? { host: '127.0.0.1', port: apiPort } : { socketPath };
  return new Promise((resolve, reject) => {
    const req = http.get({ ...where, path, agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
        if (path === '/events') {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/** What an answer of `path` says about the config, or 'loading'; fails the test on an empty or partial one. */
function judge(path: string, a: Answer): 'loading' | 'whole' {
  if (path === '/health') {
    const h = JSON.parse(a.body);
    expect(a.status).toBe(200);
    if (h.loading) {
      expect(h).toEqual({ ok: true, loading: true, config: null, tunnels: 0, running: 0 });
      return 'loading';
    }
    expect(h.config.valid).toBe(true);
    return 'whole';
  }
  if (a.status === 503) {
    expect(JSON.parse(a.body).error.code, `${path}: ${a.body}`).toBe('loading');
    expect(a.headers['retry-after']).toBe('1');
    return 'loading';
  }
  expect(a.status, `${path}: ${a.body.slice(0, 200)}`).toBe(200);
  if (path === '/list' || path === '/status') expect(JSON.parse(a.body)).toHaveLength(TUNNELS);
  if (path === '/config') expect(JSON.parse(a.body).tunnels).toHaveLength(TUNNELS);
  if (path === '/metrics') expect(a.body.match(/^tunnel_up\{/gm)).toHaveLength(TUNNELS);
  return 'whole';
}

const PATHS = ['/list', '/status', '/config', '/logs', '/metrics', '/events', '/health'];

/** From the first accepted connection until the whole config shows: every answer is `loading` or whole. */
async function neverPartial(child: ChildProcess): Promise<{ loadingSeen: number }> {
  await accepting(child);
  let loadingSeen = 0;
  for (;;) {
    const verdicts = await Promise.all(PATHS.flatMap((p) => (['tcp', 'socket'] as const).map(async (via) => judge(p, await get(p, via)))));
    loadingSeen += verdicts.filter((v) => v === 'loading').length;
    if (verdicts.every((v) => v === 'whole')) return { loadingSeen };
    await new Promise((r) => setTimeout(r, 50));
  }
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, '--socket', socketPath, ...args], { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (e, stdout, stderr) =>
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr }),
    );
  });
}

describe('a daemon loading a config of many tunnels', () => {
  it('answers `loading` or the whole config, never an empty or partial one, from its first accepted connection', async () => {
    const child = startDaemon();
    const { loadingSeen } = await neverPartial(child);
    // The slow ssh -G makes the load last a second: the window was there and was answered `loading`.
    expect(loadingSeen).toBeGreaterThan(0);
  });

  it('after a crash (kill -9) and a restart, the same; tunnel-cli waits for the load instead of printing nothing', async () => {
    const first = children.at(-1)!;
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const child = startDaemon();
    await accepting(child);
    // The CLI asked while the daemon loads: it waits, then prints every tunnel.
    const [list, status, validate] = await Promise.all([cli(['list', '--json']), cli(['status']), cli(['validate'])]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toHaveLength(TUNNELS);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout.trim().split('\n')).toHaveLength(TUNNELS + 1);
    expect(validate.stdout).toBe('the config file is valid\n');
    const again = startDaemonAgainAfterCrash(child);
    await neverPartial(await again);
  });
});

/** The first line of the answer to a WebSocket upgrade of a login terminal, over TCP. */
function upgradeStatus(headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: apiPort }, () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      s.write(`GET /auth/t0 HTTP/1.1\r\nHost: 127.0.0.1:${apiPort}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`);
    });
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      text += d;
      if (text.includes('\r\n')) {
        s.destroy();
        resolve(text.slice(0, text.indexOf('\r\n')));
      }
    });
    s.on('error', reject);
  });
}

describe('a daemon with a token, loading', () => {
  it('refuses a request without the token (401) before it says `loading`: only a caller that may see the config learns its state', async () => {
    // The daemons before this one hold the port and the socket.
    await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGKILL')))));
    const child = startDaemon({ TUNNEL_API_TOKEN: 'loading-secret' });
    await accepting(child);
    const token = { authorization: 'Bearer loading-secret' };
    let loadingSeen = 0;
    let oddPathsToldLoading = 0;
    let whole = false;
    while (!whole) {
      const [bare, wrong, upgrade, withToken, proxy, socket, encoded, dotted] = await Promise.all([
        get('/list', 'tcp'),
        get('/config', 'tcp', { authorization: 'Bearer not-it' }),
        upgradeStatus({}),
        get('/list', 'tcp', token),
        // /v1 is not the token's: its keys come from the config, so while it loads it says so to anyone.
        get('/v1/models', 'tcp'),
        get('/list', 'socket'),
        // Paths the adapter or router may read as /v1's: they never pass as guarded ones and reach a route while it loads.
        get('/%761/models', 'tcp'),
        get('/list/../v1/models', 'tcp'),
      ]);
      for (const a of [encoded, dotted]) {
        expect([404, 503], a.body).toContain(a.status);
        if (a.status === 503) oddPathsToldLoading++;
      }
      expect(bare.status, bare.body).toBe(401);
      expect(JSON.parse(bare.body).error.code).toBe('unauthorized');
      expect(wrong.status, wrong.body).toBe(401);
      expect(upgrade).toMatch(/^HTTP\/1\.1 401 /);
      expect([200, 503]).toContain(proxy.status);
      for (const a of [withToken, socket]) {
        if (judge('/list', a) === 'loading') loadingSeen++;
      }
      whole = judge('/list', withToken) === 'whole' && judge('/list', socket) === 'whole';
      if (!whole) await new Promise((r) => setTimeout(r, 50));
    }
    // The window was there, and a caller with the token was told `loading` in it; so were the odd paths, without one.
    expect(loadingSeen).toBeGreaterThan(0);
    expect(oddPathsToldLoading).toBeGreaterThan(0);
  });
});

/** kill -9 and a new daemon on the same state dir and socket (it replaces the stale socket). */
async function startDaemonAgainAfterCrash(child: ChildProcess): Promise<ChildProcess> {
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return startDaemon();
}

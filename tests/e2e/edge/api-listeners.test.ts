// The API through both real listeners: TCP and the unix socket, served from one app.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../../src/api/app.js';
import { tempConfigFile } from '../../unit/api/helpers.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { ListenError, startListeners } from '../../../src/api/server.js';
import { FakeEngine, SAMPLE } from '../../unit/api/fake-engine.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'tm-api-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function start(opts: { socketPath: string; host?: string; tokens?: string[] | null }) {
  const engine = new FakeEngine(SAMPLE);
  const metrics = createMetrics(engine, { processMetrics: false });
  const tokens = opts.tokens ?? null;
  const listeners = await startListeners({
    tcpApp: createDaemonApp({ engine, configFile: tempConfigFile().configFile, transport: 'tcp', tokens, metrics }),
    socketApp: createDaemonApp({ engine, configFile: tempConfigFile().configFile, transport: 'socket', tokens: null, metrics }),
    listen: { host: opts.host ?? '127.0.0.1', port: 0 },
    socketPath: opts.socketPath,
    tokens,
  });
  cleanups.push(async () => {
    await listeners.close();
    engine.close();
  });
  return { engine, listeners };
}

function viaSocket(socketPath: string, path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens GET /events and resolves once the connected comment arrived. */
function openEvents(opts: http.RequestOptions): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request({ ...opts, path: '/events' }, (res) => res.once('data', () => resolve(res)));
    req.on('error', reject);
    req.end();
  });
}

describe('startListeners', () => {
  it('serves the same API on TCP and on the socket; the token guards TCP only', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'run', 'api.sock');
    const { listeners } = await start({ socketPath, tokens: ['tok'] });
    const base = `http://127.0.0.1:${listeners.tcpPort}`;
    const tcp = await fetch(`${base}/status`, { headers: { authorization: 'Bearer tok' } });
    expect(tcp.status).toBe(200);
    const unix = await viaSocket(socketPath, '/status');
    expect(unix.status).toBe(200);
    expect(JSON.parse(unix.body)).toEqual(await tcp.json());
    expect((await fetch(`${base}/status`)).status).toBe(401);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('creates the socket mode 0600 in a folder created 0700, and removes it on close', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'nested', 'run', 'api.sock');
    const { listeners } = await start({ socketPath });
    const st = statSync(socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'nested', 'run')).mode & 0o777).toBe(0o700);
    await listeners.close();
    expect(existsSync(socketPath)).toBe(false);
    await listeners.close(); // idempotent
  });

  it('replaces a stale socket left by a killed daemon', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => child.stdout!.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(statSync(socketPath).isSocket()).toBe(true);
    await start({ socketPath });
    expect((await viaSocket(socketPath, '/health')).status).toBe(200);
  });

  it('refuses a socket another daemon answers on, and a path that is not a socket; nothing stays listening', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const other = net.createServer();
    await new Promise<void>((r) => other.listen(socketPath, r));
    cleanups.push(() => new Promise<void>((r) => other.close(() => r())));
    await expect(start({ socketPath })).rejects.toThrow(`another daemon (pid ${process.pid}) is already listening on ${socketPath}: stop it first, or give each daemon its own --socket`);

    const file = join(dir, 'file.sock');
    writeFileSync(file, 'x');
    const e = await start({ socketPath: file }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ListenError);
    expect((e as ListenError).reason).toBe('socket');
    expect((e as Error).message).toBe(`${file} exists and is not a socket: remove it or choose another --socket`);
  });

  it('refuses a socket folder other users can write to', async () => {
    const dir = tmp();
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(start({ socketPath: join(open, 'api.sock') })).rejects.toThrow(`run chmod go-w ${open}`);
  });

  it('refuses a non-loopback address without a token, with the message, before binding anything', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const e = await start({ socketPath, host: '0.0.0.0' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ListenError);
    expect((e as ListenError).reason).toBe('insecure');
    expect((e as Error).message).toBe('refusing to listen on 0.0.0.0:0 without TUNNEL_API_TOKEN: set a token or listen on 127.0.0.1');
    expect(existsSync(socketPath)).toBe(false);
    // With a token the same address is accepted.
    const { listeners } = await start({ socketPath, host: '0.0.0.0', tokens: ['t'] });
    expect(listeners.tcpPort).toBeGreaterThan(0);
  });

  it('says so when the TCP port is taken, and leaves no socket behind', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as net.AddressInfo).port;
    const engine = new FakeEngine(SAMPLE);
    cleanups.push(() => engine.close());
    const metrics = createMetrics(engine, { processMetrics: false });
    const app = createDaemonApp({ engine, configFile: tempConfigFile().configFile, transport: 'tcp', tokens: null, metrics });
    const e = await startListeners({ tcpApp: app, socketApp: app, listen: { host: '127.0.0.1', port }, socketPath, tokens: null }).catch((x: unknown) => x);
    expect((e as Error).message).toBe(`cannot listen on 127.0.0.1:${port}: the address is already in use`);
    expect(existsSync(socketPath)).toBe(false);
  });

  it('open SSE streams on both listeners do not hold close()', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const { listeners, engine } = await start({ socketPath });
    // The apps' own subscribers (the /status cache), before any stream.
    const base = engine.listenerCount();
    const a = await openEvents({ host: '127.0.0.1', port: listeners.tcpPort });
    const b = await openEvents({ socketPath });
    expect(engine.listenerCount()).toBe(base + 2);
    const ended = Promise.all([a, b].map((res) => new Promise((r) => res.once('close', r))));
    // An open stream would keep server.close() waiting forever: resolving at all is the proof.
    await listeners.close();
    await ended;
    for (let i = 0; i < 50 && engine.listenerCount() > base; i++) await new Promise((r) => setTimeout(r, 10));
    expect(engine.listenerCount()).toBe(base);
  });

  it('delivers a status event over the socket when a tunnel is stopped', async () => {
    const dir = tmp();
    const socketPath = join(dir, 'api.sock');
    const { engine } = await start({ socketPath });
    const hash = engine.tunnels()[0]!.hash;
    await viaSocket(socketPath, `/start/${hash}`, 'POST');
    const res = await openEvents({ socketPath });
    let text = '';
    res.setEncoding('utf8');
    const got = new Promise<string>((resolve) => res.on('data', (d: string) => {
      text += d;
      if (text.includes('"STOPPED"')) resolve(text);
    }));
    await viaSocket(socketPath, `/stop/${hash.slice(0, 8)}`, 'POST');
    const events = await got;
    expect(events).toMatch(new RegExp(`event: status\\ndata: \\{"hash":"${hash}"[^\\n]*"status":"STOPPED"`));
    res.destroy();
  });
});


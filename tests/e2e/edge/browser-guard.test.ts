// No web page may drive the daemon (SPEC §6): every route of the built daemon's TCP
// listener and of `tunnel-manager proxy`'s refuses a foreign Host (DNS rebinding), a
// foreign Origin, `Origin: null` and the bodies a page may send cross-origin without
// a preflight (text/plain, form encoding, multipart, none at all); requests without
// Origin, as tools send them, pass; the unix socket takes requests whatever their
// headers. Nothing refused changes the config file.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, port, startDaemon, type Daemon } from '../daemon-harness.js';

const FOREIGN_HOSTS = ['evil.example', 'evil.example:PORT', '127.0.0.1.evil.example:PORT', 'localhost.evil.example', '10.1.2.3:PORT'];
const OWN_HOSTS = ['127.0.0.1:PORT', 'localhost:PORT', 'localhost', '127.0.0.2:PORT', 'LOCALHOST.:PORT', 'allowed.example.test:PORT'];
const FOREIGN_ORIGINS = ['http://evil.example', 'http://evil.example:PORT', 'https://127.0.0.1.evil.example', 'null', 'file://', 'chrome-extension://abc'];
const SIMPLE_TYPES = ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'];

interface Answer {
  status: number;
  code: string | undefined;
}

/**
 * The code of an error body in either shape, and whose shape it is: Anthropic's
 * (`{"type": "error", …}`, the code at the end of its message) or the others'
 * (`{"error": {"code"}}`).
 */
function codeOf(text: string): { code: string | undefined; shape?: 'anthropic' | 'openai' } {
  try {
    const body = JSON.parse(text) as { type?: string; error?: { code?: string; message?: string } };
    if (body.type === 'error') return { code: /\(([a-z_]+)\)$/.exec(body.error?.message ?? '')?.[1], shape: 'anthropic' };
    return { code: body.error?.code, shape: 'openai' };
  } catch {
    return { code: undefined };
  }
}

/** One request over TCP or the socket, with exactly the headers given (Host included). */
async function send(target: { port: number } | { socketPath: string }, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const { status, code } = await sendShaped(target, method, path, headers, body);
  return { status, code };
}

/** As send, with the shape of the error body. */
function sendShaped(target: { port: number } | { socketPath: string }, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer & { shape?: 'anthropic' | 'openai' }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ ...('port' in target ? { host: '127.0.0.1', port: target.port } : { socketPath: target.socketPath }), method, path, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      // An event stream that was let through: its head is the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, code: undefined });
      }
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ...codeOf(text) }));
    });
    req.on('error', (e) => reject(new Error(`${method} ${path} ${JSON.stringify(headers)}: ${e.message}`)));
    req.end(body);
  });
}

const HASH_ABSENT = 'ffffffff';
let d: Daemon;
let proxy: ChildProcess;
let proxyPort: number;
let hash: string;
let fileBefore: string;
let sshDir: string;
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every route of the daemon's TCP listener; `:h` is a tunnel's hash. Writes use a hash that matches nothing when let through. */
const DAEMON_ROUTES: [string, string][] = [
  ['GET', '/list'], ['GET', '/status'], ['GET', '/health'], ['GET', '/events'], ['GET', '/metrics'], ['GET', '/logs'], ['GET', '/logs/:h'],
  ['GET', '/config'], ['GET', '/config/:h'], ['HEAD', '/status'],
  ['POST', '/start'], ['POST', '/stop'], ['POST', '/reload'], ['POST', '/start/:h'], ['POST', '/stop/:h'], ['POST', '/restart/:h'],
  ['POST', '/config'], ['PUT', '/config'], ['POST', '/config/new'], ['POST', '/config/:h'], ['PUT', '/config/:h'], ['DELETE', '/config/:h'],
  ['POST', '/config/:h/delete'], ['PATCH', '/config/:h'], ['GET', '/nowhere'],
];
/** Every route of the /v1 group (both listeners serve it), and the proxy listener's /metrics. */
const V1_ROUTES: [string, string][] = [
  ['POST', '/v1/chat/completions'], ['POST', '/v1/responses'], ['POST', '/v1/embeddings'], ['POST', '/v1/messages'], ['POST', '/v1/messages/count_tokens'],
  ['POST', '/v1/audio/transcriptions'], ['GET', '/v1/models'], ['GET', '/v1/models/mock:m'], ['GET', '/v1/responses/resp_1'], ['DELETE', '/v1/responses/resp_1'],
  ['OPTIONS', '/v1/chat/completions'], ['GET', '/v1/nowhere'], ['GET', '/v1'],
];

const STATE_CHANGING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

beforeAll(async () => {
  sshDir = mkdtempSync(join(tmpdir(), 'tm-guard-ssh-'));
  const sshConfig = join(sshDir, 'config');
  writeFileSync(sshConfig, '', { mode: 0o600 });
  const config = [
    '# one tunnel; its host does not exist, so it only retries',
    'tunnels:',
    '  - name: db',
    '    remote_host: nowhere.invalid',
    '    remote_port: 5432',
    `    local_port: "127.0.0.1:${await port()}"`,
    'proxy:',
    '  providers:',
    '    mock: { base_url: "http://127.0.0.1:9/v1" }',
    '  cors_origins: ["http://app.example.test:3000"]',
    '',
  ].join('\n');
  d = await startDaemon({ config, sshConfigPath: sshConfig, env: { TUNNEL_API_ALLOWED_HOSTS: 'allowed.example.test, 192.168.77.1' } });
  hash = (await d.json<{ hash: string }[]>('/list'))[0]!.hash;
  fileBefore = digest(d.configPath);
  proxyPort = await port();
  proxy = spawn(process.execPath, [MAIN, 'proxy', '--config', d.configPath, '--listen', `127.0.0.1:${proxyPort}`], {
    stdio: 'ignore',
    env: { ...process.env, TUNNEL_API_ALLOWED_HOSTS: 'allowed.example.test' },
  });
  await d.waitFor('tunnel-manager proxy', async () => (await fetch(`http://127.0.0.1:${proxyPort}/v1/models`).catch(() => null))?.status === 200);
}, 60_000);

afterAll(async () => {
  proxy?.kill('SIGTERM');
  await d?.cleanup();
  if (sshDir) rmSync(sshDir, { recursive: true, force: true });
});

const listeners = () => [
  { name: "the daemon's TCP listener", port: d.apiPort, routes: [...DAEMON_ROUTES, ...V1_ROUTES] },
  { name: '`tunnel-manager proxy`', port: proxyPort, routes: [...V1_ROUTES, ['GET', '/metrics'] as [string, string]] },
];
const fill = (text: string, p: number) => text.replace('PORT', String(p));
const at = (path: string, real: boolean) => path.replace(':h', real ? hash : HASH_ABSENT);
const jsonBody = (method: string) => (STATE_CHANGING.has(method) ? '{}' : undefined);
const jsonHeaders = (method: string): Record<string, string> => (STATE_CHANGING.has(method) ? { 'content-type': 'application/json' } : {});

describe('every TCP route refuses what a web page sends', () => {
  it('a foreign Host (DNS rebinding): 403 host_not_allowed, with or without Origin', async () => {
    for (const l of listeners()) {
      for (const [method, path] of l.routes) {
        for (const host of FOREIGN_HOSTS) {
          const h = fill(host, l.port);
          const r = await send(l, method, at(path, true), { host: h, ...jsonHeaders(method) }, jsonBody(method));
          expect({ listener: l.name, method, path, host: h, ...r }).toMatchObject({ status: 403, code: method === 'HEAD' ? undefined : 'host_not_allowed' });
          const same = await send(l, method, at(path, true), { host: h, origin: `http://${h}`, ...jsonHeaders(method) }, jsonBody(method));
          expect({ listener: l.name, method, path, host: h, same: true, status: same.status }).toMatchObject({ status: 403 });
        }
      }
    }
  });

  it('a foreign Origin, Origin: null, file:// and an extension: 403 origin_not_allowed', async () => {
    for (const l of listeners()) {
      for (const [method, path] of l.routes) {
        for (const origin of FOREIGN_ORIGINS) {
          const o = fill(origin, l.port);
          const r = await send(l, method, at(path, true), { host: `127.0.0.1:${l.port}`, origin: o, ...jsonHeaders(method) }, jsonBody(method));
          expect({ listener: l.name, method, path, origin: o, ...r }).toMatchObject({ status: 403, code: method === 'HEAD' ? undefined : 'origin_not_allowed' });
        }
      }
    }
  });

  it('a state-changing request with a simple content type, or a body without one: 415', async () => {
    for (const l of listeners()) {
      for (const [method, path] of l.routes.filter(([m]) => STATE_CHANGING.has(m))) {
        const bodies: [Record<string, string>, string][] = [
          // Under /v1 a form is an upload's body (and comes with its page's Origin, refused above).
          ...SIMPLE_TYPES.filter((t) => !(t.startsWith('multipart') && path.startsWith('/v1/'))).map((t): [Record<string, string>, string] => [{ 'content-type': t }, '{"name":"x"}']),
          [{}, '{"name":"x"}'],
          [{ 'content-type': 'text/plain' }, ''],
        ];
        for (const [headers, body] of bodies) {
          const r = await send(l, method, at(path, true), { host: `localhost:${l.port}`, ...headers }, body);
          expect({ listener: l.name, method, path, headers, ...r }).toMatchObject({ status: 415, code: 'unsupported_media_type' });
        }
      }
    }
  });

  it("under /v1 each refusal is in the shape of the path's clients: Anthropic's for /v1/messages, and elsewhere than an OpenAI endpoint for a request with anthropic-version", async () => {
    // An endpoint's own family at its path and below; elsewhere (models, unknown paths) the header decides.
    const endpointFamily = (path: string) => (path.startsWith('/v1/messages') ? 'anthropic' : /^\/v1\/(chat\/completions|responses|embeddings|audio\/)/.test(path) ? 'openai' : null);
    const anthropic = (path: string, headers: Record<string, string>) => (endpointFamily(path) ?? (headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai')) === 'anthropic';
    for (const l of listeners()) {
      for (const [method, path] of V1_ROUTES.filter(([m]) => m !== 'HEAD' && m !== 'OPTIONS')) {
        for (const extra of [{}, { 'anthropic-version': '2023-06-01' }] as Record<string, string>[]) {
          const host = await sendShaped(l, method, path, { host: 'evil.example', ...extra, ...jsonHeaders(method) }, jsonBody(method));
          const origin = await sendShaped(l, method, path, { host: `127.0.0.1:${l.port}`, origin: 'http://evil.example', ...extra, ...jsonHeaders(method) }, jsonBody(method));
          const shape = anthropic(path, extra) ? 'anthropic' : 'openai';
          expect({ listener: l.name, method, path, extra, ...host }).toEqual({ listener: l.name, method, path, extra, status: 403, code: 'host_not_allowed', shape });
          expect({ listener: l.name, method, path, extra, ...origin }).toEqual({ listener: l.name, method, path, extra, status: 403, code: 'origin_not_allowed', shape });
        }
      }
      const media = await sendShaped(l, 'POST', '/v1/messages', { host: `localhost:${l.port}`, 'content-type': 'text/plain' }, '{}');
      expect({ listener: l.name, ...media }).toEqual({ listener: l.name, status: 415, code: 'unsupported_media_type', shape: 'anthropic' });
    }
  });

  it('nothing refused changed the config file or the tunnels', async () => {
    expect(digest(d.configPath)).toBe(fileBefore);
    expect((await d.json<{ hash: string }[]>('/list')).map((t) => t.hash)).toEqual([hash]);
  });
});

describe('what tools and pages of this machine send passes', () => {
  it('no Origin with a loopback Host or a listed name reaches the route on every listener', async () => {
    for (const l of listeners()) {
      for (const [method, path] of l.routes) {
        for (const host of OWN_HOSTS) {
          const h = fill(host, l.port);
          const r = await send(l, method, at(path, false), { host: h, ...jsonHeaders(method) }, jsonBody(method));
          expect({ listener: l.name, method, path, host: h, refused: r.status === 403 || r.status === 415, code: r.code }).toMatchObject({ refused: false });
        }
      }
    }
  });

  it('a body-less POST without Content-Type (the documented curl -X POST) and JSON with a charset pass', async () => {
    const stop = await send({ port: d.apiPort }, 'POST', `/stop/${HASH_ABSENT}`, { host: `127.0.0.1:${d.apiPort}` });
    expect(stop).toEqual({ status: 404, code: 'tunnel_not_found' });
    const reload = await send({ port: d.apiPort }, 'POST', '/reload', { host: `127.0.0.1:${d.apiPort}`, 'content-type': 'application/json; charset=utf-8' }, '');
    expect(reload.status).toBe(200);
  });

  it("an Origin of this machine (the reference's panel relays its page's) passes; under /v1 so do proxy.cors_origins", async () => {
    const own = await send({ port: d.apiPort }, 'POST', `/stop/${HASH_ABSENT}`, { host: `127.0.0.1:${d.apiPort}`, origin: 'http://127.0.0.1:5001' });
    expect(own.status).toBe(404);
    const listed = await send({ port: d.apiPort }, 'GET', '/status', { host: `allowed.example.test:${d.apiPort}`, origin: 'https://allowed.example.test' });
    expect(listed.status).toBe(200);
    for (const p of [d.apiPort, proxyPort]) {
      const app = await send({ port: p }, 'GET', '/v1/models', { host: `127.0.0.1:${p}`, origin: 'http://app.example.test:3000' });
      expect(app.status).toBe(200);
    }
    // cors_origins open /v1 only, never the control routes.
    const control = await send({ port: d.apiPort }, 'GET', '/status', { host: `127.0.0.1:${d.apiPort}`, origin: 'http://app.example.test:3000' });
    expect(control).toEqual({ status: 403, code: 'origin_not_allowed' });
  });

  it('the unix socket takes requests whatever their Host, Origin or content type say', async () => {
    const socket = { socketPath: d.socketPath };
    const status = await send(socket, 'GET', '/status', { host: 'evil.example', origin: 'http://evil.example' });
    expect(status.status).toBe(200);
    const stop = await send(socket, 'POST', `/stop/${HASH_ABSENT}`, { host: 'localhost', origin: 'null', 'content-type': 'text/plain' }, '');
    expect(stop).toEqual({ status: 404, code: 'tunnel_not_found' });
  });

  it("the daemon's terminal WebSocket (/auth) refuses a foreign Host before anything else", async () => {
    const upgrade = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: d.apiPort, path: `/auth/${hash}`, setHost: false, agent: false, headers: { host, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('upgrade', (res, s) => {
          s.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await upgrade(`evil.example:${d.apiPort}`)).toBe(403);
    // A loopback Host reaches the route, which answers for itself (the tunnel is not interactive).
    expect(await upgrade(`127.0.0.1:${d.apiPort}`)).not.toBe(403);
  });
});

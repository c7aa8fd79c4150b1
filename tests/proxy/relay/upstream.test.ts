/** The proxy's own HTTP/1.1 client against raw TCP and TLS servers that misbehave on purpose. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createUpstreamPool, DEFAULT_KEEP_ALIVE_MS, type Origin, type UpstreamFailure, type UpstreamPool } from '../../../src/proxy/relay/upstream.js';
import { startProxyServer } from '../../../src/proxy/index.js';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { call, chat, startHarness } from '../harness.js';
import { startMockUpstream, type MockOptions } from '../mock-upstream.js';

/** A raw server: `answer` gets each request's head and the connection's request count, and writes what it likes. */
interface RawServer {
  port: number;
  connections: number;
  closed: number;
  heads: string[];
  close(): Promise<void>;
}

async function rawServer(answer: (socket: net.Socket, head: string, nth: number) => void, make: (l: (s: net.Socket) => void) => net.Server = net.createServer): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const state: RawServer = {
    port: 0,
    connections: 0,
    closed: 0,
    heads: [],
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = make((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      state.closed++;
      sockets.delete(socket);
    });
    socket.on('error', () => {});
    let buf = '';
    let nth = 0;
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      // Requests here have no body or a content-length one; enough for these tests.
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        state.heads.push(head);
        answer(socket, head, ++nth);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  return state;
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}';

interface Outcome {
  status: number;
  body: string;
  failure: UpstreamFailure | null;
}

/**
 * One exchange; resolves a moment after it ended, as a real next request would
 * come: undici returns the connection to its pool only after the end callback.
 */
function get(pool: UpstreamPool, origin: Origin): Promise<Outcome> {
  return new Promise<Outcome>((done) => {
    const resolve = (o: Outcome) => setTimeout(() => done(o), 10);
    const out: Outcome = { status: 0, body: '', failure: null };
    pool.request(
      origin,
      { method: 'POST', path: '/v1/chat/completions', headers: ['content-type', 'application/json'], body: Buffer.from('{}'), keepAliveMs: DEFAULT_KEEP_ALIVE_MS },
      {
        head: (status) => void (out.status = status),
        data: (c) => void (out.body += c.toString()),
        end: () => resolve(out),
        fail: (failure) => resolve({ ...out, failure }),
      },
    );
  });
}

const origin = (port: number, protocol: 'http:' | 'https:' = 'http:', hostname = '127.0.0.1'): Origin => ({ protocol, hostname, port, host: `${hostname}:${port}`, url: `${protocol}//${hostname}:${port}` });

describe('the upstream client', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function withServer(answer: (socket: net.Socket, head: string, nth: number) => void): Promise<{ server: RawServer; pool: UpstreamPool }> {
    const server = await rawServer(answer);
    const pool = createUpstreamPool();
    cleanup.push(() => server.close(), () => pool.close());
    return { server, pool };
  }

  it('writes one plain HTTP/1.1 request with host, our headers and the body length, and keeps the connection for the next', async () => {
    const { server, pool } = await withServer((s) => s.write(OK));
    for (let i = 0; i < 5; i++) expect(await get(pool, origin(server.port))).toEqual({ status: 200, body: '{"ok":true}', failure: null });
    expect(server.connections).toBe(1);
    const head = server.heads[0]!.toLowerCase().split('\r\n');
    expect(head[0]).toBe('post /v1/chat/completions http/1.1');
    expect(head).toContain(`host: 127.0.0.1:${server.port}`);
    expect(head).toContain('content-type: application/json');
    expect(head).toContain('content-length: 2');
  });

  it('opens a connection per request in flight at once', async () => {
    const { server, pool } = await withServer((s) => setTimeout(() => s.write(OK), 20));
    const all = await Promise.all([1, 2, 3].map(() => get(pool, origin(server.port))));
    expect(all.every((o) => o.status === 200)).toBe(true);
    expect(server.connections).toBe(3);
  });

  it('does not reuse a kept connection that the upstream closed while it was idle', async () => {
    // The upstream's keep-alive timer ends the connection soon after each answer.
    const { server, pool } = await withServer((s) => {
      s.write(OK);
      setTimeout(() => s.end(), 20);
    });
    expect((await get(pool, origin(server.port))).status).toBe(200);
    for (let i = 0; i < 200 && server.closed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await get(pool, origin(server.port))).toEqual({ status: 200, body: '{"ok":true}', failure: null });
    expect(server.connections).toBe(2);
  });

  it('never sends a chat request twice: a connection that closes without an answer, or mid-answer, is a failure', async () => {
    const { server, pool } = await withServer((s) => s.destroy());
    const fresh = await get(pool, origin(server.port));
    expect(fresh.failure).toMatchObject({ code: 'EOF', answered: false, message: 'the connection closed without a response' });
    expect(server.heads).toHaveLength(1);

    const half = await withServer((s, _h, nth) => (nth === 1 ? s.write(OK) : s.end('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"partial"')));
    await get(half.pool, origin(half.server.port));
    const cut = await get(half.pool, origin(half.server.port));
    expect(cut.status).toBe(200);
    expect(cut.failure).toMatchObject({ answered: true });
    expect(half.server.heads).toHaveLength(2);
  });

  it('reports a refused connection by its code', async () => {
    const { server, pool } = await withServer(() => {});
    await server.close();
    expect((await get(pool, origin(server.port))).failure).toMatchObject({ code: 'ECONNREFUSED', answered: false });
  });

  it('does not keep a connection the upstream asked to close, or one whose body ran to the close', async () => {
    const { server, pool } = await withServer((s, _h, nth) =>
      nth === 1 ? s.write('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok') : s.write(OK),
    );
    await get(pool, origin(server.port));
    await get(pool, origin(server.port));
    expect(server.connections).toBe(2);

    const old = await withServer((s) => s.end('HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"old":1}'));
    expect(await get(old.pool, origin(old.server.port))).toEqual({ status: 200, body: '{"old":1}', failure: null });
    expect(await get(old.pool, origin(old.server.port))).toEqual({ status: 200, body: '{"old":1}', failure: null });
    expect(old.server.connections).toBe(2);
  });

  it('drops a kept connection on which the upstream speaks out of turn', async () => {
    const { server, pool } = await withServer((s) => {
      s.write(OK);
      setTimeout(() => s.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'), 10);
    });
    await get(pool, origin(server.port));
    for (let i = 0; i < 500 && server.closed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.closed).toBe(1);
    expect((await get(pool, origin(server.port))).status).toBe(200);
    expect(server.connections).toBe(2);
  });

  it('closes the connection when the exchange is aborted', async () => {
    const { server, pool } = await withServer(() => {});
    const exchange = pool.request(origin(server.port), { method: 'GET', path: '/v1/models', headers: [], body: null, keepAliveMs: DEFAULT_KEEP_ALIVE_MS }, { head() {}, data() {}, end() {}, fail() {} });
    for (let i = 0; i < 200 && server.heads.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    exchange.abort();
    for (let i = 0; i < 200 && server.closed < server.connections; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.closed).toBeGreaterThan(0);
    expect(server.closed).toBe(server.connections);
  });

  it('speaks TLS to an https provider, checking its certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-tls-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    const server = await rawServer((s) => s.write(OK), (listener) => tls.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, listener));
    cleanup.push(() => server.close());
    const trusting = createUpstreamPool({ ca: cert });
    const strict = createUpstreamPool();
    cleanup.push(() => trusting.close(), () => strict.close());
    expect(await get(trusting, origin(server.port, 'https:', 'localhost'))).toEqual({ status: 200, body: '{"ok":true}', failure: null });
    expect((await get(strict, origin(server.port, 'https:', 'localhost'))).failure).toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', answered: false });
  });
});

describe('the proxy in front of odd upstreams', () => {
  const servers: RawServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('relays an HTTP/1.0 answer whose body ends with the connection', async () => {
    const old = await rawServer((s) => s.end('HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"object":"chat.completion"}'));
    servers.push(old);
    const h = await startHarness(() => ({ providers: { old: { base_url: `http://127.0.0.1:${old.port}/v1` } } }));
    try {
      const r = await call(h.url, { body: chat('old:x') });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ object: 'chat.completion' });
    } finally {
      await h.close();
    }
  });

  it('answers 502 naming the problem when the upstream does not speak HTTP, or hangs up without answering', async () => {
    const ssh = await rawServer((s) => s.end('SSH-2.0-OpenSSH_9.2p1\r\n\r\n'));
    const mute = await rawServer((s) => s.destroy());
    servers.push(ssh, mute);
    const h = await startHarness(() => ({
      providers: { ssh: { base_url: `http://127.0.0.1:${ssh.port}/v1` }, mute: { base_url: `http://127.0.0.1:${mute.port}/v1` } },
    }));
    try {
      const a = await call(h.url, { body: chat('ssh:x') });
      expect(a.status).toBe(502);
      expect(a.json.error.message).toContain('not valid HTTP/1.1');
      const b = await call(h.url, { body: chat('mute:x') });
      expect(b.status).toBe(502);
      expect(b.json.error.message).toContain('closed without a response');
    } finally {
      await h.close();
    }
  });

  it('refuses to send a provider key that would break the request head', async () => {
    const h = await startHarness((base) => ({ providers: { bad: { base_url: base, api_key: '${BAD_KEY}' } } }), { env: { BAD_KEY: 'sk-1\r\nx-injected: yes' } });
    try {
      const r = await call(h.url, { body: chat('bad:x') });
      expect(r.status).toBe(500);
      expect(r.json.error.code).toBe('provider_key_unusable');
      expect(r.text).not.toContain('sk-1');
      expect(h.mock.received).toHaveLength(0);
      expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_unusable_key', where: 'proxy.providers.bad.api_key' }));
      expect(JSON.stringify(h.logs)).not.toContain('sk-1');
    } finally {
      await h.close();
    }
  });
});

/** A mock provider with uvicorn's idle close, and the proxy in front of it over kept-alive connections. */
async function uvicornLike(options: MockOptions, provider: Record<string, unknown> = {}) {
  const mock = await startMockUpstream(options);
  const proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => proxySchema.parse({ providers: { uv: { base_url: mock.baseUrl, ...provider } } }) } });
  return {
    mock,
    url: `http://127.0.0.1:${proxy.port}`,
    close: async () => {
      await proxy.close();
      await mock.close();
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A first request, `idleMs` without any, then a second (model "second"), whose answer is returned. */
async function afterIdle(url: string, idleMs: number) {
  expect((await call(url, { body: chat('uv:first') })).status).toBe(200);
  await sleep(idleMs);
  return call(url, { body: chat('uv:second') });
}

describe('providers that close idle connections (uvicorn: 5 s, no Keep-Alive header)', () => {
  it('gives no 502 for a request sent as the provider closes a connection it let sit idle', async () => {
    // The provider closes after 5 s idle; a request that arrives on a connection idle
    // 4.6 s or more meets that close (its timer fires while the request is on its way).
    const u = await uvicornLike({ idleCloseMs: 5000, raceAfterMs: 4600 });
    try {
      const r = await afterIdle(u.url, 4850);
      expect(r.status).toBe(200);
      expect(r.json.model).toBe('second');
      expect(u.mock.raced).toBe(0);
    } finally {
      await u.close();
    }
  });

  it('never sends a request twice when the provider may have received it: a close as it arrives is a 502', async () => {
    // Every request on a kept connection meets the close at once.
    const u = await uvicornLike({ raceAfterMs: 0 });
    try {
      expect((await call(u.url, { body: chat('uv:first') })).status).toBe(200);
      const r = await call(u.url, { body: chat('uv:second') });
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe('upstream_unreachable');
      await sleep(200);
      expect(u.mock.raced).toBe(1);
      expect(u.mock.received.filter((x) => x.json?.model === 'second').length).toBeLessThanOrEqual(1);
      // The next request gets a fresh connection and is answered.
      expect((await call(u.url, { body: chat('uv:third') })).status).toBe(200);
    } finally {
      await u.close();
    }
  });
});

describe('keep_alive: providers that close idle connections sooner (gunicorn\'s workers: 2 s)', () => {
  // The provider closes after 2 s idle; a request on a connection idle 1.6 s or more meets that close.
  const gunicorn = { idleCloseMs: 2000, raceAfterMs: 1600 };

  it('with the default (4 s), a request after 1.85 s idle meets the close: why the setting exists', async () => {
    const u = await uvicornLike(gunicorn);
    try {
      expect((await afterIdle(u.url, 1850)).status).toBe(502);
      expect(u.mock.raced).toBe(1);
    } finally {
      await u.close();
    }
  });

  it('keep_alive: 1.5 closes first, so the same request gets its answer', async () => {
    const u = await uvicornLike(gunicorn, { keep_alive: 1.5 });
    try {
      const r = await afterIdle(u.url, 1850);
      expect(r.status).toBe(200);
      expect(r.json.model).toBe('second');
      expect(u.mock.raced).toBe(0);
    } finally {
      await u.close();
    }
  });

  it('keep_alive: 0 sends every request on a new connection, with connection: close', async () => {
    // Every request on a reused connection would meet the close at once.
    const u = await uvicornLike({ raceAfterMs: 0 }, { keep_alive: 0 });
    try {
      for (const model of ['uv:a', 'uv:b', 'uv:c']) expect((await call(u.url, { body: chat(model) })).status).toBe(200);
      expect(u.mock.raced).toBe(0);
      expect(u.mock.received.map((r) => r.headers.connection)).toEqual(['close', 'close', 'close']);
    } finally {
      await u.close();
    }
  });
});

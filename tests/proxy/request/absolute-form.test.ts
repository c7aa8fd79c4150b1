/**
 * A request target in absolute form (`POST http://host/v1/chat/completions`), which
 * RFC 9112 §3.2.2 says servers must accept, reaches every route as its path and query
 * would: the endpoints, the model list, a model by id, a stored response by id, and
 * the daemon's control API, on both listeners. A target that is neither a path nor an
 * http(s) URL is a 400 that shows it.
 */
import net from 'node:net';
import { startProxyServer } from '../../../src/proxy/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, chat, rawExchange, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-absolute';
const auth = { authorization: `Bearer ${KEY}` };

describe.each<Listener>(['proxy', 'daemon'])('absolute-form request targets on the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ api_keys: ['${PROXY_KEY}'], providers: { mock: { base_url: base } }, default_provider: 'mock' }), { env: { PROXY_KEY: KEY } }, listener);
  });
  afterAll(() => h.close());
  const last = () => h.mock.received[h.mock.received.length - 1]!;

  it('serves a completion, with the query, as the path alone would be', async () => {
    const r = await call(h.url, { path: 'http://localhost/v1/chat/completions?x=1', body: chat('mock:llama3:8b'), headers: auth });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('hello from the mock');
    expect([last().url, last().json?.model]).toEqual(['/v1/chat/completions?x=1', 'llama3:8b']);
  });

  it('serves the model list and a model by id', async () => {
    const list = await call(h.url, { method: 'GET', path: `${h.url}/v1/models`, headers: auth });
    expect(list.status).toBe(200);
    expect(list.json.data.map((m: { id: string }) => m.id)).toEqual(['mock:llama3:8b', 'mock:qwen2']);
    const one = await call(h.url, { method: 'GET', path: 'http://localhost/v1/models/mock:qwen2', headers: auth });
    expect([one.status, one.json.id]).toEqual([200, 'mock:qwen2']);
  });

  it('serves GET and DELETE on a stored response by id, with the query', async () => {
    const got = await call(h.url, { method: 'GET', path: 'http://localhost/v1/responses/resp_abc?include=x', headers: auth });
    expect(got.status).toBe(200);
    expect([last().method, last().url]).toEqual(['GET', '/v1/responses/resp_abc?include=x']);
    const gone = await call(h.url, { method: 'DELETE', path: 'https://localhost/v1/responses/resp_abc', headers: auth });
    expect(gone.status).toBe(200);
    expect([last().method, last().url]).toEqual(['DELETE', '/v1/responses/resp_abc']);
  });

  it('serves the exact bytes of an absolute-form request line from a raw socket', async () => {
    const body = chat('mock:llama3:8b');
    const port = Number(new URL(h.url).port);
    const r = await rawExchange(
      port,
      `POST http://localhost/v1/chat/completions HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      false,
    );
    expect(r.status).toBe(200);
    expect(r.body).toContain('hello from the mock');
    const models = await rawExchange(port, `GET http://localhost/v1/models/mock:llama3:8b HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${KEY}\r\nconnection: close\r\n\r\n`, false);
    expect(models.status).toBe(200);
    expect(JSON.parse(models.body).id).toBe('mock:llama3:8b');
    const stored = await rawExchange(port, `GET http://localhost/v1/responses/resp_raw HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${KEY}\r\nconnection: close\r\n\r\n`, false);
    expect(stored.status).toBe(200);
    expect([last().method, last().url]).toEqual(['GET', '/v1/responses/resp_raw']);
  });

  it('refuses a target that is neither a path nor an http(s) URL, saying which', async () => {
    const r = await rawExchange(Number(new URL(h.url).port), 'GET ftp://localhost/v1/models HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n');
    expect(r.status).toBe(400);
    expect(r.headers).toMatch(/\r\nx-request-id: [0-9a-f-]{36}(\r\n|$)/);
    expect(JSON.parse(r.body).error).toEqual({
      message: 'the request target "ftp://localhost/v1/models" is neither a path (/v1/…) nor an http(s) URL with a host and no user name',
      type: 'invalid_request_error',
      param: null,
      code: 'bad_request',
    });
  });

  it('routes the path as written, as it would a plain path: no dot segments resolved, no slashes added or dropped', async () => {
    const port = Number(new URL(h.url).port);
    for (const path of ['/v1/../v1/models', '/v1/%2e%2e/v1/models', '/v1\\models', '//v1/models']) {
      const plain = await rawExchange(port, `GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`);
      const absolute = await rawExchange(port, `GET http://localhost${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`);
      expect([path, absolute.status]).toEqual([path, plain.status]);
      expect([path, absolute.status]).not.toEqual([path, 200]);
    }
    // The origin form is "/?x=1": past the key (asked before any path is told unknown), no route.
    const query = await rawExchange(port, `GET http://localhost?x=1 HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${KEY}\r\nconnection: close\r\n\r\n`);
    expect(query.status).toBe(404);
  });

  it('answers a CONNECT with a 400 that says why, and an id', async () => {
    const r = await rawExchange(Number(new URL(h.url).port), 'CONNECT 127.0.0.1:443 HTTP/1.1\r\nhost: 127.0.0.1:443\r\n\r\n');
    expect(r.status).toBe(400);
    expect(r.headers).toMatch(/\r\nx-request-id: [0-9a-f-]{36}(\r\n|$)/);
    expect(JSON.parse(r.body).error.message).toContain('not a forward proxy');
  });

  it('answers OPTIONS * with what the server allows, and refuses * with any other method', async () => {
    const port = Number(new URL(h.url).port);
    const options = await rawExchange(port, 'OPTIONS * HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n');
    expect(options.status).toBe(204);
    // What the listener's routes take: the daemon's control API also takes PUT (/config).
    const allow = listener === 'daemon' ? 'GET, HEAD, POST, PUT, DELETE, OPTIONS' : 'GET, HEAD, POST, DELETE, OPTIONS';
    expect(options.headers.toLowerCase()).toContain(`\r\nallow: ${allow.toLowerCase()}\r\n`);
    expect(options.headers).toMatch(/\r\nx-request-id: [0-9a-f-]{36}(\r\n|$)/);
    for (const method of ['GET', 'POST']) {
      const r = await rawExchange(port, `${method} * HTTP/1.1\r\nhost: localhost\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.message).toBe(`the request target "*" is for OPTIONS only, not ${method}`);
    }
  });

  it('lets go of a CONNECT\'s connection even when the client keeps its side open and keeps sending', async () => {
    // allowHalfOpen: the client's side stays open after the server's FIN.
    const socket = net.connect({ port: Number(new URL(h.url).port), host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.write('CONNECT 127.0.0.1:443 HTTP/1.1\r\nhost: 127.0.0.1:443\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('end', () => resolve()));
    expect(answer.startsWith('HTTP/1.1 400 ')).toBe(true);
    // Once the server has closed its socket, what the client still sends meets a reset;
    // a socket the server kept open would take it in forever.
    const gone = new Promise<void>((resolve) => {
      socket.once('error', () => resolve());
      socket.once('close', () => resolve());
    });
    const writer = setInterval(() => socket.write('still here\n'), 100);
    await gone;
    clearInterval(writer);
    socket.destroy();
  });

  it('refuses an http URL without a host', async () => {
    for (const target of ['http:///v1/models', 'http://user@/v1/models', 'http://user:pass@localhost/v1/models']) {
      const r = await rawExchange(Number(new URL(h.url).port), `GET ${target} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.message).toContain('nor an http(s) URL with a host');
    }
  });

  if (listener === 'daemon') {
    it("serves the daemon's control API too", async () => {
      const r = await call(h.url, { method: 'GET', path: 'http://localhost/health' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ ok: true });
    });
  }
});

describe('shutting down with a CONNECT client still connected', () => {
  it('closes its connection at once instead of waiting for the client or the linger', async () => {
    // A linger longer than the test may run: only the shutdown itself can end this connection.
    const server = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => null }, connectLingerMs: 600_000 });
    const socket = net.connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('CONNECT 127.0.0.1:443 HTTP/1.1\r\nhost: 127.0.0.1:443\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('end', () => resolve()));
    expect(answer.startsWith('HTTP/1.1 400 ')).toBe(true);
    const writer = setInterval(() => socket.write('still here\n'), 50);
    try {
      await server.close();
      await closed;
    } finally {
      clearInterval(writer);
      socket.destroy();
    }
  });
});


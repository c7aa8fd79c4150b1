/**
 * The daemon's way around Hono for the proxy's endpoints (ProxyApp.fastPath, tried
 * by the daemon's TCP listener before its app): the same answers as the app at /v1
 * gives — success, key checks, CORS, method and body errors — for every path under
 * /v1, and every other path left to the app.
 */
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { createProxyApp, type ProxyApp } from '../../../src/proxy/index.js';
import { startMockUpstream, type MockUpstream } from '../mock-upstream.js';
import { call, chat, type Answer } from '../harness.js';

async function listen(handler: http.RequestListener): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

// Headers that differ between any two answers, or between Hono's writer and node's (framing only).
const VARYING = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
const comparable = (a: Answer) => ({
  status: a.status,
  // The proxy's own time differs per answer; its presence and form are compared.
  headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => !VARYING.has(k)).map(([k, v]) => [k, k === 'server-timing' ? String(v).replace(/dur=[\d.]+/, 'dur=N') : v])),
  text: a.text,
});

describe('ProxyApp.fastPath', () => {
  let mock: MockUpstream;
  let app: ProxyApp;
  let viaHono: { url: string; server: http.Server };
  let viaFast: { url: string; server: http.Server };
  let fastServed = 0;
  beforeAll(async () => {
    mock = await startMockUpstream();
    const config = proxySchema.parse({
      providers: { mock: { base_url: mock.baseUrl }, claude: { base_url: mock.baseUrl, format: 'anthropic' } },
      api_keys: ['k1'],
      cors_origins: ['https://app.example.com'],
    });
    app = createProxyApp({ getConfig: () => config });
    const host = new Hono();
    host.get('/health', (c) => c.json({ ok: true }));
    host.route('/v1', app);
    const listener = getRequestListener(host.fetch);
    viaHono = await listen((req, res) => void listener(req, res));
    // As src/api/server.ts wires it.
    viaFast = await listen((req, res) => {
      if (app.fastPath(req, res)) fastServed++;
      else void listener(req, res);
    });
  });
  afterAll(async () => {
    for (const s of [viaHono, viaFast]) await new Promise((r) => s.server.close(r));
    await mock.close();
  });

  const auth = { authorization: 'Bearer k1', 'x-request-id': 'same-id-1' };
  const cases: [string, Parameters<typeof call>[1]][] = [
    ['a completion', { body: chat('mock:llama3:8b'), headers: auth }],
    ['a completion with a query string', { path: '/v1/chat/completions?x=1', body: chat('mock:llama3:8b'), headers: auth }],
    ['an Anthropic message', { path: '/v1/messages', body: JSON.stringify({ model: 'claude:c', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }), headers: { 'x-api-key': 'k1', 'x-request-id': 'same-id-1' } }],
    ['no key', { body: chat('mock:m'), headers: { 'x-request-id': 'same-id-1' } }],
    ['a wrong key on /v1/messages', { path: '/v1/messages', body: '{}', headers: { 'x-api-key': 'nope', 'x-request-id': 'same-id-1' } }],
    ['GET on a POST endpoint', { method: 'GET', path: '/v1/embeddings', headers: auth }],
    ['a body that is not JSON', { path: '/v1/responses', body: '{"model":', headers: auth }],
    ['an unknown provider', { path: '/v1/completions', body: JSON.stringify({ model: 'nope:m', prompt: 'hi' }), headers: auth }],
    ['a CORS preflight', { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'x-request-id': 'same-id-1' } }],
    ['a CORS request', { body: chat('mock:llama3:8b'), headers: { ...auth, origin: 'https://app.example.com' } }],
  ];

  it.each(cases)('answers %s as the app at /v1 does', async (_what, options) => {
    const before = fastServed;
    const [hono, fast] = [await call(viaHono.url, options), await call(viaFast.url, options)];
    expect(fastServed).toBe(before + 1);
    expect(comparable(fast)).toEqual(comparable(hono));
  });

  it('serves every other /v1 path as the app does, and leaves the rest to the app', async () => {
    const paths = ['/v1/models', '/v1/models/mock:x', '/v1/chat/completions/', '/v1', '/v1?x=1', '/v1/files', '/v1//chat/completions'];
    const before = fastServed;
    for (const path of [...paths, '/health', '/v1x']) {
      const hono = await call(viaHono.url, { method: 'GET', path, headers: auth });
      const fast = await call(viaFast.url, { method: 'GET', path, headers: auth });
      expect(comparable(fast), path).toEqual(comparable(hono));
    }
    expect(fastServed).toBe(before + paths.length);
  });

  it("answers HEAD with the head of the route's own answer (Hono's HEAD would write its own over it)", async () => {
    for (const [path, status] of [['/v1/models', 200], ['/v1/models/mock:x', 404], ['/v1/files', 404]] as const) {
      const r = await call(viaFast.url, { method: 'HEAD', path, headers: auth });
      expect(r.status, path).toBe(status);
      expect(r.headers['content-type'], path).toBe('application/json');
      expect(r.headers['x-request-id'], path).toBe('same-id-1');
      expect(r.headers['x-hono-already-sent'], path).toBeUndefined();
      expect(r.text, path).toBe('');
    }
  });
});

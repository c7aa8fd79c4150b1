/**
 * The /v1 sub-app driven through Hono's `app.request()`, as every other sub-app is
 * tested: no listener of the proxy's own, only the local mock provider. The routes
 * run on node's request and response over an in-memory connection (in-memory-http.ts),
 * so these are the answers a socket gets.
 */
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { createProxyApp, type ProxyApp } from '../../../src/proxy/index.js';
import { startMockUpstream, type MockUpstream } from '../mock-upstream.js';

describe('the /v1 group through app.request()', () => {
  let mock: MockUpstream;
  let proxy: ProxyApp;
  let app: Hono;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.models = [{ id: 'llama3:8b', owned_by: 'mock' }];
    const config = proxySchema.parse({ api_keys: ['sk-client'], providers: { mock: { base_url: mock.baseUrl } } });
    proxy = createProxyApp({ getConfig: () => config, log: (e) => logs.push(e) });
    app = new Hono();
    app.route('/v1', proxy);
  });
  afterAll(async () => {
    proxy.close();
    await mock.close();
  });

  const auth = { authorization: 'Bearer sk-client', 'content-type': 'application/json' };
  const chat = (model: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

  it('relays a chat completion to the provider with the bare model name', async () => {
    const r = await app.request('/v1/chat/completions?api-version=1', { method: 'POST', headers: { ...auth, 'x-request-id': 'req-app-1' }, body: chat('mock:llama3:8b', { temperature: 0.5 }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-app-1');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('server-timing')).toMatch(/^proxy;dur=/);
    const body = (await r.json()) as { object: string; model: string };
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('llama3:8b');
    const got = mock.received.at(-1);
    expect(got?.url).toBe('/v1/chat/completions?api-version=1');
    expect(got?.json).toEqual({ model: 'llama3:8b', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 });
    expect(got?.headers.authorization).toBeUndefined();
  });

  it('streams server-sent events through, ending with [DONE]', async () => {
    const r = await app.request('/v1/chat/completions', { method: 'POST', headers: auth, body: chat('mock:stream:3:1', { stream: true }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await r.text();
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(events).toHaveLength(4);
    expect(events.slice(0, 3).every((e) => e.startsWith('data: {'))).toBe(true);
    expect(events[3]).toBe('data: [DONE]');
  });

  it('lists the provider models as prefix:model, and answers HEAD without a body', async () => {
    const r = await app.request('/v1/models', { headers: auth });
    expect(r.status).toBe(200);
    const list = (await r.json()) as { object: string; data: { id: string; object: string }[] };
    expect(list.object).toBe('list');
    expect(list.data.map((m) => m.id)).toContain('mock:llama3:8b');
    const head = await app.request('/v1/models', { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers a wrong method 405 with Allow, a missing key 401, an unknown path 404', async () => {
    const wrong = await app.request('/v1/chat/completions', { headers: auth });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');

    const before = mock.received.length;
    const anonymous = await app.request('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat('mock:llama3:8b') });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-request-id')).toBeTruthy();
    const error = ((await anonymous.json()) as { error: { type: string; code: string } }).error;
    expect(error.type).toBe('authentication_error');
    expect(error.code).toBe('invalid_api_key');
    const badKey = await app.request('/v1/models', { headers: { authorization: 'Bearer sk-wrong' } });
    expect(badKey.status).toBe(401);
    expect(mock.received.length).toBe(before);

    const unknown = await app.request('/v1/audio/voices', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('an unknown prefix is 404 model_not_found, bad JSON is 400, and no provider is asked', async () => {
    const before = mock.received.length;
    const nope = await app.request('/v1/chat/completions', { method: 'POST', headers: auth, body: chat('nowhere:llama3') });
    expect(nope.status).toBe(404);
    expect(((await nope.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    const bad = await app.request('/v1/chat/completions', { method: 'POST', headers: auth, body: '{"model": ' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    expect(mock.received.length).toBe(before);
  });

  it('a client that aborts a stream aborts the upstream request', async () => {
    const stop = new AbortController();
    const r = await app.request('/v1/chat/completions', { method: 'POST', headers: auth, body: chat('mock:gated-stream', { stream: true }), signal: stop.signal });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('data: {');
    const upstream = mock.received.at(-1);
    stop.abort();
    await expect(upstream?.ended).resolves.toBe('client_closed');
    await expect.poll(() => logs.some((e) => e.event === 'proxy_client_closed')).toBe(true);
  });
});

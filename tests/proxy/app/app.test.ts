/** The Hono sub-app, mounted at /v1 on @hono/node-server as the daemon does. */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { createProxyApp } from '../../../src/proxy/index.js';
import { startMockUpstream, type MockUpstream } from '../mock-upstream.js';
import { call, chat, open } from '../harness.js';

describe('createProxyApp under app.route("/v1", …)', () => {
  let mock: MockUpstream;
  let server: ReturnType<typeof serve>;
  let url: string;
  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.models = [{ id: 'llama3:8b', owned_by: 'mock' }, { id: 'org/model:tag' }];
    const config = proxySchema.parse({
      providers: { mock: { base_url: mock.baseUrl }, claude: { base_url: mock.baseUrl, format: 'anthropic' } },
      cors_origins: ['https://app.example.com'],
    });
    const app = new Hono();
    app.get('/health', (c) => c.json({ ok: true }));
    app.route('/v1', createProxyApp({ getConfig: () => config }));
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await mock.close();
  });

  it('serves completions, streams and models next to the other routes', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'mock:llama3:8b', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.model).toBe('llama3:8b');
    const x = open(url, chat('mock:gated-stream', { stream: true }));
    await x.until((t) => t.includes('first'));
    mock.release();
    await x.done;
    expect(x.text()).toContain('[DONE]');
    const m = await call(url, { path: '/v1/models', method: 'GET' });
    expect(m.json.data.map((e: { id: string }) => e.id)).toEqual(['mock:llama3:8b', 'mock:org/model:tag', 'claude:llama3:8b', 'claude:org/model:tag']);
    expect((await call(url, { path: '/health', method: 'GET' })).json).toEqual({ ok: true });
  });

  it('serves every other endpoint, models/{id} with slashes, and CORS preflights the same way', async () => {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    expect((await client.responses.create({ model: 'mock:llama3:8b', input: 'hi' })).output_text).toBe('hello from the mock');
    expect((await client.embeddings.create({ model: 'mock:e', input: 'hi' })).data).toHaveLength(1);
    expect((await client.completions.create({ model: 'mock:llama3:8b', prompt: 'hi' })).choices[0]?.text).toBe('hello from the mock');
    expect((await client.models.retrieve('mock:org/model:tag')).id).toBe('mock:org/model:tag');
    const messages = await call(url, { path: '/v1/messages', body: JSON.stringify({ model: 'claude:c', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(messages.json).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'hello from the mock' }] });
    const preflight = await call(url, { path: '/v1/responses', method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });

  it('answers errors OpenAI-shaped with an x-request-id', async () => {
    const r = await call(url, { body: '{', headers: { 'x-request-id': 'abc' } });
    expect(r.status).toBe(400);
    expect(r.headers['x-request-id']).toBe('abc');
    expect(r.json.error.code).toBe('invalid_json');
  });

  it('owns every /v1 path: one it does not serve is an OpenAI-shaped 404, not the host app\'s', async () => {
    const r = await call(url, { path: '/v1/files', body: '{}', headers: { 'x-request-id': 'emb-1' } });
    expect(r.status).toBe(404);
    expect(r.headers['x-request-id']).toBe('emb-1');
    expect(r.json).toEqual({ error: { message: expect.stringContaining('/v1/files'), type: 'invalid_request_error', param: null, code: 'not_found' } });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    const file = await toFile(Buffer.from('not really audio'), 'a.mp3');
    const failure = await client.files.create({ file, purpose: 'batch' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await call(url, { path: '/elsewhere', method: 'GET' })).status).toBe(404);
  });

  it('aborts the upstream request when the client leaves mid-stream', async () => {
    const at = mock.received.length;
    const x = open(url, chat('mock:stream:1000:20', { stream: true }));
    await x.until((t) => t.includes('c2 '));
    x.abort();
    expect(await (await mock.request(at)).ended).toBe('client_closed');
  });
});

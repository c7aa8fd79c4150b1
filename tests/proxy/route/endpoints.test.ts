// Every endpoint behaves as chat does: timeouts, a provider dying mid-stream, a
// client leaving, upstream errors passed through, bad bodies — each error in the
// shape of the endpoint's family (Anthropic's for /v1/messages).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, open, startHarness, type Harness } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness((base) => ({
    // Short timeouts only where a timeout is the point: elsewhere a busy machine's pause
    // must not turn a cut stream or a slow answer into a timeout.
    default_timeout: 10,
    providers: {
      o: { base_url: base },
      a: { base_url: base, format: 'anthropic' },
      both: { base_url: base, format: ['openai', 'anthropic'] },
      oq: { base_url: base, timeout: 0.3 },
      aq: { base_url: base, format: 'anthropic', timeout: 0.3 },
    },
  }));
});
afterAll(async () => {
  await h?.close();
});

const OPENAI = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions', '/v1/moderations', '/v1/images/generations', '/v1/audio/speech', '/v1/rerank', '/v1/score'];
const body = (path: string, model: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, ...(path.endsWith('/chat/completions') || path.endsWith('/messages') ? { messages: [{ role: 'user', content: 'hi' }] } : { input: 'hi' }), ...extra });

describe.each(OPENAI)('%s', (path) => {
  it('504 upstream_timeout with x-should-retry: false when the provider does not answer', async () => {
    const r = await call(h.url, { path, body: body(path, 'oq:hang') });
    expect(r.status).toBe(504);
    expect(r.headers['x-should-retry']).toBe('false');
    expect(r.json.error).toMatchObject({ type: 'timeout_error', code: 'upstream_timeout' });
  });

  it('passes an upstream error through unchanged, and reaches the provider at the same path', async () => {
    const at = h.mock.received.length;
    const r = await call(h.url, { path, body: body(path, 'o:error:422') });
    expect(r.status).toBe(422);
    expect(r.json).toEqual({ error: { message: 'mock error 422', type: 'mock_error', param: null, code: 'mock_code' } });
    expect(h.mock.received[at]!.url).toBe(path);
  });

  it('ends a stream cut by the provider with the error event, and aborts the provider when the client leaves', async () => {
    const cut = open(h.url, body(path, 'o:die-stream', { stream: true }), {}, path);
    expect(await cut.done).toBe('end');
    expect(cut.text()).toMatch(/data: \{"error":\{.*"code":"upstream_disconnected"\}\}\n\n$/);
    const at = h.mock.received.length;
    const left = open(h.url, body(path, 'o:stream:1000:20', { stream: true }), {}, path);
    await left.until((t) => t.includes('c1 '));
    left.abort();
    expect(await (await h.mock.request(at)).ended).toBe('client_closed');
  });
});

describe('/v1/messages', () => {
  const path = '/v1/messages';
  it('answers its errors in Anthropic\'s shape: timeout, bad body, unknown model; an OpenAI-format provider gets it translated', async () => {
    const timeout = await call(h.url, { path, body: body(path, 'aq:hang') });
    expect(timeout.status).toBe(504);
    expect(timeout.json).toEqual({ type: 'error', error: { type: 'timeout_error', message: expect.stringContaining('did not answer') } });
    expect((await call(h.url, { path, body: '{"model": 1}' })).json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect((await call(h.url, { path, body: body(path, 'zz:x') })).json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const translated = await call(h.url, { path, body: body(path, 'o:m', { max_tokens: 8 }) });
    expect(translated.status).toBe(200);
    expect(translated.json).toMatchObject({ type: 'message', role: 'assistant' });
    expect(h.mock.received.at(-1)!.url).toBe('/v1/chat/completions');
  });

  it('a provider taking both formats gets both; the upstream\'s Anthropic error is passed through', async () => {
    expect((await call(h.url, { path, body: body(path, 'both:m') })).json.type).toBe('message');
    expect((await call(h.url, { path: '/v1/chat/completions', body: body('/v1/chat/completions', 'both:m') })).json.object).toBe('chat.completion');
    const busy = await call(h.url, { path, body: body(path, 'a:busy:529:-') });
    expect(busy.status).toBe(529);
    expect(busy.json).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('ends a cut stream with an Anthropic error event', async () => {
    const cut = open(h.url, body(path, 'a:die-stream', { stream: true }), {}, path);
    expect(await cut.done).toBe('end');
    expect(cut.text()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":".*\(upstream_disconnected\)"\}\}\n\n$/);
  });
});

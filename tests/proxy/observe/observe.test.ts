// One log line per request and the Prometheus series, on `tunnel-manager proxy`'s own
// /metrics; CORS for browser clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { call, chat, eventually, startHarness, type Harness } from '../harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const lines = () => h!.logs.filter((e) => e.event === 'proxy_request');
const metrics = async (headers: Record<string, string> = {}) => (await call(h!.url, { method: 'GET', path: '/metrics', headers })).text;

describe('the request log line and the series', () => {
  it('logs id, endpoint, model, provider, status, times and the reported tokens, for plain and streamed answers', async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base }, claude: { base_url: base, format: 'anthropic' } } }));
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', maxRetries: 0 });
    await client.chat.completions.create({ model: 'mock:llama3:8b', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'req-plain' } });
    const stream = await client.chat.completions.create({ model: 'mock:llama3:8b', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    for await (const _ of stream) void _;
    const anthropic = new Anthropic({ baseURL: h.url, apiKey: 'x', maxRetries: 0 });
    await anthropic.messages.stream({ model: 'claude:c', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    await client.responses.create({ model: 'mock:llama3:8b', input: 'hi', stream: true }).then(async (s) => {
      for await (const _ of s) void _;
    });
    await eventually(() => lines().length === 4, 'four request lines');
    const [plain, chatStream, messages, responses] = lines();
    expect(plain).toMatchObject({ request_id: 'req-plain', endpoint: '/chat/completions', model: 'mock:llama3:8b', provider: 'mock', status: 200, complete: true, tokens_in: 1, tokens_out: 1 });
    expect(typeof plain!.ms).toBe('number');
    expect(typeof plain!.ttfb_ms).toBe('number');
    expect(chatStream).toMatchObject({ endpoint: '/chat/completions', status: 200, tokens_in: 7, tokens_out: 4 });
    expect(messages).toMatchObject({ endpoint: '/messages', provider: 'claude', tokens_in: 5, tokens_out: 6 });
    expect(responses).toMatchObject({ endpoint: '/responses', tokens_in: 9, tokens_out: 4 });

    const text = await metrics();
    expect(text).toContain('proxy_requests_total{provider="mock",endpoint="/chat/completions",status="200"} 2');
    expect(text).toContain('proxy_tokens_total{provider="mock",endpoint="/chat/completions",direction="in"} 8');
    expect(text).toContain('proxy_tokens_total{provider="claude",endpoint="/messages",direction="out"} 6');
    expect(text).toContain('proxy_request_duration_seconds_count{provider="mock",endpoint="/chat/completions"} 2');
    expect(text).toContain('proxy_time_to_first_byte_seconds_count{provider="claude",endpoint="/messages"} 1');
  });

  it('counts errors with no provider, and fallbacks', async () => {
    h = await startHarness((base) => ({ providers: { a: { base_url: base } }, aliases: { m: ['a:busy:503:-', 'a:llama3:8b'] } }));
    expect((await call(h.url, { body: chat('nope:x') })).status).toBe(404);
    expect((await call(h.url, { body: chat('m') })).status).toBe(200);
    const text = await metrics();
    expect(text).toContain('proxy_requests_total{provider="none",endpoint="/chat/completions",status="404"} 1');
    expect(text).toContain('proxy_fallbacks_total{provider="a",reason="status_5xx"} 1');
    await eventually(() => lines().length === 2, 'two request lines');
    // The proxy's own answer has a body too: its first byte left as it ended.
    expect(lines()[0]).toMatchObject({ status: 404, provider: null });
    expect(typeof lines()[0]!.ttfb_ms).toBe('number');
    expect(lines()[0]!.ttfb_ms as number).toBeLessThanOrEqual(lines()[0]!.ms as number);
    expect(text).toContain('proxy_time_to_first_byte_seconds_count{provider="none",endpoint="/chat/completions"} 1');
    // So has its model list.
    expect((await call(h.url, { method: 'GET', path: '/v1/models' })).status).toBe(200);
    await eventually(() => lines().length === 3, 'three request lines');
    expect(lines()[2]).toMatchObject({ endpoint: '/models', status: 200 });
    expect(typeof lines()[2]!.ttfb_ms).toBe('number');
    // An answer to HEAD has no body, so no first byte: the list and an error alike.
    expect((await call(h.url, { method: 'HEAD', path: '/v1/models' })).status).toBe(200);
    expect((await call(h.url, { method: 'HEAD', path: '/v1/models/nope:x' })).status).toBe(404);
    await eventually(() => lines().length === 5, 'five request lines');
    expect(lines().slice(3).map((l) => [l.status, l.ttfb_ms])).toEqual([[200, null], [404, null]]);
  });

  it('/metrics is behind proxy.api_keys like /v1', async () => {
    h = await startHarness((base) => ({ api_keys: ['k1'], providers: { a: { base_url: base } } }));
    expect((await call(h.url, { method: 'GET', path: '/metrics' })).status).toBe(401);
    expect(await metrics({ authorization: 'Bearer k1' })).toContain('# TYPE proxy_requests_total counter');
  });
});

describe('cors_origins', () => {
  const preflight = (origin: string) =>
    call(h!.url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' } });

  it('absent: no CORS headers, and a page of another origin is refused (403) whatever it asks', async () => {
    h = await startHarness((base) => ({ providers: { a: { base_url: base } } }));
    const r = await preflight('https://app.example.com');
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect(r.status).toBe(403);
    for (const model of ['a:m', 'a:open-cors']) {
      // A provider that allows every origin (Ollama does) does not open the proxy either.
      const page = await call(h.url, { body: chat(model), headers: { origin: 'https://app.example.com' } });
      expect(page.status).toBe(403);
      expect(page.json.error.code).toBe('origin_not_allowed');
      expect(page.headers['access-control-allow-origin']).toBeUndefined();
      expect(page.headers['access-control-allow-credentials']).toBeUndefined();
    }
    expect(h.mock.received).toHaveLength(0);
  });

  it('answers preflights of the listed origins (before the key check) and marks their answers', async () => {
    h = await startHarness((base) => ({ api_keys: ['k1'], providers: { a: { base_url: base } }, cors_origins: ['https://app.example.com'] }));
    const ok = await preflight('https://app.example.com');
    expect(ok.status).toBe(204);
    expect(ok.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, x-stainless-os',
    });
    expect((await preflight('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
    const answer = await call(h.url, { body: chat('a:m'), headers: { origin: 'https://app.example.com', authorization: 'Bearer k1' } });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(answer.headers['access-control-expose-headers']).toContain('x-request-id');
    const fromOllama = await call(h.url, { body: chat('a:open-cors'), headers: { origin: 'https://app.example.com', authorization: 'Bearer k1' } });
    expect(fromOllama.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const denied = await call(h.url, { body: chat('a:m'), headers: { origin: 'https://app.example.com' } });
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });
});

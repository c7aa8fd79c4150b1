// proxy.clients: a key per client with its models and limits (SPEC §9b), beside the
// shared proxy.api_keys; the limits' windows run on a test clock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { createProxyMetrics } from '../../../src/proxy/index.js';
import { call, chat, eventually, open, startHarness, type Harness } from '../harness.js';

const ALICE = 'sk-alice-0123456789';
const BOB = 'sk-bob-literal-0123456789';
const CI = 'sk-ci-0123456789';
const SHARED = 'sk-shared-0123456789';
let clock = 1_000_000;
const metrics = createProxyMetrics();
let h: Harness;

beforeAll(async () => {
  h = await startHarness(
    (base) => ({
      api_keys: ['${SHARED_KEY}'],
      clients: {
        alice: { key: '${ALICE_KEY}', models: ['mock:*', 'fast'], rpm: 3 },
        bob: { key: BOB, models: ['mock:llama3:8b'], tpm: 4 },
        ci: { key: '${CI_KEY}', max_concurrent: 1 },
      },
      providers: { mock: { base_url: base }, other: { base_url: base } },
      aliases: { fast: 'other:small', 'mock-alias': 'mock:x' },
    }),
    { env: { ALICE_KEY: ALICE, CI_KEY: CI, SHARED_KEY: SHARED }, now: () => clock, metrics },
  );
});
afterAll(async () => {
  await h?.close();
});

const as = (key: string, model: string, headers: Record<string, string> = {}) => call(h.url, { headers: { authorization: `Bearer ${key}`, ...headers }, body: chat(model) });

describe('client keys', () => {
  it('401 for a key of no client; a client reaches its models, by pattern, by alias, and by an alias whose targets it may use', async () => {
    expect((await as('sk-nobody', 'mock:x')).status).toBe(401);
    expect((await call(h.url, { body: chat('mock:x') })).status).toBe(401);
    expect((await as(CI, 'other:anything')).status).toBe(200);
    clock += 120_000;
    expect((await as(ALICE, 'mock:llama3:8b')).status).toBe(200);
    expect((await as(ALICE, 'fast')).status).toBe(200);
    expect((await as(ALICE, 'mock-alias')).status).toBe(200);
  });

  it('403 model_not_allowed naming the allowed patterns, in each family\'s shape', async () => {
    const r = await as(ALICE, 'other:big');
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ type: 'permission_error', code: 'model_not_allowed', param: 'model' });
    expect(r.json.error.message).toBe('client "alice" may not use model "other:big"; its models: mock:*, fast');
    const m = await call(h.url, { path: '/v1/messages', headers: { 'x-api-key': BOB }, body: JSON.stringify({ model: 'mock:other', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(m.status).toBe(403);
    expect(m.json).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });

  it('GET /v1/models lists to a client only the models it may use (both shapes, and by id); shared keys see all', async () => {
    clock += 120_000;
    const ids = async (key: string, headers: Record<string, string> = {}) => {
      const r = await call(h.url, { method: 'GET', path: '/v1/models', headers: { authorization: `Bearer ${key}`, ...headers } });
      expect(r.status).toBe(200);
      return (r.json.data as { id: string }[]).map((m) => m.id).sort();
    };
    const all = await ids(SHARED);
    expect(all).toEqual(expect.arrayContaining(['fast', 'mock-alias']));
    expect(all.some((id) => id.startsWith('other:'))).toBe(true);
    // alice: mock:* and the alias fast; mock-alias too, since its target matches mock:*.
    expect(await ids(ALICE)).toEqual(all.filter((id) => id.startsWith('mock:') || id === 'fast' || id === 'mock-alias'));
    expect(await ids(ALICE, { 'anthropic-version': '2023-06-01' })).toEqual(all.filter((id) => id.startsWith('mock:') || id === 'fast' || id === 'mock-alias'));
    expect(await ids(BOB)).toEqual(all.filter((id) => id === 'mock:llama3:8b'));
    expect(await ids(CI)).toEqual(all);
    const other = all.find((id) => id.startsWith('other:')) ?? '';
    const hidden = await call(h.url, { method: 'GET', path: `/v1/models/${encodeURIComponent(other)}`, headers: { authorization: `Bearer ${ALICE}` } });
    expect(hidden.status).toBe(404);
    const shown = await call(h.url, { method: 'GET', path: `/v1/models/${encodeURIComponent(other)}`, headers: { authorization: `Bearer ${SHARED}` } });
    expect(shown.status).toBe(200);
  });

  it('rpm: 429 with Retry-After and x-ratelimit-* once the minute holds rpm requests; room again as they leave the window', async () => {
    clock += 120_000;
    const start = clock;
    for (let i = 0; i < 3; i++) {
      const ok = await as(ALICE, 'mock:m');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit-requests']).toBe('3');
      expect(ok.headers['x-ratelimit-remaining-requests']).toBe(String(2 - i));
      clock += 10_000;
    }
    const refused = await as(ALICE, 'mock:m');
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_rpm' });
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(refused.headers['x-ratelimit-reset-requests']).toBe('30s');
    clock = start + 60_001;
    expect((await as(ALICE, 'mock:m')).status).toBe(200);
  });

  it('tpm counts the tokens of the answers\' usage', async () => {
    clock += 120_000;
    expect((await as(BOB, 'mock:llama3:8b')).headers['x-ratelimit-remaining-tokens']).toBe('4');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_request' && l.client === 'bob' && l.tokens_in === 1), 'the first request\'s record');
    const second = await as(BOB, 'mock:llama3:8b');
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('2');
    await eventually(() => h.logs.filter((l) => l.event === 'proxy_request' && l.client === 'bob' && l.model === 'mock:llama3:8b' && l.status === 200).length === 2, 'the second request\'s record');
    const refused = await as(BOB, 'mock:llama3:8b');
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limit_tpm');
    expect(refused.headers['retry-after']).toBeDefined();
    clock += 61_000;
    expect((await as(BOB, 'mock:llama3:8b')).status).toBe(200);
  });

  it('max_concurrent: a second request while one is under way is 429; room again once it ends', async () => {
    const first = open(h.url, chat('mock:gated-stream', { stream: true }), { authorization: `Bearer ${CI}` });
    expect((await first.head).status).toBe(200);
    const second = await as(CI, 'mock:m');
    expect(second.status).toBe(429);
    expect(second.json.error.code).toBe('rate_limit_max_concurrent');
    expect(second.headers['retry-after']).toBe('1');
    h.mock.release();
    expect(await first.done).toBe('end');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_request' && l.client === 'ci' && l.model === 'mock:gated-stream'), 'the stream\'s record');
    expect((await as(CI, 'mock:m')).status).toBe(200);
  });

  it('the client\'s name in the log and as a label; shared keys still work without limits; no key is ever logged', async () => {
    const shared = await as(SHARED, 'other:big');
    expect(shared.status).toBe(200);
    expect(shared.headers['x-ratelimit-limit-requests']).toBeUndefined();
    await eventually(() => h.logs.some((l) => l.event === 'proxy_request' && l.model === 'other:big' && l.status === 200), 'the shared key\'s record');
    const line = h.logs.find((l) => l.event === 'proxy_request' && l.model === 'other:big' && l.status === 200)!;
    expect(line.client).toBeUndefined();
    expect(h.logs.some((l) => l.event === 'proxy_request' && l.client === 'alice' && l.status === 429)).toBe(true);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/proxy_requests_total\{provider="mock",endpoint="\/chat\/completions",client="alice",status="200"\} \d+/);
    expect(text).toMatch(/proxy_requests_total\{provider="none",endpoint="\/chat\/completions",client="alice",status="429"\} 1/);
    expect(text).toMatch(/proxy_requests_total\{provider="other",endpoint="\/chat\/completions",status="200"\} \d+/);
    const all = JSON.stringify(h.logs) + text;
    for (const key of [ALICE, BOB, CI, SHARED]) expect(all).not.toContain(key);
  });

  it('the openai client reads the 429 and the 403 (no retries)', async () => {
    clock += 120_000;
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: ALICE, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'mock:m', messages: [{ role: 'user', content: 'hi' }] });
    expect(await client.chat.completions.create({ model: 'mock:m', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.RateLimitError);
    expect(await client.chat.completions.create({ model: 'other:m', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('a provider that sends rate headers of its own', () => {
  it('a client with limits gets its own x-ratelimit-*, not the provider\'s; others get the provider\'s', async () => {
    // As OpenAI's API answers: its limits are those of the proxy's one key, shared by every client.
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-limit-requests': '10000', 'x-ratelimit-remaining-requests': '9999', 'x-ratelimit-limit-tokens': '2000000' });
        res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
      h.setConfig({ api_keys: ['${SHARED_KEY}'], clients: { alice: { key: '${ALICE_KEY}', rpm: 5 } }, providers: { up: { base_url: base } } });
      clock += 120_000;
      const mine = await as(ALICE, 'up:m');
      expect(mine.status).toBe(200);
      expect(mine.headers['x-ratelimit-limit-requests']).toBe('5');
      expect(mine.headers['x-ratelimit-remaining-requests']).toBe('4');
      expect(mine.headers['x-ratelimit-limit-tokens']).toBeUndefined();
      const shared = await as(SHARED, 'up:m');
      expect(shared.headers['x-ratelimit-limit-requests']).toBe('10000');
    } finally {
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});

describe('clients without api_keys', () => {
  it('only client keys open /v1 and /metrics; an unset variable is logged by name and its client never matches', async () => {
    h.setConfig({ clients: { alice: { key: ALICE }, ghost: { key: '${GHOST_KEY}' } }, providers: { mock: { base_url: h.mock.baseUrl } } });
    expect((await as(ALICE, 'mock:m')).status).toBe(200);
    expect((await as(SHARED, 'mock:m')).status).toBe(401);
    expect((await as('', 'mock:m')).status).toBe(401);
    expect(h.logs.some((l) => l.event === 'proxy_unset_variable' && l.where === 'proxy.clients.ghost.key' && l.variable === 'GHOST_KEY')).toBe(true);
    expect((await call(h.url, { method: 'GET', path: '/metrics' })).status).toBe(401);
    expect((await call(h.url, { method: 'GET', path: '/metrics', headers: { authorization: `Bearer ${ALICE}` } })).status).toBe(200);
    h.setConfig({ clients: { ghost: { key: '${GHOST_KEY}' } }, providers: { mock: { base_url: h.mock.baseUrl } } });
    const r = await as(ALICE, 'mock:m');
    expect(r.status).toBe(503);
    expect(r.json.error.message).toMatch(/proxy.clients refer only to environment variables that are not set/);
  });
});

describe('the clients section is checked', () => {
  const errors = (clients: unknown) => {
    const r = proxySchema.safeParse({ clients, providers: {} });
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  it.each<[string, unknown, RegExp]>([
    ['two clients with one key', { a: { key: 'k1' }, b: { key: 'k1' } }, /clients\.b\.key: expected a key of its own; client "a" has the same one/],
    ['an unknown field', { a: { key: 'k', rmp: 5 } }, /clients\.a: expected only the fields key, models, rpm, tpm and max_concurrent \(this one has "rmp"\)/],
    ['rpm 0', { a: { key: 'k', rpm: 0 } }, /clients\.a\.rpm: expected a whole number of requests per minute, 1 or more/],
    ['tpm not whole', { a: { key: 'k', tpm: 1.5 } }, /clients\.a\.tpm: expected a whole number of tokens per minute/],
    ['no key', { a: { models: ['x'] } }, /clients\.a\.key/],
    ['an empty model list', { a: { key: 'k', models: [] } }, /leave models out to allow every model/],
    ['a name that cannot be a label', { 'a b': { key: 'k' } }, /expected a client name of letters/],
  ])('%s', (_, clients, message) => {
    expect(errors(clients).join('\n')).toMatch(message);
  });
});

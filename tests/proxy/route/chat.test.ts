import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { deadPort } from '../mock-upstream.js';
import { call, chat, startHarness, type Harness } from '../harness.js';

const UPSTREAM_KEY = 'sk-upstream-secret-123456';

describe('POST /v1/chat/completions', () => {
  let h: Harness;
  let dead: number;
  let tunnelStatus = 'RETRYING';
  const providers = (base: string) => ({
    forward_headers: ['X-Tenant'],
    providers: {
      mock: { base_url: base, api_key: '${MOCK_KEY}' },
      open: { base_url: base },
      dead: { base_url: `http://127.0.0.1:${dead}/v1` },
      deadkey: { base_url: `http://127.0.0.1:${dead}/v1`, api_key: '${MOCK_KEY}' },
      nokey: { base_url: base, api_key: '${NOT_SET_ANYWHERE}' },
    },
  });
  beforeAll(async () => {
    dead = await deadPort();
    h = await startHarness(
      (base) => providers(base),
      {
        env: { MOCK_KEY: UPSTREAM_KEY },
        tunnelForLocalEndpoint: (host, port) => (host === '127.0.0.1' && port === dead ? { name: 'llm', hash: 'abcdef0123456789', status: tunnelStatus } : undefined),
      },
    );
  });
  afterAll(() => h.close());

  it('routes by prefix, splits the model at the first colon and passes every other field unchanged', async () => {
    const extra = { temperature: 0.25, max_tokens: 7, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], user: 'u1', weird_field: { nested: [1, 'two', null] } };
    const n = h.mock.received.length;
    const r = await call(h.url, { body: chat('mock:llama3:8b', extra) });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('llama3:8b');
    const got = h.mock.received[n]!;
    expect(got.url).toBe('/v1/chat/completions');
    expect(got.json).toEqual({ model: 'llama3:8b', messages: [{ role: 'user', content: 'hi' }], ...extra });
  });

  it('sends the body byte for byte except the model: big integers, key order, escapes and spacing survive', async () => {
    const body = '{ "seed" : 9223372036854775807,\n  "messages":[{"role":"user","content":"caf\\u00e9 \\"q\\" \\/ 日本"}],\t"model" :"open:llama3:8b", "n":1.50E+2,"logit_bias":{"50256":-100},"model_x":"mock:no"}';
    const n = h.mock.received.length;
    const r = await call(h.url, { body });
    expect(r.status).toBe(200);
    expect(h.mock.received[n]!.bytes.equals(Buffer.from(body.replace('"open:llama3:8b"', '"llama3:8b"')))).toBe(true);
  });

  it('refuses a body that is not valid UTF-8 with a 400, and sends nothing on', async () => {
    const n = h.mock.received.length;
    const body = Buffer.concat([Buffer.from('{"model":"open:x","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
    const r = await call(h.url, { body });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error', message: expect.stringContaining('not valid UTF-8 (byte 57 of 62)') });
    expect(h.mock.received.length).toBe(n);
  });

  it('passes routing and tracing headers on, and never the client\'s credentials', async () => {
    const n = h.mock.received.length;
    const sent = {
      'OpenAI-Organization': 'org-1',
      'OpenAI-Project': 'proj-1',
      'OpenAI-Beta': 'assistants=v2',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=x',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'tools-2024-04-04',
      'X-Tenant': 'blue',
    };
    await call(h.url, { body: chat('open:plain'), headers: { ...sent, authorization: 'Bearer client-key', 'x-api-key': 'client-key', cookie: 'session=1', 'x-not-listed': 'no', 'accept-encoding': 'gzip, br' } });
    const got = h.mock.received[n]!.headers;
    for (const [name, value] of Object.entries(sent)) expect(got[name.toLowerCase()]).toBe(value);
    for (const name of ['authorization', 'x-api-key', 'cookie', 'x-not-listed']) expect(got[name]).toBeUndefined();
    expect(got['accept-encoding']).toBe('identity');
  });

  it('adds the upstream key server-side and never echoes it', async () => {
    const n = h.mock.received.length;
    const r = await call(h.url, { body: chat('mock:plain'), headers: { authorization: 'Bearer client-side-key' } });
    expect(r.status).toBe(200);
    expect(h.mock.received[n]!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(r.headers) + r.text).not.toContain(UPSTREAM_KEY);
    // A provider without a key gets no Authorization at all, not the client's.
    await call(h.url, { body: chat('open:plain'), headers: { authorization: 'Bearer client-side-key' } });
    expect(h.mock.received[n + 1]!.headers.authorization).toBeUndefined();
  });

  it('blanks the upstream key out of an upstream error body that quotes it', async () => {
    const r = await call(h.url, { body: chat('mock:echo-key:401') });
    expect(r.status).toBe(401);
    expect(r.text).not.toContain(UPSTREAM_KEY);
    expect(r.json.error.message).toBe('Incorrect API key provided: Bearer ***');
    expect(JSON.stringify(h.logs)).not.toContain(UPSTREAM_KEY);
  });

  it('passes upstream error statuses and bodies through unchanged', async () => {
    for (const status of [400, 404, 429, 500, 503]) {
      const r = await call(h.url, { body: chat(`open:error:${status}`) });
      expect(r.status).toBe(status);
      expect(r.json).toEqual({ error: { message: `mock error ${status}`, type: 'mock_error', param: null, code: 'mock_code' } });
    }
  });

  it('answers 400 for malformed JSON and for a missing or ill-typed model or messages', async () => {
    const cases: [string, string][] = [
      ['{"model": "mock:x", "messages": [', 'invalid_json'],
      ['[1,2]', 'invalid_json'],
      [JSON.stringify({ messages: [] }), 'invalid_request'],
      [JSON.stringify({ model: 42, messages: [] }), 'invalid_request'],
      [JSON.stringify({ model: 'mock:x' }), 'invalid_request'],
      [JSON.stringify({ model: 'mock:x', messages: 'hi' }), 'invalid_request'],
      [JSON.stringify({ model: 'mock:x', messages: ['hi'] }), 'invalid_request'],
      [JSON.stringify({ model: 'mock:', messages: [] }), 'invalid_request'],
    ];
    const n = h.mock.received.length;
    for (const [body, code] of cases) {
      const r = await call(h.url, { body });
      expect(r.status, body).toBe(400);
      expect(r.json.error.type).toBe('invalid_request_error');
      expect(r.json.error.code).toBe(code);
      expect(typeof r.json.error.message).toBe('string');
    }
    expect(h.mock.received.length).toBe(n);
  });

  it('answers 404 model_not_found for an unknown prefix or a model without one', async () => {
    for (const model of ['nope:llama3', 'llama3']) {
      const r = await call(h.url, { body: chat(model) });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('model_not_found');
      expect(r.json.error.param).toBe('model');
    }
  });

  it('answers 502 when the upstream is unreachable and names the tunnel that reaches it', async () => {
    const r = await call(h.url, { body: chat('dead:llama3') });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_unreachable');
    expect(r.json.error.message).toContain('ECONNREFUSED');
    expect(r.json.error.message).toContain(`127.0.0.1:${dead} is the local end of tunnel 'llm' (abcdef01), which is RETRYING, not RUNNING`);
    // A tunnel that is up points at its far end instead.
    tunnelStatus = 'RUNNING';
    try {
      const running = await call(h.url, { body: chat('dead:llama3') });
      expect(running.status).toBe(502);
      expect(running.json.error.message).toContain("tunnel 'llm' (abcdef01), which is RUNNING: nothing answers at the tunnel's far end");
    } finally {
      tunnelStatus = 'RETRYING';
    }
    // A provider that no tunnel reaches gets no tunnel talk.
    const plain = await call(h.url, { body: chat('open:error:502') });
    expect(plain.text).not.toContain('tunnel');
  });

  it('answers a clear 500 when a provider key names an unset variable, and logs the variable', async () => {
    const r = await call(h.url, { body: chat('nokey:x') });
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe('provider_key_unset');
    expect(r.json.error.message).toContain('NOT_SET_ANYWHERE');
    expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_unset_variable', variable: 'NOT_SET_ANYWHERE' }));
  });

  it('answers 413 for a body over the limit, declared or streamed', async () => {
    const big = chat('mock:x', { pad: 'x'.repeat(17 * 1024 * 1024) });
    const r = await call(h.url, { body: big });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('request_too_large');
    const chunked = await call(h.url, { body: big, headers: { 'transfer-encoding': 'chunked' } });
    expect(chunked.status).toBe(413);
  });

  it('puts x-request-id on every response: the client\'s when sane, a fresh one otherwise', async () => {
    const mine = await call(h.url, { body: chat('mock:x'), headers: { 'x-request-id': 'req-123.abc' } });
    expect(mine.headers['x-request-id']).toBe('req-123.abc');
    expect(mine.headers['x-upstream-request-id']).toBe('upstream-id');
    expect(h.mock.received.at(-1)!.headers['x-request-id']).toBe('req-123.abc');
    for (const insane of ['a b <script>', 'x'.repeat(200), 'line\tbreak']) {
      const r = await call(h.url, { body: chat('mock:x'), headers: { 'x-request-id': insane } });
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    for (const r of [
      await call(h.url, { body: '{' }),
      await call(h.url, { body: chat('nope:x') }),
      await call(h.url, { body: chat('dead:x') }),
      await call(h.url, { body: chat('open:error:500') }),
      await call(h.url, { path: '/v1/models', method: 'GET' }),
      await call(h.url, { path: '/v1/other', method: 'GET' }),
    ]) {
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('gives every request without a usable id its own', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await call(h.url, { body: chat('mock:x') })).headers['x-request-id'] as string);
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("passes the client's query string on to the provider (Azure-style api-version)", async () => {
    const r = await call(h.url, { path: '/v1/chat/completions?api-version=2024-10-21&x=%20y', body: chat('mock:x') });
    expect(r.status).toBe(200);
    expect(h.mock.received.at(-1)!.url).toBe('/v1/chat/completions?api-version=2024-10-21&x=%20y');
  });

  it('answers 405 for the wrong method and 404 for an unknown /v1 path, OpenAI-shaped', async () => {
    const get = await call(h.url, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.json.error.code).toBe('method_not_allowed');
    const other = await call(h.url, { path: '/v1/files' });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
  });

  it('works with the official openai client, plain and streamed', async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: 'mock:llama3:8b', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.choices[0]!.message.content).toBe('hello from the mock');
    expect(plain.model).toBe('llama3:8b');
    const stream = await client.chat.completions.create({ model: 'mock:stream:5:5', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('c0 c1 c2 c3 c4 ');
  });

  it('turns upstream errors into exceptions the openai client understands', async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const failure = await client.chat.completions.create({ model: 'nope:x', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    expect((failure as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('never puts the upstream key in a response or a log entry, on any path of a keyed provider', async () => {
    const logged = h.logs.length;
    const answers = [
      await call(h.url, { body: chat('deadkey:x') }),
      await call(h.url, { body: chat('mock:error:500') }),
      await call(h.url, { body: chat('mock:echo-key:403') }),
      await call(h.url, { path: '/v1/models', method: 'GET' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([502, 500, 403, 200]);
    // The keyed paths above did log (so this check can fail), and nothing anywhere holds the key.
    expect(h.logs.slice(logged)).toContainEqual(expect.objectContaining({ event: 'proxy_upstream_error', provider: 'deadkey' }));
    // (the listing may come from the short-lived cache, filled by an earlier test)
    expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_models_failed', provider: 'deadkey' }));
    for (const a of answers) expect(JSON.stringify(a.headers) + a.text).not.toContain(UPSTREAM_KEY);
    expect(JSON.stringify(h.logs)).not.toContain(UPSTREAM_KEY);
  });

  it('picks up a config change at once (no restart)', async () => {
    const r1 = await call(h.url, { body: chat('fresh:x') });
    expect(r1.status).toBe(404);
    h.setConfig({ providers: { fresh: { base_url: h.mock.baseUrl } } });
    try {
      const r2 = await call(h.url, { body: chat('fresh:x') });
      expect(r2.status).toBe(200);
    } finally {
      h.setConfig(providers(h.mock.baseUrl));
    }
  });
});

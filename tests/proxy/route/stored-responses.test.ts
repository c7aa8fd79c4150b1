// Calls on a stored response by its id (they name no model) reach the provider that
// created it, through the official `openai` client's responses.retrieve, .delete,
// .cancel and .inputItems.list, on both listeners; default_provider takes the ids the
// proxy has not seen, and an unknown id is a clear 404.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notingOwner, ResponseOwners, responseIdIn } from '../../../src/proxy/route/response-owners.js';
import { call, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-stored';

describe.each<Listener>(['proxy', 'daemon'])('stored responses through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      // Two providers on the same server, told apart by the key each sends.
      (base) => ({ api_keys: ['${PROXY_KEY}'], providers: { a: { base_url: base, api_key: 'sk-a' }, b: { base_url: base, api_key: 'sk-b' } } }),
      { env: { PROXY_KEY: KEY } },
      listener,
    );
  });
  afterAll(() => h.close());
  const openai = () => new OpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY, maxRetries: 0 });
  const last = () => h.mock.received[h.mock.received.length - 1]!;

  it('retrieve, inputItems.list, cancel and delete go to the provider that created the response', async () => {
    const made = await openai().responses.create({ model: 'b:qwen2', input: 'hi', store: true });
    expect(made.id).toBe('resp_qwen2');
    const got = await openai().responses.retrieve(made.id);
    expect(got.status).toBe('completed');
    expect([last().method, last().url, last().headers.authorization]).toEqual(['GET', '/v1/responses/resp_qwen2', 'Bearer sk-b']);
    const items = await openai().responses.inputItems.list(made.id, { limit: 5 });
    expect(items.data[0]?.type).toBe('message');
    expect([last().url, last().headers.authorization]).toEqual(['/v1/responses/resp_qwen2/input_items?limit=5', 'Bearer sk-b']);
    expect((await openai().responses.cancel(made.id)).status).toBe('cancelled');
    expect([last().method, last().url]).toEqual(['POST', '/v1/responses/resp_qwen2/cancel']);
    await openai().responses.delete(made.id);
    expect([last().method, last().url, last().headers.authorization]).toEqual(['DELETE', '/v1/responses/resp_qwen2', 'Bearer sk-b']);
    // No body, so no content type, on the calls by id.
    expect(last().headers['content-type']).toBeUndefined();
  });

  it('notes the id from a streamed create too, and retrieve can stream', async () => {
    const stream = await openai().responses.create({ model: 'a:llama3:8b', input: 'hi', stream: true });
    let id = '';
    for await (const e of stream) if (e.type === 'response.created') id = e.response.id;
    expect(id).toBe('resp_llama3_8b');
    const again = await openai().responses.retrieve(id, { stream: true });
    const types: string[] = [];
    for await (const e of again) types.push(e.type);
    expect(types.at(-1)).toBe('response.completed');
    expect([last().url, last().headers.authorization]).toEqual(['/v1/responses/resp_llama3_8b?stream=true', 'Bearer sk-a']);
  });

  it('inputTokens.count and compact are routed by their model, not taken for response ids', async () => {
    expect((await openai().responses.inputTokens.count({ model: 'a:llama3:8b', input: 'hi' })).input_tokens).toBe(7);
    expect([last().method, last().url, last().json?.model]).toEqual(['POST', '/v1/responses/input_tokens', 'llama3:8b']);
    await openai().responses.compact({ model: 'b:qwen2', input: 'hi' });
    expect([last().url, last().json?.model, last().headers.authorization]).toEqual(['/v1/responses/compact', 'qwen2', 'Bearer sk-b']);
  });

  it('does not note a response created with store: false (its provider keeps none)', async () => {
    const made = await openai().responses.create({ model: 'a:unstored', input: 'hi', store: false });
    const e = await openai().responses.retrieve(made.id).catch((x: unknown) => x);
    expect((e as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
  });

  it('an id the proxy has not seen is a 404 that says why, and nothing reaches a provider', async () => {
    const before = h.mock.received.length;
    const e = await openai().responses.retrieve('resp_elsewhere').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect((e as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
    expect((e as Error).message).toContain('has passed through this proxy since it started');
    expect(h.mock.received.length).toBe(before);
  });

  it('default_provider takes the ids the proxy has not seen', async () => {
    h.setConfig({ api_keys: ['${PROXY_KEY}'], default_provider: 'a', providers: { a: { base_url: h.mock.baseUrl, api_key: 'sk-a' }, b: { base_url: h.mock.baseUrl, api_key: 'sk-b' } } });
    try {
      expect((await openai().responses.retrieve('resp_made_before_a_restart')).id).toBe('resp_made_before_a_restart');
      expect(last().headers.authorization).toBe('Bearer sk-a');
      // The provider's own 404 for an id it does not hold comes back as it is.
      const e = await openai().responses.retrieve('nope').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(OpenAI.NotFoundError);
      expect((e as Error).message).toContain("Response with id 'nope' not found.");
    } finally {
      h.setConfig({ api_keys: ['${PROXY_KEY}'], providers: { a: { base_url: h.mock.baseUrl, api_key: 'sk-a' }, b: { base_url: h.mock.baseUrl, api_key: 'sk-b' } } });
    }
  });

  it('refuses ids that would take the call elsewhere on the provider, and nothing reaches it', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    h.setConfig({ api_keys: ['${PROXY_KEY}'], default_provider: 'a', providers: { a: { base_url: h.mock.baseUrl, api_key: 'sk-a' } } });
    try {
      const before = h.mock.received.length;
      for (const path of ['/v1/responses/%2e%2e', '/v1/responses/%2E', '/v1/responses/%2e%2e/input_items', '/v1/responses/a%2Fb', '/v1/responses/%20x']) {
        const r = await call(h.url, { method: 'GET', path, headers: auth });
        expect(r.status, path).toBe(404);
        expect(r.json.error.code, path).toBe('response_not_found');
      }
      expect((await call(h.url, { method: 'POST', path: '/v1/responses//cancel', headers: auth, body: '' })).status).toBe(404);
      expect(h.mock.received.length).toBe(before);
    } finally {
      h.setConfig({ api_keys: ['${PROXY_KEY}'], providers: { a: { base_url: h.mock.baseUrl, api_key: 'sk-a' }, b: { base_url: h.mock.baseUrl, api_key: 'sk-b' } } });
    }
  });

  it('drops a body sent with a cancel: nothing unchecked reaches the provider', async () => {
    const made = await openai().responses.create({ model: 'a:qwen2', input: 'hi' });
    const r = await call(h.url, { method: 'POST', path: `/v1/responses/${made.id}/cancel`, headers: { authorization: `Bearer ${KEY}`, 'content-encoding': 'gzip' }, body: Buffer.from([0x1f, 0x8b, 0xff, 0xfe]) });
    expect(r.status).toBe(200);
    expect([last().url, last().bytes.length, last().headers['content-type'], last().headers['content-encoding']]).toEqual([`/v1/responses/${made.id}/cancel`, 0, undefined, undefined]);
  });

  it('answers other paths under a response, and wrong methods, in OpenAI\'s shape', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const post = await call(h.url, { method: 'POST', path: '/v1/responses/resp_x', headers: auth, body: '{}' });
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD, DELETE']);
    expect((await call(h.url, { method: 'PUT', path: '/v1/responses/resp_x/foo', headers: auth, body: '{}' })).status).toBe(404);
    const odd = await call(h.url, { method: 'GET', path: '/v1/responses/resp_x/other', headers: auth });
    expect(odd.status).toBe(404);
    expect(odd.json.error.message).toMatch(/^no route GET \/v1\/responses\/resp_x\/other; a stored response takes /);
    const wrong = await call(h.url, { method: 'GET', path: '/v1/responses/resp_x/cancel', headers: auth });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect((await call(h.url, { method: 'GET', path: '/v1/responses/resp_x' })).status).toBe(401);
  });
});

describe('who created a response', () => {
  it('is read from the first "id" of a response object or of a stream\'s first event', () => {
    expect(responseIdIn(Buffer.from('{"id":"resp_abc123","object":"response","output":[{"id":"msg_1"}]}'))).toBe('resp_abc123');
    expect(responseIdIn(Buffer.from('event: response.created\ndata: {"type":"response.created","response":{"id" : "resp_9f"}}\n\n'))).toBe('resp_9f');
    expect(responseIdIn(Buffer.from('{"object":"response"}'))).toBeNull();
    expect(responseIdIn(Buffer.from('{"id":"bad id with spaces"}'))).toBeNull();
    expect(responseIdIn(Buffer.from('{"id":12}'))).toBeNull();
  });

  it('is found when its id is cut between two pieces, or comes after a stream\'s comment lines', () => {
    const seen: Buffer[] = [];
    const observer = { tap: (c: Buffer) => void seen.push(c), read: () => {}, sent: () => {}, metered: false, watch: () => {}, cut: () => {} };
    const owners = new ResponseOwners();
    const a = { provider: 'a', client: 'alice', model: 'a:m' };
    const current = { owner: () => a, res: { statusCode: 200 } };
    const split = notingOwner(observer, owners, current);
    split.tap(Buffer.from('{"id":"resp_sp'));
    split.tap(Buffer.from('lit","object":"response"}'));
    expect(owners.ownerOf('resp_split')).toEqual(a);
    const b = { provider: 'b', client: null, model: 'b:m' };
    const stream = notingOwner(observer, owners, { ...current, owner: () => b });
    stream.tap(Buffer.from(': ping\n\n'));
    stream.tap(Buffer.from('event: response.created\ndata: {"type":"response.created","response":{"id":"resp_ping"}}\n\n'));
    expect(owners.ownerOf('resp_ping')).toEqual(b);
    // Every piece still reaches the request's own record, unchanged.
    expect(Buffer.concat(seen).toString()).toContain('resp_ping');
    const failed = notingOwner(observer, owners, { ...current, res: { statusCode: 404 } });
    failed.tap(Buffer.from('{"id":"resp_error_body"}'));
    expect(owners.ownerOf('resp_error_body')).toBeUndefined();
  });

  it('keeps the most recent ones', () => {
    const owners = new ResponseOwners(3);
    const by = (provider: string) => ({ provider, client: null, model: `${provider}:m` });
    for (const id of ['r1', 'r2', 'r3']) owners.remember(id, by('a'));
    owners.remember('r1', by('b'));
    owners.remember('r4', by('a'));
    expect(['r1', 'r2', 'r3', 'r4'].map((id) => owners.ownerOf(id)?.provider)).toEqual(['b', undefined, 'a', 'a']);
  });
});

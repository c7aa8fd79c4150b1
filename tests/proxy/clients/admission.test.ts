// One admission for every /v1 route (SPEC §9b): the key, the client's models and its
// limits hold on the routes that name no model in their body too — stored responses
// (which belong to the client that made them), the model list, an upload, a token
// count, a path the proxy lacks — and nothing a client may not have reaches a provider.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowsWholeProvider, compileClients } from '../../../src/proxy/clients/rules.js';
import { call, chat, open, startHarness, type Answer, type Harness } from '../harness.js';

const KEYS = { alice: 'sk-alice-0123456789', carol: 'sk-carol-0123456789', bob: 'sk-bob-0123456789', dave: 'sk-dave-0123456789', eve: 'sk-eve-0123456789', polly: 'sk-polly-0123456789', mc: 'sk-mc-0123456789' };
const SHARED = 'sk-shared-0123456789';
type Who = keyof typeof KEYS | 'shared';
let clock = 5_000_000;
let h: Harness;

const config = (base: string, extra: Record<string, unknown> = {}) => ({
  api_keys: [SHARED],
  clients: {
    alice: { key: KEYS.alice, models: ['a:*'] },
    // The same models as alice: another client all the same.
    carol: { key: KEYS.carol, models: ['a:*'] },
    bob: { key: KEYS.bob, models: ['b:*'] },
    dave: { key: KEYS.dave, models: ['a:llama3:8b'] },
    eve: { key: KEYS.eve },
    polly: { key: KEYS.polly, models: ['a:*'], rpm: 2 },
    mc: { key: KEYS.mc, max_concurrent: 1 },
  },
  // Two providers on the mock, told apart by the key each sends.
  providers: { a: { base_url: base, api_key: 'sk-a' }, b: { base_url: base, api_key: 'sk-b' } },
  ...extra,
});

beforeAll(async () => {
  h = await startHarness((base) => config(base), { now: () => clock });
});
afterAll(() => h?.close());
beforeEach(() => {
  // Each test in a minute of its own: no rpm window carries over.
  clock += 120_000;
  h.setConfig(config(h.mock.baseUrl));
});

const auth = (who: Who) => ({ authorization: `Bearer ${who === 'shared' ? SHARED : KEYS[who]}` });
const as = (who: Who, method: string, path: string, body?: string) => call(h.url, { method, path, headers: auth(who), body });
const create = async (who: Who, model: string): Promise<string> => {
  const r = await as(who, 'POST', '/v1/responses', JSON.stringify({ model, input: 'hi' }));
  expect(r.status).toBe(200);
  return r.json.id as string;
};
/** The four calls on a stored response by its id. */
const CALLS = (id: string): [string, string][] => [
  ['GET', `/v1/responses/${id}`],
  ['GET', `/v1/responses/${id}/input_items`],
  ['POST', `/v1/responses/${id}/cancel`],
  ['DELETE', `/v1/responses/${id}`],
];
/** Asks `fn` and checks that nothing of it reached a provider. */
async function unsent<T>(fn: () => Promise<T>): Promise<T> {
  const before = h.mock.received.length;
  const out = await fn();
  expect(h.mock.received.length).toBe(before);
  return out;
}
const last = () => h.mock.received[h.mock.received.length - 1]!;

describe('stored responses belong to the client that made them', () => {
  it('its maker reaches it by every call; the provider that holds it gets them', async () => {
    const id = await create('alice', 'a:qwen2');
    for (const [method, path] of CALLS(id)) {
      const r = await as('alice', method, path);
      expect(r.status, `${method} ${path}`).toBe(200);
      expect([last().method, last().url.split('?')[0], last().headers.authorization]).toEqual([method, path, 'Bearer sk-a']);
    }
  });

  it.each<Who>(['carol', 'bob', 'eve', 'shared', 'dave'])('%s, who did not make it, gets a 404 on every call, and no provider is asked', async (who) => {
    const id = await create('alice', 'a:llama3:8b');
    for (const [method, path] of CALLS(id)) {
      const r = await unsent(() => as(who, method, path));
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.error.code).toBe('response_not_found');
      expect(r.json.error.message).not.toContain('alice');
    }
  });

  it('a response made with a shared key is not a client\'s, nor the other way round', async () => {
    const shared = await create('shared', 'b:qwen2');
    expect((await unsent(() => as('bob', 'GET', `/v1/responses/${shared}`))).status).toBe(404);
    expect((await as('shared', 'GET', `/v1/responses/${shared}`)).status).toBe(200);
    const bobs = await create('bob', 'b:llama3:8b');
    expect((await unsent(() => as('shared', 'DELETE', `/v1/responses/${bobs}`))).status).toBe(404);
  });

  it('the 404 reads the same for another client\'s response as for an id never made', async () => {
    const id = await create('alice', 'a:phi3');
    const texts = async (who: Who, extra: Record<string, unknown>): Promise<[string, string]> => {
      h.setConfig(config(h.mock.baseUrl, extra));
      const theirs = await unsent(() => as(who, 'GET', `/v1/responses/${id}`));
      const never = await unsent(() => as(who, 'GET', '/v1/responses/resp_never_made'));
      expect([theirs.status, never.status]).toEqual([404, 404]);
      return [JSON.stringify(theirs.json).replace(id, '<id>'), JSON.stringify(never.json).replace('resp_never_made', '<id>')];
    };
    const [a, b] = await texts('carol', {});
    expect(a).toBe(b);
    // bob may not use all of the default provider's models: an id it does not know is not looked for there either.
    const [c, d] = await texts('bob', { default_provider: 'a' });
    expect(c).toBe(d);
    expect(JSON.parse(c).error.message).toContain('only with a key that may use all of its models');
  });

  it('the openai client reads the 404 as NotFoundError', async () => {
    const id = await create('alice', 'a:qwen2');
    const carol = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: KEYS.carol, maxRetries: 0 });
    const e = await unsent(() => carol.responses.retrieve(id).catch((x: unknown) => x));
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await unsent(() => carol.responses.delete(id).catch((x: unknown) => x))).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('another client cannot build on it with previous_response_id; its maker can', async () => {
    const id = await create('alice', 'a:qwen2');
    for (const path of ['/v1/responses', '/v1/responses/input_tokens', '/v1/responses/compact']) {
      const r = await unsent(() => as('carol', 'POST', path, JSON.stringify({ model: 'a:qwen2', input: 'and then?', previous_response_id: id })));
      expect(r.status, path).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
    }
    const mine = await as('alice', 'POST', '/v1/responses', JSON.stringify({ model: 'a:qwen2', input: 'and then?', previous_response_id: id }));
    expect(mine.status).toBe(200);
    expect(last().json?.previous_response_id).toBe(id);
  });

  it('its maker is refused it once the model it was made with is off its list (403), and let in again when it is back', async () => {
    const id = await create('alice', 'a:qwen2');
    h.setConfig(config(h.mock.baseUrl, { clients: { ...config(h.mock.baseUrl).clients, alice: { key: KEYS.alice, models: ['b:*'] } } }));
    const r = await unsent(() => as('alice', 'GET', `/v1/responses/${id}`));
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('model_not_allowed');
    h.setConfig(config(h.mock.baseUrl));
    expect((await as('alice', 'GET', `/v1/responses/${id}`)).status).toBe(200);
  });
});

describe('an id the proxy does not know, with a default_provider', () => {
  beforeEach(() => h.setConfig(config(h.mock.baseUrl, { default_provider: 'a' })));

  it.each<Who>(['dave', 'bob'])('is not sent to it for %s, who may not use all of its models', async (who) => {
    for (const [method, path] of CALLS('resp_made_before_a_restart')) {
      const r = await unsent(() => as(who, method, path));
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.error.message).toContain('proxy.default_provider ("a") only with a key that may use all of its models');
    }
  });

  it.each<Who>(['alice', 'eve', 'shared'])('is sent to it, with its key, for %s, who may use all of its models', async (who) => {
    const r = await as(who, 'GET', '/v1/responses/resp_made_before_a_restart');
    expect(r.status).toBe(200);
    expect([last().url, last().headers.authorization]).toEqual(['/v1/responses/resp_made_before_a_restart', 'Bearer sk-a']);
  });

  it('another client\'s response is still a 404 for a client that may use all of it, and it never reaches the provider', async () => {
    const id = await create('carol', 'a:qwen2');
    for (const who of ['alice', 'eve', 'shared'] as const) {
      const r = await unsent(() => as(who, 'GET', `/v1/responses/${id}`));
      expect(r.status, who).toBe(404);
    }
  });

  it('a previous_response_id the proxy does not know is refused to a client that may not use all of the target\'s provider', async () => {
    const body = JSON.stringify({ model: 'a:llama3:8b', input: 'hi', previous_response_id: 'resp_made_before_a_restart' });
    const refused = await unsent(() => as('dave', 'POST', '/v1/responses', body));
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe('previous_response_not_found');
    expect((await as('alice', 'POST', '/v1/responses', body)).status).toBe(200);
  });
});

describe('the limits hold on every route', () => {
  /** Every route that names no model in a JSON body, and the ones that do in other ways. */
  const routes = (id: string): [string, string, string?][] => [
    ...CALLS(id),
    ['GET', '/v1/models'],
    ['GET', '/v1/models/a:qwen2'],
    ['POST', '/v1/messages/count_tokens', JSON.stringify({ model: 'a:qwen2', messages: [{ role: 'user', content: 'hi' }] })],
    ['GET', '/v1/files'],
    ['POST', '/v1/batches', '{}'],
  ];

  it('rpm: over it, every route is a 429 with Retry-After and x-ratelimit-*, and nothing reaches a provider', async () => {
    const id = await create('polly', 'a:polly-own');
    expect((await as('polly', 'GET', `/v1/responses/${id}`)).status).toBe(200);
    for (const [method, path, body] of routes(id)) {
      const r = await unsent(() => as('polly', method, path, body));
      expect(r.status, `${method} ${path}`).toBe(429);
      // Anthropic's shape (count_tokens) has the code in its message.
      expect(r.text).toContain('rate_limit_rpm');
      expect(r.headers['retry-after']).toBeDefined();
      expect(r.headers['x-ratelimit-remaining-requests']).toBe('0');
    }
    const upload = await unsent(() => upload_('polly', 'a:whisper'));
    expect(upload.status).toBe(429);
    clock += 61_000;
    expect((await as('polly', 'GET', `/v1/responses/${id}`)).status).toBe(200);
  });

  it('rpm: the calls on a stored response and the model list count as requests', async () => {
    const id = await create('polly', 'a:qwen2');
    expect((await as('polly', 'GET', '/v1/models')).status).toBe(200);
    expect((await unsent(() => as('polly', 'GET', `/v1/responses/${id}`))).status).toBe(429);
  });

  it('max_concurrent: while one request is under way, every route is a 429', async () => {
    const id = await create('mc', 'b:mc-own');
    const first = open(h.url, chat('a:gated-stream', { stream: true }), auth('mc'));
    expect((await first.head).status).toBe(200);
    try {
      for (const [method, path, body] of routes(id)) {
        const r = await unsent(() => as('mc', method, path, body));
        expect(r.status, `${method} ${path}`).toBe(429);
        expect(r.text).toContain('rate_limit_max_concurrent');
      }
    } finally {
      h.mock.release();
      await first.done;
    }
  });

  it('the model list: an upload, a token count and a model by id are refused a model off the client\'s list, before any provider', async () => {
    const count = await unsent(() => as('bob', 'POST', '/v1/messages/count_tokens', JSON.stringify({ model: 'a:qwen2', messages: [{ role: 'user', content: 'hi' }] })));
    expect(count.status).toBe(403);
    expect(count.json).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    const upload = await unsent(() => upload_('bob', 'a:whisper'));
    expect(upload.status).toBe(403);
    expect(upload.json.error.code).toBe('model_not_allowed');
    const hidden = await as('bob', 'GET', '/v1/models/a:qwen2');
    expect([hidden.status, hidden.json.error.code]).toEqual([404, 'model_not_found']);
    expect((await as('alice', 'GET', '/v1/models/a:qwen2')).status).toBe(200);
    expect((await upload_('bob', 'b:whisper')).status).toBe(200);
  });

  it('a path the proxy lacks takes the key first: 401 without one, 404 with one', async () => {
    for (const [method, path] of [['GET', '/v1/files'], ['POST', '/v1/batches'], ['GET', '/v1/responses/resp_x/other'], ['GET', '/v1/responses/%zz']] as const) {
      const none = await call(h.url, { method, path, body: method === 'POST' ? '{}' : undefined });
      expect(none.status, path).toBe(401);
      const wrong = await call(h.url, { method, path, headers: { authorization: 'Bearer sk-nobody' }, body: method === 'POST' ? '{}' : undefined });
      expect(wrong.status, path).toBe(401);
      const right = await as('alice', method, path, method === 'POST' ? '{}' : undefined);
      expect(right.status, path).not.toBe(401);
      expect(right.status, path).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('which clients may look for an id on a provider', () => {
  const rule = (models?: string[]) => compileClients({ c: { key: 'k', ...(models === undefined ? {} : { models }) } }, {})!.list[0]!;
  it.each<[string[] | undefined, string, boolean]>([
    [undefined, 'gpu1', true],
    [['gpu1:*'], 'gpu1', true],
    [['*'], 'gpu1', true],
    [['gpu*'], 'gpu1', true],
    [['*:*'], 'gpu1', true],
    [['fast', 'gpu2:*', 'gpu1:*'], 'gpu1', true],
    [['gpu1:llama*'], 'gpu1', false],
    [['gpu1:llama3:8b'], 'gpu1', false],
    [['gpu10:*'], 'gpu1', false],
    [['gpu1:*:q4'], 'gpu1', false],
    [['*:8b'], 'gpu1', false],
    [['gpu2:*'], 'gpu1', false],
  ])('%j on %s: %s', (models, prefix, expected) => {
    expect(allowsWholeProvider(rule(models), prefix)).toBe(expected);
  });
});

async function upload_(who: Who, model: string): Promise<Answer> {
  const form = new FormData();
  form.append('model', model);
  form.append('file', new Blob([Buffer.from('RIFF')], { type: 'audio/wav' }), 'a.wav');
  const r = new Response(form);
  const body = Buffer.from(await r.arrayBuffer());
  return call(h.url, { path: '/v1/audio/transcriptions', headers: { ...auth(who), 'content-type': r.headers.get('content-type')! }, body });
}

// The model list in the shape of the client that asks: OpenAI's by default,
// Anthropic's (paged) when the request carries `anthropic-version`, as the Anthropic
// SDK's `models.list()` and `models.retrieve()` send it; on both listeners.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicPage } from '../../../src/proxy/endpoints/model-list.js';
import type { ModelEntry } from '../../../src/proxy/route/model-catalog.js';
import { call, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-models';
const LISTED = ['mock:llama3:8b', 'mock:qwen2', 'claude:llama3:8b', 'claude:qwen2', 'sonnet', 'fast'];

describe.each<Listener>(['proxy', 'daemon'])('the model list through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      (base) => ({
        api_keys: ['${PROXY_KEY}'],
        providers: { mock: { base_url: base }, claude: { base_url: base, format: 'anthropic' } },
        aliases: { sonnet: 'claude:llama3:8b', fast: ['mock:llama3:8b', 'mock:qwen2'] },
      }),
      { env: { PROXY_KEY: KEY } },
      listener,
    );
  });
  afterAll(() => h.close());
  const anthropic = () => new Anthropic({ baseURL: h.url, apiKey: KEY, maxRetries: 0 });

  it('Anthropic SDK models.list(): every model and alias, page after page, in Anthropic\'s shape', async () => {
    const all: Anthropic.ModelInfo[] = [];
    for await (const m of anthropic().models.list({ limit: 4 })) all.push(m);
    expect(all.map((m) => m.id)).toEqual(LISTED);
    expect(all[0]).toEqual({ type: 'model', id: 'mock:llama3:8b', display_name: 'mock:llama3:8b', created_at: '1970-01-01T00:00:02Z' });
    const first = await anthropic().models.list({ limit: 4 });
    expect([first.data.length, first.has_more, first.first_id, first.last_id]).toEqual([4, true, 'mock:llama3:8b', 'claude:qwen2']);
  });

  it('Anthropic SDK models.retrieve(), and a NotFoundError for an unknown id', async () => {
    expect(await anthropic().models.retrieve('claude:llama3:8b')).toMatchObject({ type: 'model', id: 'claude:llama3:8b' });
    const e = await anthropic().models.retrieve('claude:nope').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.NotFoundError);
    expect((e as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('refuses a bad page request in Anthropic\'s shape', async () => {
    const r = await call(h.url, { method: 'GET', path: '/v1/models?limit=0', headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'limit must be a whole number from 1 to 1000, found "0" (invalid_request)' } });
  });

  it('stays OpenAI\'s list for OpenAI clients', async () => {
    const page = await new OpenAI({ baseURL: `${h.url}/v1`, apiKey: KEY, maxRetries: 0 }).models.list();
    expect(page.data.map((m) => m.id)).toEqual(LISTED);
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'mock' });
  });
});

describe("Anthropic's paging", () => {
  const entries: ModelEntry[] = Array.from({ length: 45 }, (_, i) => ({ id: `p:m${i}`, object: 'model', created: 0, owned_by: 'p' }));
  const page = (q: string) => anthropicPage(entries, new URLSearchParams(q));
  const ids = (q: string) => {
    const r = page(q);
    return r.ok ? (r.value as { data: { id: string }[]; has_more: boolean }) : null;
  };

  it('gives 20 by default, then the next ones after after_id', () => {
    expect(ids('')!.data.map((m) => m.id)).toEqual(entries.slice(0, 20).map((m) => m.id));
    expect(ids('')!.has_more).toBe(true);
    expect(ids('after_id=p:m39')!.data.map((m) => m.id)).toEqual(['p:m40', 'p:m41', 'p:m42', 'p:m43', 'p:m44']);
    expect(ids('after_id=p:m39')!.has_more).toBe(false);
  });

  it('gives the ones just before before_id', () => {
    expect(ids('before_id=p:m10&limit=3')!.data.map((m) => m.id)).toEqual(['p:m7', 'p:m8', 'p:m9']);
    expect(ids('before_id=p:m10&limit=3')!.has_more).toBe(true);
    expect(ids('before_id=p:m2&limit=3')!.has_more).toBe(false);
  });

  it.each([
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=1e1', 'limit'],
    ['limit=0x3', 'limit'],
    ['limit=%203', 'limit'],
    ['after_id=p:none', 'after_id'],
    ['before_id=p:none', 'before_id'],
  ])('refuses %s, naming the parameter', (q, param) => {
    const r = page(q);
    expect(!r.ok && r.error).toMatchObject({ status: 400, param });
  });

  it('says null for first_id and last_id of an empty page', () => {
    expect(anthropicPage([], new URLSearchParams()).ok && (anthropicPage([], new URLSearchParams()) as { value: unknown }).value).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
  });
});

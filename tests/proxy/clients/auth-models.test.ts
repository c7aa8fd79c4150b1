import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPort, startMockUpstream, type MockUpstream } from '../mock-upstream.js';
import { call, chat, startHarness, type Harness } from '../harness.js';

describe('api_keys guard the /v1 group', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ api_keys: ['${PROXY_KEY}', 'literal-key'], providers: { mock: { base_url: base } } }), {
      env: { PROXY_KEY: 'from-env-key' },
    });
  });
  afterAll(() => h.close());

  it('accepts each configured key as a Bearer token', async () => {
    for (const key of ['from-env-key', 'literal-key']) {
      expect((await call(h.url, { body: chat('mock:x'), headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    }
    expect((await call(h.url, { body: chat('mock:x'), headers: { authorization: 'bearer literal-key' } })).status).toBe(200);
  });

  it('answers 401 invalid_api_key for a missing, wrong or partial key, on both routes, before reading the body', async () => {
    const before = h.mock.received.length;
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer literal-ke', 'Bearer literal-key2', 'Basic bGl0ZXJhbC1rZXk=', 'Bearer ${PROXY_KEY}', 'Bearer ']) {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const r = await call(h.url, { body: chat('mock:x'), headers });
      expect(r.status, String(authorization)).toBe(401);
      expect(r.json.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      expect(r.headers['www-authenticate']).toBe('Bearer');
      const m = await call(h.url, { path: '/v1/models', method: 'GET', headers });
      expect(m.status).toBe(401);
    }
    expect(h.mock.received.length).toBe(before);
  });

  it('fails closed with 503 when every key names an unset variable', async () => {
    h.setConfig({ api_keys: ['${UNSET_PROXY_KEY}'], providers: { mock: { base_url: h.mock.baseUrl } } });
    try {
      const r = await call(h.url, { body: chat('mock:x'), headers: { authorization: 'Bearer ' } });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('proxy_keys_unset');
      expect(r.text).not.toContain('UNSET_PROXY_KEY');
      expect(r.json.error.message).toMatch(/not set or empty .*proxy_unset_variable.*tunnel-manager check.*restart the daemon: it reads its environment only when it starts/);
      expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_unset_variable', variable: 'UNSET_PROXY_KEY' }));
    } finally {
      h.setConfig({ api_keys: ['${PROXY_KEY}', 'literal-key'], providers: { mock: { base_url: h.mock.baseUrl } } });
    }
  });
});

describe('GET /v1/models', () => {
  let h: Harness;
  let hanging: MockUpstream;
  let dead: number;
  beforeAll(async () => {
    hanging = await startMockUpstream();
    hanging.models = 'hang';
    dead = await deadPort();
    h = await startHarness((base) => ({
      providers: {
        gpu1: { base_url: base, api_key: '${K}' },
        gpu2: { base_url: `${base}/` },
        down: { base_url: `http://127.0.0.1:${dead}/v1` },
        stuck: { base_url: hanging.baseUrl, timeout: 0.3 },
      },
    }), { env: { K: 'models-key' } });
  });
  afterAll(async () => {
    await h.close();
    await hanging.close();
  });

  it('lists prefix:model for every provider that answers, in OpenAI list shape, despite dead and hanging ones', async () => {
    const r = await call(h.url, { path: '/v1/models', method: 'GET' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      object: 'list',
      data: [
        { id: 'gpu1:llama3:8b', object: 'model', created: 2, owned_by: 'mock' },
        { id: 'gpu1:qwen2', object: 'model', created: 2, owned_by: 'gpu1' },
        { id: 'gpu2:llama3:8b', object: 'model', created: 2, owned_by: 'mock' },
        { id: 'gpu2:qwen2', object: 'model', created: 2, owned_by: 'gpu2' },
      ],
    });
    const asked = h.mock.received.filter((x) => x.url === '/v1/models');
    expect(asked.map((x) => x.headers.authorization).sort()).toEqual(['Bearer models-key', undefined].sort());
    expect(r.text).not.toContain('models-key');
    expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_models_failed', provider: 'down' }));
    expect(h.logs).toContainEqual(expect.objectContaining({ event: 'proxy_models_failed', provider: 'stuck' }));
  });

  it('answers from a short-lived cache instead of asking every provider each time', async () => {
    await call(h.url, { path: '/v1/models', method: 'GET' });
    const calls = h.mock.modelsCalls;
    const again = await call(h.url, { path: '/v1/models', method: 'GET' });
    expect(again.json.data).toHaveLength(4);
    expect(h.mock.modelsCalls).toBe(calls);
  });

  it('asks again once the config changes', async () => {
    h.setConfig({ providers: { solo: { base_url: h.mock.baseUrl } } });
    const r = await call(h.url, { path: '/v1/models', method: 'GET' });
    expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['solo:llama3:8b', 'solo:qwen2']);
  });
});

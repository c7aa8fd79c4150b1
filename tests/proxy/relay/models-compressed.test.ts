/**
 * Providers that compress their `/models` answer although the proxy asks for
 * identity: gzip, deflate (zlib-wrapped or raw) and br are decoded, so the provider's
 * models are listed and found by id, on both listeners; an encoding the proxy does
 * not read, and an answer that decodes to more than the list's size cap, leave that
 * provider out with a log line that says why.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, startHarness, type Harness, type Listener } from '../harness.js';
import { startMockUpstream, type MockUpstream } from '../mock-upstream.js';

// One mock (and one provider) per way of answering; `plain` is the harness's own mock.
const ENCODINGS = { gz: 'gzip', df: 'deflate', raw: 'deflate-raw', br: 'br', id: 'identity', zs: 'zstd', bomb: 'gzip' } as const;
type Prefix = keyof typeof ENCODINGS;

describe.each<Listener>(['proxy', 'daemon'])('compressed model lists through the %s listener', (listener) => {
  const mocks = {} as Record<Prefix, MockUpstream>;
  let h: Harness;
  beforeAll(async () => {
    for (const [prefix, encoding] of Object.entries(ENCODINGS) as [Prefix, string][]) {
      const m = await startMockUpstream();
      m.modelsEncoding = encoding;
      m.models = [{ id: `${prefix}-model`, owned_by: prefix }];
      mocks[prefix] = m;
    }
    // Over 8 MiB once decoded, a few KiB as sent.
    mocks.bomb.models = [{ id: 'b'.repeat(9 * 1024 * 1024) }];
    h = await startHarness(
      (base) => ({ providers: { plain: { base_url: base }, ...Object.fromEntries(Object.entries(mocks).map(([p, m]) => [p, { base_url: m.baseUrl }])) } }),
      {},
      listener,
    );
  });
  afterAll(async () => {
    await h.close();
    for (const m of Object.values(mocks)) await m.close();
  });

  it('lists the models of every provider whose answer decodes', async () => {
    const r = await call(h.url, { method: 'GET', path: '/v1/models' });
    expect(r.status).toBe(200);
    expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['plain:llama3:8b', 'plain:qwen2', 'gz:gz-model', 'df:df-model', 'raw:raw-model', 'br:br-model', 'id:id-model']);
    expect(r.json.data.find((m: { id: string }) => m.id === 'br:br-model')).toMatchObject({ object: 'model', owned_by: 'br', created: 2 });
  });

  it('finds a model by id whatever the encoding of its provider\'s list', async () => {
    for (const prefix of ['gz', 'df', 'raw', 'br', 'id']) {
      const r = await call(h.url, { method: 'GET', path: `/v1/models/${prefix}:${prefix}-model` });
      expect([r.status, r.json.id], prefix).toEqual([200, `${prefix}:${prefix}-model`]);
    }
  });

  it('leaves out a provider whose encoding it cannot read, or whose list decodes to more than the cap, and says why', async () => {
    expect((await call(h.url, { method: 'GET', path: '/v1/models/zs:zs-model' })).status).toBe(404);
    const failed = (prefix: string) => h.logs.find((e) => e.event === 'proxy_models_failed' && e.provider === prefix)?.error;
    await eventually(() => failed('zs') !== undefined && failed('bomb') !== undefined, 'both failures logged');
    expect(failed('zs')).toBe('the answer\'s content-encoding "zstd" is none the proxy reads (gzip, deflate, br)');
    expect(failed('bomb')).toBe('the answer is larger than 8388608 bytes');
    expect(h.logs.filter((e) => e.event === 'proxy_models_failed').map((e) => e.provider).sort()).toEqual(['bomb', 'zs']);
  });
});

describe('a model list refused with an error status', () => {
  it('is named by its status, whatever the encoding or size of its body', async () => {
    // 401s, one with a body in an encoding the proxy does not read, one far over the size cap.
    const server = http.createServer((req, res) => {
      if (req.url === '/zs/models') {
        res.writeHead(401, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
        res.end('\x28\xb5\x2f\xfd not really zstd');
      } else {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(Buffer.alloc(9 * 1024 * 1024, 0x20));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const h = await startHarness(() => ({ providers: { zs: { base_url: `${base}/zs` }, big: { base_url: `${base}/big` } } }));
    try {
      expect((await call(h.url, { method: 'GET', path: '/v1/models' })).json.data).toEqual([]);
      const failed = (prefix: string) => h.logs.find((e) => e.event === 'proxy_models_failed' && e.provider === prefix)?.error;
      await eventually(() => failed('zs') !== undefined && failed('big') !== undefined, 'both failures logged');
      expect([failed('zs'), failed('big')]).toEqual(['HTTP 401', 'HTTP 401']);
    } finally {
      await h.close();
      await new Promise((r) => server.close(r));
    }
  });
});

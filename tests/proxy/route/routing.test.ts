// Routing beyond one prefix: aliases with ordered fallback before the first byte,
// Retry-After resting a provider, default_provider, and providers bound to a tunnel
// (here through an injected lookup; tests/e2e/proxy/proxy-tunnel.test.ts has the real one).
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { TunnelView } from '../../../src/proxy/index.js';
import { call, chat, eventually, open, startHarness, type Harness } from '../harness.js';
import { deadPort } from '../mock-upstream.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const events = (name: string) => h!.logs.filter((e) => e.event === name);
const sentModels = () => h!.mock.received.map((r) => r.json?.model);

describe('aliases and fallback', () => {
  it('an alias names one target or several tried in order; the next one answers when the first is unreachable', async () => {
    const dead = await deadPort();
    h = await startHarness((base) => ({
      providers: { down: { base_url: `http://127.0.0.1:${dead}/v1` }, up: { base_url: base } },
      aliases: { 'gpt-4o-mini': 'up:llama3:8b', fast: ['down:llama3:8b', 'up:llama3:8b'] },
    }));
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'x', maxRetries: 0 });
    expect((await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).model).toBe('llama3:8b');
    const r = await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]?.message.content).toBe('hello from the mock');
    expect(events('proxy_fallback')).toMatchObject([{ provider: 'down', reason: 'unreachable', error: 'ECONNREFUSED', next: 'up' }]);
    await eventually(() => events('proxy_request').length === 2, 'two request lines');
    expect(events('proxy_request')[1]).toMatchObject({ model: 'fast', provider: 'up', status: 200, fallbacks: [{ provider: 'down', reason: 'unreachable' }] });
  });

  it('a 5xx or a 429 from one target sends the request to the next; the last target\'s answer is passed on as it is', async () => {
    h = await startHarness((base) => ({
      providers: { a: { base_url: base }, b: { base_url: base } },
      aliases: { pair: ['a:busy:503:-', 'b:llama3:8b'], rate: ['a:busy:429:-', 'b:llama3:8b'], bad: ['a:busy:500:-', 'b:error:503'] },
    }));
    expect((await call(h.url, { body: chat('pair') })).status).toBe(200);
    expect((await call(h.url, { body: chat('rate') })).status).toBe(200);
    const last = await call(h.url, { body: chat('bad') });
    expect(last.status).toBe(503);
    expect(last.json).toEqual({ error: { message: 'mock error 503', type: 'mock_error', param: null, code: 'mock_code' } });
    expect(sentModels()).toEqual(['busy:503:-', 'llama3:8b', 'busy:429:-', 'llama3:8b', 'busy:500:-', 'error:503']);
    expect(events('proxy_fallback').map((e) => [e.reason, e.status])).toEqual([['status_5xx', 503], ['status_429', 429], ['status_5xx', 500]]);
  });

  it('a target passed over for its 5xx is let go at once: its exchange is aborted, not left to finish its body', async () => {
    h = await startHarness((base) => ({ providers: { a: { base_url: base }, b: { base_url: base } }, aliases: { m: ['a:error-head:503', 'b:llama3:8b'] } }));
    const r = await call(h.url, { body: chat('m') });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('llama3:8b');
    expect(sentModels()).toEqual(['error-head:503', 'llama3:8b']);
    expect(await h.mock.received[0]!.ended).toBe('client_closed');
    expect(events('proxy_fallback')[0]).toMatchObject({ provider: 'a', reason: 'status_5xx', status: 503 });
  });

  it('a target that does not answer within its timeout is passed over', async () => {
    h = await startHarness((base) => ({
      providers: { slow: { base_url: base, timeout: 0.2 }, quick: { base_url: base } },
      aliases: { m: ['slow:hang', 'quick:llama3:8b'] },
    }));
    const r = await call(h.url, { body: chat('m') });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('llama3:8b');
    expect(await h.mock.received[0]!.ended).toBe('client_closed');
    expect(events('proxy_fallback')[0]).toMatchObject({ provider: 'slow', reason: 'timeout' });
  });

  it('once a byte has reached the client there is no fallback: a stream that dies ends with the error event', async () => {
    h = await startHarness((base) => ({ providers: { a: { base_url: base }, b: { base_url: base } }, aliases: { s: ['a:die-stream', 'b:llama3:8b'] } }));
    const x = open(h.url, chat('s', { stream: true }));
    expect(await x.done).toBe('end');
    expect(x.text()).toContain('upstream_disconnected');
    expect(sentModels()).toEqual(['die-stream']);
  });

  it('Retry-After rests a provider: skipped while another target can answer, tried again after; a last target is asked even while it rests', async () => {
    let now = 1_000_000;
    h = await startHarness(
      (base) => ({ providers: { a: { base_url: base }, b: { base_url: base } }, aliases: { m: ['a:busy:429:30', 'b:llama3:8b'], only: 'a:llama3:8b' } }),
      { now: () => now },
    );
    expect((await call(h.url, { body: chat('m') })).status).toBe(200);
    expect((await call(h.url, { body: chat('m') })).status).toBe(200);
    // The second request went straight to b.
    expect(sentModels()).toEqual(['busy:429:30', 'llama3:8b', 'llama3:8b']);
    expect(events('proxy_fallback')[1]).toMatchObject({ provider: 'a', reason: 'resting' });
    // With no other target the provider itself answers: a client that retries reaches it.
    expect((await call(h.url, { body: chat('only') })).status).toBe(200);
    expect(h.mock.received.length).toBe(4);
    now += 31_000;
    expect((await call(h.url, { body: chat('m') })).status).toBe(200);
    // The rest is over: a is asked again first (and says 429 again), then b.
    expect(sentModels().slice(4)).toEqual(['busy:429:30', 'llama3:8b']);
  });

  it('GET /v1/models lists the aliases with the providers\' models', async () => {
    h = await startHarness((base) => ({ providers: { up: { base_url: base } }, aliases: { fast: ['up:llama3:8b', 'up:qwen2'] } }));
    const r = await call(h.url, { method: 'GET', path: '/v1/models' });
    expect(r.json.data.map((m: { id: string }) => m.id)).toEqual(['up:llama3:8b', 'up:qwen2', 'fast']);
    expect(r.json.data[2]).toEqual({ id: 'fast', object: 'model', created: 0, owned_by: 'alias', targets: ['up:llama3:8b', 'up:qwen2'] });
  });
});

describe('default_provider', () => {
  it('takes bare names (whole, colons included); without it they are 404 model_not_found', async () => {
    h = await startHarness((base) => ({ providers: { gpu1: { base_url: base } }, default_provider: 'gpu1' }));
    expect((await call(h.url, { body: chat('llama3:8b') })).status).toBe(200);
    expect((await call(h.url, { body: chat('gpu1:qwen2') })).status).toBe(200);
    expect(sentModels()).toEqual(['llama3:8b', 'qwen2']);
    h.setConfig({ providers: { gpu1: { base_url: h.mock.baseUrl } } });
    const r = await call(h.url, { body: chat('llama3:8b') });
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'model_not_found', message: expect.stringContaining('no provider "llama3"') });
  });
});

describe('providers bound to a tunnel', () => {
  it('go to the tunnel\'s local end while it is RUNNING, follow it when it moves, and are refused at once naming the tunnel and its state otherwise', async () => {
    let view: TunnelView | undefined;
    const dead = await deadPort();
    h = await startHarness(() => ({ providers: { gpu1: { tunnel: 'llm', path: '/v1' } } }), { tunnel: (name) => (name === 'llm' ? view : undefined) });
    view = { state: 'RUNNING', localHost: '127.0.0.1', localPort: h.mock.port };
    expect((await call(h.url, { body: chat('gpu1:llama3:8b') })).status).toBe(200);
    expect(h.mock.received[0]!.url).toBe('/v1/chat/completions');

    view = { state: 'RETRYING', localHost: '127.0.0.1', localPort: h.mock.port };
    const refused = await call(h.url, { body: chat('gpu1:llama3:8b') });
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'tunnel_not_running', message: "provider \"gpu1\" is the local end of tunnel 'llm', which is RETRYING, not RUNNING" });
    expect(h.mock.received.length).toBe(1);

    // Moved (a local_port edit): the next request follows it.
    view = { state: 'RUNNING', localHost: '127.0.0.1', localPort: dead };
    const moved = await call(h.url, { body: chat('gpu1:llama3:8b') });
    expect(moved.status).toBe(502);
    expect(moved.json.error.message).toContain(`127.0.0.1:${dead}`);

    view = undefined;
    expect((await call(h.url, { body: chat('gpu1:x') })).json.error.code).toBe('tunnel_unknown');
  });

  it('a stopped tunnel sends an alias to its next target', async () => {
    h = await startHarness((base) => ({ providers: { gpu1: { tunnel: 'llm' }, cloud: { base_url: base } }, aliases: { m: ['gpu1:llama3:8b', 'cloud:llama3:8b'] } }), {
      tunnel: () => ({ state: 'STOPPED', localHost: '127.0.0.1', localPort: 1 }),
    });
    expect((await call(h.url, { body: chat('m') })).status).toBe(200);
    expect(events('proxy_fallback')[0]).toMatchObject({ provider: 'gpu1', reason: 'tunnel_down', why: expect.stringContaining('STOPPED') });
  });

  it('where no tunnels run (tunnel-manager proxy) they are refused with a message saying so', async () => {
    h = await startHarness(() => ({ providers: { gpu1: { tunnel: 'llm' } } }));
    const r = await call(h.url, { body: chat('gpu1:llama3:8b') });
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('tunnel_unavailable');
    expect(r.json.error.message).toContain('tunnel-manager proxy');
  });
});

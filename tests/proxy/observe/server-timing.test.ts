// The proxy's own time per request, told to clients in `Server-Timing: proxy;dur=<ms>`
// (without the providers' time to their heads) and counted on /metrics, on both
// listeners. Sanity only: non-negative, below the whole exchange, and below the whole
// exchange less the provider's own delay when it made the proxy wait.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { call, chat, startHarness, type Harness, type Listener } from '../harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The proxy's figure in milliseconds; fails the test when the header is missing or malformed. */
function proxyDur(header: string | string[] | null | undefined): number {
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '');
  const m = /(?:^|,\s*)proxy;dur=(\d+(?:\.\d+)?)(?:\s*(?:,|$))/.exec(text);
  if (m === null) throw new Error(`no "proxy;dur=<ms>" in Server-Timing: ${JSON.stringify(header)}`);
  return Number(m[1]);
}

async function timed(fn: () => Promise<{ headers: Record<string, unknown> }>): Promise<{ dur: number; ms: number }> {
  const t0 = performance.now();
  const r = await fn();
  return { dur: proxyDur(r.headers['server-timing'] as string | undefined), ms: performance.now() - t0 };
}

describe.each<Listener>(['proxy', 'daemon'])('Server-Timing on the %s listener', (listener) => {
  it('on a chat answer, a streamed one, a held error, an upstream failure and a local error; the histogram counts them', async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base, api_key: 'sk-test-key-0123456789' }, dead: { base_url: 'http://127.0.0.1:9/v1' } } }), {}, listener);
    const url = h.url;

    const plain = await timed(() => call(url, { body: chat('mock:llama3:8b') }));
    // The provider waited 150 ms before its head: that is not the proxy's time.
    const slow = await timed(() => call(url, { body: chat('mock:slow:150') }));
    expect(slow.dur).toBeLessThanOrEqual(slow.ms - 150);
    // An error answer with the key in use is held back and scrubbed before its head.
    const held = await timed(() => call(url, { body: chat('mock:error:500') }));
    const unreachable = await timed(() => call(url, { body: chat('dead:x') }));
    const local = await timed(() => call(url, { body: chat('nope:x') }));
    for (const t of [plain, slow, held, unreachable, local]) {
      expect(t.dur).toBeGreaterThanOrEqual(0);
      expect(t.dur).toBeLessThan(t.ms);
    }

    // A stream, as the official client reads it: the header comes with the head.
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    const t0 = performance.now();
    const { data: stream, response } = await client.chat.completions.create({ model: 'mock:stream:3:20', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
    let chunks = 0;
    for await (const _ of stream) chunks++;
    const streamMs = performance.now() - t0;
    expect(chunks).toBe(3);
    const streamDur = proxyDur(response.headers.get('server-timing'));
    expect(streamDur).toBeGreaterThanOrEqual(0);
    // Sent with the head, so the 40 ms between the chunks are not in it.
    expect(streamDur).toBeLessThan(streamMs - 40);

    const text = (await call(url, { method: 'GET', path: '/metrics' })).text;
    expect(text).toContain('# TYPE proxy_overhead_seconds histogram');
    expect(text).toMatch(/proxy_overhead_seconds_count\{provider="mock",endpoint="\/chat\/completions"\} 4\n/);
    expect(text).toMatch(/proxy_overhead_seconds_count\{provider="dead",endpoint="\/chat\/completions"\} 1\n/);
    expect(text).toMatch(/proxy_overhead_seconds_count\{provider="none",endpoint="\/chat\/completions"\} 1\n/);
  });

  it('on translated answers too (Messages to a chat provider): whole, after a provider that waited, and streamed', async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base } } }), {}, listener);
    const url = h.url;
    const messages = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], ...extra });
    const whole = await timed(() => call(url, { path: '/v1/messages', body: messages('mock:llama3:8b') }));
    const slow = await timed(() => call(url, { path: '/v1/messages', body: messages('mock:slow:150') }));
    expect(slow.dur).toBeLessThanOrEqual(slow.ms - 150);
    const t0 = performance.now();
    const streamed = await call(url, { path: '/v1/messages', body: messages('mock:stream:3:20', { stream: true }) });
    const streamMs = performance.now() - t0;
    expect(streamed.text).toContain('event: message_stop');
    const streamDur = proxyDur(streamed.headers['server-timing'] as string | undefined);
    expect(streamDur).toBeLessThan(streamMs - 40);
    for (const t of [whole, slow, { dur: streamDur, ms: streamMs }]) {
      expect(t.dur).toBeGreaterThanOrEqual(0);
      expect(t.dur).toBeLessThan(t.ms);
    }
  });
});

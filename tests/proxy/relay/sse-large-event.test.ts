// One server-sent event of several MiB from a real HTTP provider, written in small
// pieces: under 8 MiB it reaches the client whole; over it, the answer ends with the
// client format's error event and the provider's connection is closed, instead of the
// proxy holding it. The framing's cost grows with the bytes, not with their square.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SSE_EVENT_BYTES } from '../../../src/proxy/relay/sse-frames.js';
import { startHarness, type Harness } from '../harness.js';

const MiB = 1024 * 1024;
const PIECE = 4096;

/**
 * A provider whose answer is one event of `<n>` MiB of content (the model name, after the
 * prefix), written PIECE bytes at a time with a turn of the event loop between pieces so
 * that the proxy reads them one by one, then the end of the stream. `/messages` answers
 * in Anthropic's events, anything else in OpenAI chat chunks.
 */
async function bigEventProvider(): Promise<{ url: string; ended: Promise<'finished' | 'closed'>[]; close(): Promise<void> }> {
  const ended: Promise<'finished' | 'closed'>[] = [];
  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const { model } = JSON.parse(Buffer.concat(body).toString('utf8')) as { model: string };
      const content = 'a'.repeat(Math.round(Number(model) * MiB));
      const anthropic = req.url?.endsWith('/messages') === true;
      const event = anthropic
        ? `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${content}"}}\n\n`
        : `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
      const last = anthropic ? 'event: message_stop\ndata: {"type":"message_stop"}\n\n' : 'data: [DONE]\n\n';
      const bytes = Buffer.from(event + last);
      ended.push(new Promise((resolve) => res.on('close', () => resolve(res.writableFinished ? 'finished' : 'closed'))));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let at = 0;
      const next = (): void => {
        if (res.destroyed) return;
        if (at >= bytes.length) return void res.end();
        const ok = res.write(bytes.subarray(at, at + PIECE));
        at += PIECE;
        if (ok) setImmediate(next);
        else res.once('drain', next);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    ended,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The data of an Anthropic `event: error`. */
const anthropicError = (event: string): unknown => JSON.parse(/^event: error\ndata: (.*)$/m.exec(event)?.[1] ?? 'null');

/** A streamed request through the proxy, read to its end: the body, and the CPU time the whole process spent meanwhile. */
function streamed(url: string, path: string, model: string): Promise<{ status: number; text: string; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const body = JSON.stringify({ model, stream: true, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const used = process.cpuUsage(cpu);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), cpuMs: (used.user + used.system) / 1000 });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('one server-sent event of several MiB, in pieces of 4 KiB', () => {
  let provider: Awaited<ReturnType<typeof bigEventProvider>>;
  let h: Harness;
  beforeAll(async () => {
    provider = await bigEventProvider();
    h = await startHarness(() => ({
      default_timeout: 60,
      providers: { big: { base_url: provider.url }, claude: { base_url: provider.url, format: 'anthropic' } },
    }));
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
  });

  it('an event of 7 MiB reaches the client whole, then the end of the stream', async () => {
    const r = await streamed(h.url, '/v1/chat/completions', 'big:7');
    expect(r.status).toBe(200);
    const [event, done, rest] = r.text.split('\n\n');
    expect(JSON.parse(event!.slice('data: '.length)).choices[0].delta.content).toHaveLength(7 * MiB);
    expect([done, rest]).toEqual(['data: [DONE]', '']);
  }, 60_000);

  it('an event of 9 MiB ends an OpenAI chat stream with its error event, and the provider is cut off', async () => {
    const r = await streamed(h.url, '/v1/chat/completions', 'big:9');
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('aaaa');
    expect(r.text).not.toContain('[DONE]');
    expect(r.text.startsWith('data: ')).toBe(true);
    expect(r.text.endsWith('\n\n')).toBe(true);
    expect(JSON.parse(r.text.slice('data: '.length))).toEqual({
      error: { message: expect.stringContaining('over 8 MiB'), type: 'upstream_error', param: null, code: 'upstream_event_too_large' },
    });
    expect(await provider.ended.at(-1)).toBe('closed');
  }, 60_000);

  it('an event of 9 MiB ends an Anthropic stream (passed through) with `event: error`', async () => {
    const r = await streamed(h.url, '/v1/messages', 'claude:9');
    expect(r.text).not.toContain('aaaa');
    expect(r.text).toMatch(/^event: error\ndata: .*\n\n$/);
    expect(anthropicError(r.text)).toEqual({ type: 'error', error: { type: 'api_error', message: 'provider "claude" sent a stream event over 8 MiB; the proxy ends the answer there rather than hold it (upstream_event_too_large)' } });
    expect(await provider.ended.at(-1)).toBe('closed');
  }, 60_000);

  it('an event of 9 MiB from an OpenAI provider ends a translated Messages stream with `event: error`', async () => {
    const r = await streamed(h.url, '/v1/messages', 'big:9');
    expect(r.text).not.toContain('aaaa');
    const last = r.text.split('\n\n').filter((e) => e !== '').at(-1)!;
    expect(last.startsWith('event: error\n')).toBe(true);
    expect(anthropicError(last)).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('provider "big" sent a stream event over 8 MiB') } });
    expect(await provider.ended.at(-1)).toBe('closed');
  }, 60_000);

  it('the cost of an event grows with its size, not with its square', async () => {
    // Warm the code up, then compare a 2 MiB and an 8 MiB-minus-a-little event: linear
    // framing costs about 4 times as much (mock, proxy and client all count), while
    // joining the held bytes with every piece cost 16 times as much and more.
    await streamed(h.url, '/v1/chat/completions', 'big:1');
    const small = await streamed(h.url, '/v1/chat/completions', 'big:2');
    const large = await streamed(h.url, '/v1/chat/completions', `big:${(MAX_SSE_EVENT_BYTES - 64 * 1024) / MiB}`);
    expect(large.text.endsWith('data: [DONE]\n\n')).toBe(true);
    const ratio = large.cpuMs / small.cpuMs;
    expect(ratio, `2 MiB: ${Math.round(small.cpuMs)} ms of CPU, 8 MiB: ${Math.round(large.cpuMs)} ms`).toBeLessThan(9);
  }, 120_000);
});

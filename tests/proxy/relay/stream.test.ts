import net from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, eventually, open, startHarness, type Harness } from '../harness.js';

/** The `data:` payloads of an SSE text, in order. */
const events = (text: string): string[] =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));

describe('streaming, client disconnects and timeouts', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({
      default_timeout: 30,
      providers: {
        mock: { base_url: base },
        quick: { base_url: base, timeout: 0.4 },
        roomy: { base_url: base, timeout: 2 },
        steady: { base_url: base, timeout: 1 },
      },
    }));
  });
  afterAll(() => h.close());

  it('passes each streamed chunk on as it arrives, before the upstream has finished', async () => {
    const at = h.mock.received.length;
    const x = open(h.url, chat('mock:gated-stream', { stream: true }));
    const head = await x.head;
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
    const first = await x.until((t) => t.includes('first'));
    // The upstream is still holding its answer open: what we have was not buffered.
    const upstream = await h.mock.request(at);
    const state = await Promise.race([upstream.ended, new Promise((r) => setTimeout(() => r('open'), 50))]);
    expect(state).toBe('open');
    expect(first).not.toContain('second');
    expect(first).not.toContain('[DONE]');
    h.mock.release();
    expect(await x.done).toBe('end');
    const all = events(x.text());
    expect(all.at(-1)).toBe('[DONE]');
    expect(JSON.parse(all[1]!).choices[0].delta.content).toBe('second');
  });

  it('passes the head of a stream on before its first event', async () => {
    const x = open(h.url, chat('mock:gated-head', { stream: true }));
    const head = await x.head;
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(x.text()).toBe('');
    h.mock.release();
    expect(await x.done).toBe('end');
    expect(events(x.text()).at(-1)).toBe('[DONE]');
  });

  it('relays the SSE bytes unchanged', async () => {
    const x = open(h.url, chat('mock:stream:3:1', { stream: true }));
    await x.done;
    const expected = [0, 1, 2]
      .map((i) => `data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'stream:3:1', choices: [{ index: 0, delta: { content: `c${i} ` }, finish_reason: null }] })}\n\n`)
      .join('');
    expect(x.text()).toBe(`${expected}data: [DONE]\n\n`);
  });

  it('aborts the upstream request when the client leaves before the headers', async () => {
    const at = h.mock.received.length;
    const x = open(h.url, chat('mock:hang'));
    const upstream = await h.mock.request(at);
    x.abort();
    expect(await upstream.ended).toBe('client_closed');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_client_closed' && l.stage === 'waiting'), 'client close logged');
    expect(h.logs.filter((l) => l.event === 'proxy_upstream_error')).toEqual([]);
  });

  it('aborts the upstream request when the client leaves mid-stream', async () => {
    const at = h.mock.received.length;
    const x = open(h.url, chat('mock:stream:1000:20', { stream: true }));
    await x.until((t) => t.includes('c2 '));
    x.abort();
    const upstream = await h.mock.request(at);
    expect(await upstream.ended).toBe('client_closed');
    await eventually(() => h.logs.some((l) => l.event === 'proxy_client_closed' && l.stage === 'relaying'), 'client close logged');
  });

  it('aborts nothing upstream when the client leaves while still sending its body', async () => {
    const at = h.mock.received.length;
    const socket = net.connect(h.proxy.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":');
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await eventually(() => h.logs.some((l) => l.event === 'proxy_client_closed' && l.stage === 'reading_request'), 'client close logged');
    expect(h.mock.received.length).toBe(at);
  });

  it('answers 504 upstream_timeout when the headers do not come in time, and aborts the upstream', async () => {
    const at = h.mock.received.length;
    const x = open(h.url, chat('quick:hang'));
    const head = await x.head;
    expect(head.status).toBe(504);
    // SDKs would otherwise retry it and multiply the wait.
    expect(head.headers['x-should-retry']).toBe('false');
    await x.done;
    expect(JSON.parse(x.text())).toEqual({ error: { message: expect.stringContaining('0.4 s'), type: 'timeout_error', param: null, code: 'upstream_timeout' } });
    expect(await (await h.mock.request(at)).ended).toBe('client_closed');
  });

  it('is not retried by the openai client with its default retries: one 504, one upstream request', async () => {
    const at = h.mock.received.length;
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'unused' });
    const failure = await client.chat.completions.create({ model: 'quick:hang', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    expect(h.mock.received.length - at).toBe(1);
  });

  it('ends a stream that stalls longer than the timeout with an error event and no [DONE]', async () => {
    const at = h.mock.received.length;
    const x = open(h.url, chat('quick:stall-stream', { stream: true }));
    expect((await x.head).status).toBe(200);
    expect(await x.done).toBe('end');
    const all = events(x.text());
    expect(all).toHaveLength(2);
    expect(JSON.parse(all[0]!).choices[0].delta.content).toBe('only ');
    expect(JSON.parse(all[1]!)).toEqual({ error: expect.objectContaining({ type: 'timeout_error', code: 'upstream_timeout' }) });
    expect(x.text()).not.toContain('[DONE]');
    expect(await (await h.mock.request(at)).ended).toBe('client_closed');
  });

  // Gaps far below the timeout (50 ms against 1 s), so a busy machine's pause cannot turn
  // one into a stall; the stream outlasts the timeout, so a timer not re-armed would cut it.
  it('does not cut a long stream that keeps flowing (1.5 s of chunks, 1 s timeout)', async () => {
    const x = open(h.url, chat('steady:stream:30:50', { stream: true }));
    expect(await x.done).toBe('end');
    const all = events(x.text());
    expect(all).toHaveLength(31);
    expect(all.at(-1)).toBe('[DONE]');
  });

  it('does not time out a slow answer that comes within the timeout', async () => {
    const x = open(h.url, chat('roomy:slow:500'));
    expect((await x.head).status).toBe(200);
    expect(await x.done).toBe('end');
    expect(JSON.parse(x.text()).model).toBe('slow:500');
  });

  it('ends a stream whose upstream dies with an error event and no [DONE]', async () => {
    const x = open(h.url, chat('mock:die-stream', { stream: true }));
    expect(await x.done).toBe('end');
    const all = events(x.text());
    expect(JSON.parse(all.at(-1)!)).toEqual({ error: expect.objectContaining({ code: 'upstream_disconnected' }) });
    expect(x.text()).not.toContain('[DONE]');
  });

  it('cuts the connection when a non-streamed body stalls after its headers (a truncated JSON must not look complete)', async () => {
    const x = open(h.url, chat('quick:json-stall'));
    expect((await x.head).status).toBe(200);
    expect(await x.done).toBe('cut');
  });

  it('never hands on half an event: a stream cut mid-event ends after the last whole one, with the error event', async () => {
    const x = open(h.url, chat('mock:cut-event', { stream: true }));
    expect(await x.done).toBe('end');
    const all = events(x.text());
    expect(all).toHaveLength(2);
    expect(JSON.parse(all[0]!).choices[0].delta.content).toBe('whole ');
    expect(JSON.parse(all[1]!)).toEqual({ error: expect.objectContaining({ code: 'upstream_disconnected' }) });
    expect(x.text()).not.toContain('never whole');
  });

  it('gives the openai client the proxy\'s error, not a JSON syntax error, when a stream is cut mid-event', async () => {
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'mock:cut-event', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const got: string[] = [];
    const failure = await (async () => {
      for await (const part of stream) got.push(part.choices[0]?.delta.content ?? '');
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(got).toEqual(['whole ']);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('closed the connection before its response was complete');
  });

  for (const eol of ['lf', 'crlf', 'cr']) {
    it(`relays events with ${eol} line ends byte for byte, each read ending on an event boundary`, async () => {
      const sep = eol === 'crlf' ? '\r\n\r\n' : eol === 'cr' ? '\r\r' : '\n\n';
      const reads: string[] = [];
      const x = open(h.url, chat(`mock:split-events:${eol}`, { stream: true }));
      await x.head;
      let seen = 0;
      const watch = setInterval(() => {
        const t = x.text();
        if (t.length > seen) reads.push(t.slice(seen));
        seen = t.length;
      }, 1);
      expect(await x.done).toBe('end');
      clearInterval(watch);
      const text = x.text();
      expect(text.split(sep).slice(0, -1).map((e) => (e.startsWith('data: {') ? JSON.parse(e.slice(6)).choices[0].delta.content : e))).toEqual(['one', 'two', 'three', 'data: [DONE]']);
      expect(text.endsWith(sep)).toBe(true);
      // The mock wrote 7 bytes at a time, so most of its writes ended mid-event; what
      // the client had at any moment ended on a blank line (with CRLF, its CR ends it).
      let sofar = '';
      for (const r of reads) {
        sofar += r;
        expect(sofar.endsWith(sep) || (eol === 'crlf' && sofar.endsWith('\r\n\r'))).toBe(true);
      }
    });
  }

  it('passes on a last event that lacks only its blank line, with the line added (clients drop an unterminated event)', async () => {
    const x = open(h.url, chat('mock:no-final-blank', { stream: true }));
    expect(await x.done).toBe('end');
    expect(x.text().endsWith('\n\ndata: [DONE]\n\n')).toBe(true);
  });
});

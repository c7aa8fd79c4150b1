// What a provider's answer may not carry to the client: the provider's own key (in a
// header, a 200 body passed on as it arrives, an event, or an error body, as sent or as
// a JSON encoder escapes it), an upstream Content-Length that the proxy's edits to an
// event stream made false, or half an event at a clean end. And a stream cut short is
// recorded as such, in the log line and in `proxy_responses_cut_total`.
//
// The provider here is a raw socket server, so that the framing (Content-Length, chunk
// boundaries, a clean end in the middle of an event) is exactly what each case needs.
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyMetrics } from '../../../src/proxy/index.js';
import { call, chat, eventually, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-A/secret+key==';
const ESCAPED = 'sk-A\\/secret+key==';
const MASK = '*'.repeat(KEY.length);

const head = (status: number, headers: string[]): string => `HTTP/1.1 ${status} X\r\n${headers.join('\r\n')}\r\n\r\n`;
const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const event = (content: string): string => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** What the provider does, by the bare model name it gets. */
const scripts: Record<string, (s: net.Socket) => Promise<void>> = {
  async 'json-200'(s) {
    const body = JSON.stringify({ echo: `Bearer ${KEY}`, x: 1 });
    s.end(head(200, ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`, `www-authenticate: Bearer realm="x", token="${KEY}"`]) + body);
  },
  async 'split-200'(s) {
    const text = `plain text quoting ${KEY} and more`;
    const at = text.indexOf(KEY) + 6;
    s.write(head(200, ['content-type: text/plain', 'transfer-encoding: chunked']) + chunk(text.slice(0, at)));
    await pause(30);
    s.end(chunk(text.slice(at)) + '0\r\n\r\n');
  },
  async 'sse-200'(s) {
    const body = `data: {"choices":[{"delta":{"content":"${ESCAPED}"}}]}\n\ndata: [DONE]\n\n`;
    s.end(head(200, ['content-type: text/event-stream', `content-length: ${Buffer.byteLength(body)}`]) + body);
  },
  async 'error-escaped'(s) {
    const body = `{"error":{"message":"bad key ${ESCAPED}","type":"invalid_request_error"}}`;
    s.end(head(401, ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`, `www-authenticate: Bearer token="${KEY}"`]) + body);
  },
  async 'sse-length-cut'(s) {
    // A declared length the stream never reaches: the provider dies after two events.
    s.write(head(200, ['content-type: text/event-stream', 'content-length: 1000']) + event('tok0 ') + event('tok1 '));
    await pause(30);
    s.destroy();
  },
  async 'sse-half-end'(s) {
    s.write(head(200, ['content-type: text/event-stream', 'transfer-encoding: chunked']) + chunk(event('whole ')));
    await pause(20);
    s.end(chunk('data: {"id":"c","choices":[{"delta":{"content":"half') + '0\r\n\r\n');
  },
  async 'sse-json-no-blank'(s) {
    s.end(head(200, ['content-type: text/event-stream', 'transfer-encoding: chunked']) + chunk(event('first ')) + chunk('data: {"choices":[{"delta":{"content":"last"}}]}\n') + '0\r\n\r\n');
  },
  async 'sse-comment-end'(s) {
    s.end(head(200, ['content-type: text/event-stream', 'transfer-encoding: chunked']) + chunk(event('only ')) + chunk(': keep-alive') + '0\r\n\r\n');
  },
  async 'quote-200'(s) {
    // The key in a link, as Python's quote writes it (slashes kept), and in lower-case hex.
    const body = JSON.stringify({ next: `https://x/?key=${encodeURIComponent(KEY).replaceAll('%2F', '/')}`, again: encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()) });
    s.end(head(200, ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]) + body);
  },
  async 'words-200'(s) {
    const body = JSON.stringify({ content: 'Start it with: ollama serve', system_fingerprint: 'fp_ollama' });
    s.end(head(200, ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]) + body);
  },
  async 'echo-short-401'(s) {
    const body = JSON.stringify({ error: { message: 'key ollama refused' } });
    s.end(head(401, ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`, 'www-authenticate: Bearer token="ollama"']) + body);
  },
  async 'error-die'(s) {
    // An error answer cut before its end: held (the key is searched for in it), so nothing reached the client.
    s.write(head(401, ['content-type: application/json', 'content-length: 500']) + '{"error":{"message":"bad');
    await pause(20);
    s.destroy();
  },
  async 'sse-die'(s) {
    s.write(head(200, ['content-type: text/event-stream', 'transfer-encoding: chunked']) + chunk(event('one ')));
    await pause(20);
    s.destroy();
  },
};

async function startProvider(): Promise<{ url: string; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    let buf = '';
    socket.on('error', () => {});
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      const model = (JSON.parse(buf.slice(end + 4, end + 4 + length)) as { model: string }).model;
      buf = '';
      void (scripts[model] ?? (async (s: net.Socket) => void s.destroy()))(socket);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe.each<Listener>(['proxy', 'daemon'])('what an answer carries to the client, on the %s listener', (listener) => {
  let h: Harness;
  let provider: Awaited<ReturnType<typeof startProvider>>;
  const metrics = createProxyMetrics();

  beforeAll(async () => {
    provider = await startProvider();
    h = await startHarness(() => ({ providers: { a: { base_url: provider.url, api_key: KEY }, p: { base_url: provider.url }, o: { base_url: provider.url, api_key: 'ollama' } } }), { metrics }, listener);
  });
  afterAll(async () => {
    await h.close();
    await provider.close();
  });

  const logOf = async (requestId: string): Promise<Record<string, unknown>> => {
    await eventually(() => h.logs.some((l) => l.event === 'proxy_request' && l.request_id === requestId), `the log line of ${requestId}`);
    return h.logs.find((l) => l.event === 'proxy_request' && l.request_id === requestId)!;
  };
  const cutCount = async (provider: string): Promise<number> => {
    const text = await metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`proxy_responses_cut_total{provider="${provider}",endpoint="/chat/completions"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  it('masks the key in a 200 JSON body and in every header, keeping the body\'s length', async () => {
    const r = await call(h.url, { body: chat('a:json-200') });
    expect(r.status).toBe(200);
    expect(r.text).toBe(JSON.stringify({ echo: `Bearer ${MASK}`, x: 1 }));
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.text)));
    expect(r.headers['www-authenticate']).toBe('Bearer realm="x", token="***"');
    expect(JSON.stringify(r.headers)).not.toContain('secret');
  });

  it('masks a key split between two pieces of a body passed on as it arrives', async () => {
    const r = await call(h.url, { body: chat('a:split-200') });
    expect(r.text).toBe(`plain text quoting ${MASK} and more`);
  });

  it('masks the key as a JSON encoder escapes it, in an event and in an error body', async () => {
    const sse = await call(h.url, { body: chat('a:sse-200') });
    expect(sse.text).toBe(`data: {"choices":[{"delta":{"content":"${'*'.repeat(ESCAPED.length)}"}}]}\n\ndata: [DONE]\n\n`);
    const e = await call(h.url, { body: chat('a:error-escaped') });
    expect(e.status).toBe(401);
    expect(e.json.error.message).toBe('bad key ***');
    expect(e.headers['www-authenticate']).toBe('Bearer token="***"');
  });

  it('masks the key URL-encoded as Python\'s quote writes it, and in lower-case hex', async () => {
    const r = await call(h.url, { body: chat('a:quote-200') });
    expect(r.text).not.toMatch(/secret/);
    expect(r.json.next).toMatch(/^https:\/\/x\/\?key=\*+$/);
    expect(r.json.again).toMatch(/^\*+$/);
  });

  it('passes a key-less provider\'s answer byte for byte', async () => {
    const r = await call(h.url, { body: chat('p:json-200') });
    expect(r.text).toBe(JSON.stringify({ echo: `Bearer ${KEY}`, x: 1 }));
    expect(r.headers['www-authenticate']).toBe(`Bearer realm="x", token="${KEY}"`);
  });

  it('leaves the words of an answer alone when the key is a short placeholder, and scrubs it from errors', async () => {
    const r = await call(h.url, { body: chat('o:words-200') });
    expect(r.json).toEqual({ content: 'Start it with: ollama serve', system_fingerprint: 'fp_ollama' });
    const e = await call(h.url, { body: chat('o:echo-short-401') });
    expect(e.json.error.message).toBe('key *** refused');
    expect(e.headers['www-authenticate']).toBe('Bearer token="***"');
  });

  it('gives a whole 502 for an error answer cut before any of it reached the client, not counted as cut', async () => {
    const before = await cutCount('a');
    const r = await call(h.url, { body: chat('a:error-die') });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_disconnected');
    expect(await logOf(String(r.headers['x-request-id']))).toMatchObject({ status: 502, complete: true });
    expect(await cutCount('a')).toBe(before);
  });

  it('drops an event stream\'s Content-Length, so a cut stream ends with the error event the client can read', async () => {
    const before = await cutCount('p');
    const r = await call(h.url, { body: chat('p:sse-length-cut') });
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBeUndefined();
    const events = r.text.split('\n\n').filter((e) => e !== '');
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[2]!.slice('data: '.length)).error.code).toBe('upstream_disconnected');
    expect(await logOf(String(r.headers['x-request-id']))).toMatchObject({ status: 200, complete: false });
    expect(await cutCount('p')).toBe(before + 1);
  });

  it('never passes half an event at a clean end: the whole ones, then the error event, and the answer counts as cut', async () => {
    const before = await cutCount('p');
    const r = await call(h.url, { body: chat('p:sse-half-end') });
    const events = r.text.split('\n\n').filter((e) => e !== '');
    expect(events[0]).toBe(event('whole ').trimEnd());
    expect(r.text).not.toContain('half');
    const error = JSON.parse(events[1]!.slice('data: '.length)).error;
    expect(error).toMatchObject({ code: 'upstream_disconnected' });
    expect(error.message).toContain('ended its stream in the middle of an event');
    expect(r.text).not.toContain('[DONE]');
    expect(await logOf(String(r.headers['x-request-id']))).toMatchObject({ complete: false });
    expect(await cutCount('p')).toBe(before + 1);
  });

  it('passes a whole last event that lacks only its blank line, with the line added; drops a lone comment', async () => {
    const r = await call(h.url, { body: chat('p:sse-json-no-blank') });
    expect(r.text).toBe(`${event('first ')}data: {"choices":[{"delta":{"content":"last"}}]}\n\n`);
    expect(await logOf(String(r.headers['x-request-id']))).toMatchObject({ complete: true });
    const c = await call(h.url, { body: chat('p:sse-comment-end') });
    expect(c.text).toBe(event('only '));
  });

  it('records a stream whose provider died as incomplete', async () => {
    const before = await cutCount('p');
    const r = await call(h.url, { body: chat('p:sse-die') });
    expect(r.text).toContain('upstream_disconnected');
    expect(await logOf(String(r.headers['x-request-id']))).toMatchObject({ status: 200, complete: false });
    expect(await cutCount('p')).toBe(before + 1);
  });
});

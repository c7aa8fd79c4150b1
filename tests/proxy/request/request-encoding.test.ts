/**
 * Request bodies sent with `content-encoding`: decompressed before the checks and the
 * model splice, passed on as the client's own text without the header, the body limit
 * applied to the decompressed size, and a clear error for what cannot be read.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startHarness, type Harness, type Listener } from '../harness.js';

const LIMIT = 64 * 1024;
// Spacing, key order, an escape and a big integer: what the provider must get byte for byte.
const sent = '{ "seed": 9223372036854775807, "model": "mock:llama3:8b", "messages": [{"role": "user", "content": "caf\\u00e9"}] }';
const expected = sent.replace('"mock:llama3:8b"', '"llama3:8b"');

const ENCODINGS: [string, (b: Buffer) => Buffer][] = [
  ['gzip', (b) => zlib.gzipSync(b)],
  ['x-gzip', (b) => zlib.gzipSync(b)],
  ['deflate', (b) => zlib.deflateSync(b)],
  // Raw deflate without the zlib wrapper, as some clients send it.
  ['deflate', (b) => zlib.deflateRawSync(b)],
  ['br', (b) => zlib.brotliCompressSync(b)],
  ['GZIP ', (b) => zlib.gzipSync(b)],
];

describe.each<Listener>(['proxy', 'daemon'])('compressed request bodies through the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base }, claude: { base_url: base, format: 'anthropic' } } }), { maxBodyBytes: LIMIT }, listener);
  });
  afterAll(() => h.close());
  const last = () => h.mock.received[h.mock.received.length - 1]!;

  it.each(ENCODINGS.map(([name, encode], i) => [name, i, encode] as const))('decodes %j (case %i) and passes the client\'s text on', async (name, _i, encode) => {
    const before = h.mock.received.length;
    const r = await call(h.url, { body: encode(Buffer.from(sent)), headers: { 'content-encoding': name } });
    expect(r.status).toBe(200);
    expect(h.mock.received.length).toBe(before + 1);
    expect(last().bytes.toString('utf8')).toBe(expected);
    expect(last().headers['content-encoding']).toBeUndefined();
    expect(Number(last().headers['content-length'])).toBe(Buffer.byteLength(expected));
  });

  it('passes `content-encoding: identity` as it is', async () => {
    const r = await call(h.url, { body: sent, headers: { 'content-encoding': 'identity' } });
    expect(r.status).toBe(200);
    expect(last().bytes.toString('utf8')).toBe(expected);
  });

  it('refuses with 413 a body over the limit once decompressed (a small bomb), and nothing reaches the provider', async () => {
    const before = h.mock.received.length;
    const bomb = zlib.gzipSync(Buffer.from(`{"model":"mock:x","messages":[],"pad":"${' '.repeat(LIMIT)}"}`));
    expect(bomb.length).toBeLessThan(LIMIT / 8);
    const r = await call(h.url, { body: bomb, headers: { 'content-encoding': 'gzip' } });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({ code: 'request_too_large', message: `the request body is larger than ${LIMIT} bytes once its gzip is decompressed` });
    expect(h.mock.received.length).toBe(before);
  });

  it('says which encoding does not decode, instead of blaming UTF-8', async () => {
    const r = await call(h.url, { body: Buffer.from(sent), headers: { 'content-encoding': 'gzip' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_encoding');
    expect(r.json.error.message).toMatch(/^the request body does not decode as gzip \(its content-encoding\): /);
    const truncated = zlib.gzipSync(Buffer.from(sent)).subarray(0, 20);
    expect((await call(h.url, { body: truncated, headers: { 'content-encoding': 'gzip' } })).json.error.code).toBe('invalid_encoding');
  });

  it.each(['zstd', 'gzip, br', 'compress'])('refuses %j with 415 naming it', async (name) => {
    const before = h.mock.received.length;
    const r = await call(h.url, { body: sent, headers: { 'content-encoding': name } });
    expect(r.status).toBe(415);
    expect(r.json.error.code).toBe('unsupported_encoding');
    expect(r.json.error.message).toContain(JSON.stringify(name.toLowerCase()));
    expect(h.mock.received.length).toBe(before);
  });

  it('answers /v1/messages in Anthropic\'s error shape', async () => {
    const r = await call(h.url, { path: '/v1/messages', body: Buffer.from('not gzip'), headers: { 'content-encoding': 'gzip', 'anthropic-version': '2023-06-01' } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(r.json.error.message).toContain('(invalid_encoding)');
    const ok = await call(h.url, {
      path: '/v1/messages',
      body: zlib.gzipSync(Buffer.from(JSON.stringify({ model: 'claude:claude-sonnet-4', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }))),
      headers: { 'content-encoding': 'gzip', 'anthropic-version': '2023-06-01' },
    });
    expect(ok.status).toBe(200);
    expect(last().json?.model).toBe('claude-sonnet-4');
  });

  it('serves curl sending a gzip file as the body', async () => {
    const { stdout } = await promisify(execFile)('sh', [
      '-c',
      `printf '%s' "$BODY" | gzip | curl -sS "$URL/v1/chat/completions" -H 'content-type: application/json' -H 'content-encoding: gzip' --data-binary @-`,
    ], { env: { ...process.env, BODY: sent, URL: h.url } });
    expect(JSON.parse(stdout).choices[0].message.content).toBe('hello from the mock');
    expect(last().bytes.toString('utf8')).toBe(expected);
  });
});

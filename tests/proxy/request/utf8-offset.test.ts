/**
 * The byte a "not valid UTF-8" refusal names: the offset where a strict streaming
 * decoder stops, whether the bad byte is at the start, in the middle, at the end,
 * inside a multi-byte character or a character cut short at the end, in a small body
 * or a large one (checked a piece at a time); and the 400 on both listeners.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody } from '../../../src/proxy/request/json-body.js';
import { call, startHarness, type Harness, type Listener } from '../harness.js';

const bytes = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const messageOf = (body: Buffer): string => {
  const r = readJsonBody(body);
  if (r.ok) throw new Error('the body was taken');
  return r.error.message;
};
const named = (offset: number, length: number) => `the request body is not valid UTF-8 (byte ${offset} of ${length})`;

/** Where a strict streaming decoder stops, found one byte at a time: what the message must name. */
function decoderStop(body: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let i = 0; i < body.length; i++) {
    try {
      decoder.decode(body.subarray(i, i + 1), { stream: true });
    } catch {
      return i;
    }
  }
  return body.length;
}

describe('the offset of the first bad byte', () => {
  it('at the start, in the middle and at the end', () => {
    expect(messageOf(bytes([0xff], '{"model":"m"}'))).toBe(named(0, 14));
    expect(messageOf(bytes('{"model":"a', [0xff], 'b"}'))).toBe(named(11, 15));
    expect(messageOf(bytes('{"model":"é"}', [0xff]))).toBe(named(14, 15));
  });

  it('inside a multi-byte character: at the first byte that cannot continue it', () => {
    // "€" is E2 82 AC; each case breaks it at a different byte, after 6 bytes of `{"m":"`.
    expect(messageOf(bytes('{"m":"', [0xe2, 0x28, 0xac], '"}'))).toBe(named(7, 11));
    expect(messageOf(bytes('{"m":"', [0xe2, 0x82, 0x28], '"}'))).toBe(named(8, 11));
    expect(messageOf(bytes('{"m":"', [0xf0, 0x9f, 0x98, 0x41], '"}'))).toBe(named(9, 12));
    // An overlong form and a surrogate: refused at their second byte.
    expect(messageOf(bytes('{"m":"', [0xe0, 0x80, 0x80], '"}'))).toBe(named(7, 11));
    expect(messageOf(bytes('{"m":"', [0xed, 0xa0, 0x80], '"}'))).toBe(named(7, 11));
    // A continuation byte with no character to continue.
    expect(messageOf(bytes('{"m":"é', [0xa9], '"}'))).toBe(named(8, 11));
  });

  it('a character cut short at the end: the length itself', () => {
    expect(messageOf(bytes('{"m":"x"}', [0xe2, 0x82]))).toBe(named(11, 11));
    expect(messageOf(bytes('{"m":"x"}', [0xf0]))).toBe(named(10, 10));
  });

  it('in a body of several pieces, wherever the bad byte falls, as the decoder says', () => {
    // Multi-byte characters on and around the 64 KiB marks, where pieces are cut.
    const text = Buffer.from('ab€😀é'.repeat(13_000), 'utf8');
    const bad = [0xff, 0x80, 0xc3, 0xe2, 0xf0, 0xed];
    const places = [0, 1, 65_535, 65_536, 65_537, 65_538, 131_071, 131_072, 131_074, text.length - 1];
    for (const at of places) {
      for (const b of bad) {
        const body = Buffer.from(text);
        body[at] = b;
        if (Buffer.from(body.toString('utf8'), 'utf8').equals(body)) continue;
        expect(messageOf(body), `0x${b.toString(16)} at ${at}`).toBe(named(decoderStop(body), body.length));
      }
    }
    // It ends with "é" (C3 A9): without its last byte, the character is cut short.
    const cut = text.subarray(0, text.length - 1);
    expect(messageOf(cut)).toBe(named(cut.length, cut.length));
    const last = Buffer.concat([text, Buffer.from([0xff])]);
    expect(messageOf(last)).toBe(named(text.length, last.length));
  });
});

describe.each<Listener>(['proxy', 'daemon'])('a body that is not UTF-8 on the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ providers: { mock: { base_url: base } } }), {}, listener);
  });
  afterAll(() => h.close());

  it('is a 400 that names the byte, and nothing reaches the provider', async () => {
    const body = Buffer.concat([Buffer.from(`{"model":"mock:m","messages":[],"p":"${'a'.repeat(300_000)}`), Buffer.from([0xff]), Buffer.from('"}')]);
    const r = await call(h.url, { body });
    expect(r.status).toBe(400);
    expect(r.headers['x-request-id']).toBeDefined();
    expect(r.json.error).toMatchObject({ code: 'invalid_json', message: named(body.length - 3, body.length) });
    expect(h.mock.received).toHaveLength(0);
  });
});

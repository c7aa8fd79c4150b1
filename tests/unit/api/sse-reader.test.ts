import { describe, expect, it } from 'vitest';
import { createSseReader, type SseItem } from '../../../src/api/sse-reader.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** Every way to cut `data` in two, and in pieces of a few fixed sizes. */
function cuts(data: Uint8Array): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  for (let at = 0; at <= data.length; at++) out.push([data.subarray(0, at), data.subarray(at)]);
  for (const size of [1, 2, 3, 7]) {
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < data.length; i += size) pieces.push(data.subarray(i, i + size));
    out.push(pieces);
  }
  return out;
}

function readAll(pieces: Uint8Array[]): SseItem[] {
  const reader = createSseReader();
  return pieces.flatMap((p) => reader.push(p));
}

describe('server-sent events reader (tunnel-cli and the panel)', () => {
  // LF, CRLF and lone-CR endings, multi-line data, UTF-8 of 2, 3 and 4 bytes.
  const text =
    ': connected\n\nevent: status\ndata: {"name":"café"}\n\n: keep-alive\r\n\r\n' +
    'event: reload\r\ndata: x → y\r\ndata: 🚇\r\n\r\ndata: a\rdata:b\r\r\nevent: empty\n\ndata: plain\n\n';
  const expected: SseItem[] = [
    { kind: 'comment', text: 'connected' },
    { kind: 'event', event: 'status', data: '{"name":"café"}' },
    { kind: 'comment', text: 'keep-alive' },
    { kind: 'event', event: 'reload', data: 'x → y\n🚇' },
    { kind: 'event', event: 'message', data: 'a\nb' },
    { kind: 'event', event: 'message', data: 'plain' },
  ];

  it('gives the same items however the bytes are cut (inside a CRLF, inside a UTF-8 character)', () => {
    const data = bytes(text);
    for (const pieces of cuts(data)) {
      expect(readAll(pieces), `cut at ${pieces.map((p) => p.length).join('+')}`).toEqual(expected);
    }
  });

  it('returns each item with the chunk that completes it; a CR at a chunk end waits for a possible LF', () => {
    const r = createSseReader();
    expect(r.push(bytes(': connected\n\nevent: status\ndata: {"a"'))).toEqual([{ kind: 'comment', text: 'connected' }]);
    expect(r.push(bytes(':1}\n\r'))).toEqual([]);
    // The LF completes the CRLF: one blank line, so one event and no empty one after it.
    expect(r.push(bytes('\nevent: reload\r\ndata: {}\r'))).toEqual([{ kind: 'event', event: 'status', data: '{"a":1}' }]);
    expect(r.push(bytes('\n\r\n'))).toEqual([{ kind: 'event', event: 'reload', data: '{}' }]);
    const euro = bytes('data: €\n\n');
    expect(r.push(euro.subarray(0, 7))).toEqual([]);
    expect(r.push(euro.subarray(7))).toEqual([{ kind: 'event', event: 'message', data: '€' }]);
  });
});

describe('server-sent events reader, on large events', () => {
  it('reads an event of 4 MiB in 1 KiB pieces in time linear in its bytes (each line joined once)', () => {
    const data = JSON.stringify({ content: 'x'.repeat(4 * 1024 * 1024) });
    const event = bytes(`event: status\ndata: ${data}\n\n`);
    const r = createSseReader();
    const started = performance.now();
    const got: SseItem[] = [];
    for (let i = 0; i < event.length; i += 1024) got.push(...r.push(event.subarray(i, i + 1024)));
    expect(got).toEqual([{ kind: 'event', event: 'status', data }]);
    // Re-reading what is held with every piece (4,096 pieces of up to 4 MiB) takes minutes; this takes milliseconds.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('reads 400,000 lines ended by CR in one chunk in time linear in its bytes', () => {
    const r = createSseReader();
    const started = performance.now();
    const got = r.push(bytes(`${'data: x\r'.repeat(400_000)}\r\n`));
    expect(got).toHaveLength(1);
    expect((got[0] as { data: string }).data).toHaveLength(2 * 400_000 - 1);
    // Looking for the next LF from every CR again (eventsource-parser) took 4 s for half as many.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('skips an event over its limit whole, and reads the ones after it', () => {
    const r = createSseReader(100);
    const text = `data: small\n\ndata: ${'x'.repeat(60)}\ndata: ${'y'.repeat(60)}\n\n: kept\n\ndata: ${'z'.repeat(200)}\nevent: big\n\ndata: after\n\n`;
    for (const size of [1, 5, 1000]) {
      const reader = createSseReader(100);
      const data = bytes(text);
      const got: SseItem[] = [];
      for (let i = 0; i < data.length; i += size) got.push(...reader.push(data.subarray(i, i + size)));
      expect(got, `pieces of ${size}`).toEqual([
        { kind: 'event', event: 'message', data: 'small' },
        { kind: 'comment', text: 'kept' },
        { kind: 'event', event: 'message', data: 'after' },
      ]);
    }
    expect(r.push(bytes('data: ok\n\n'))).toEqual([{ kind: 'event', event: 'message', data: 'ok' }]);
  });

  it('drops a byte order mark at the start of the stream only', () => {
    const r = createSseReader();
    expect(r.push(Uint8Array.of(0xef, 0xbb, 0xbf, ...bytes('data: a\n\ndata: \uFEFFb\n\n')))).toEqual([
      { kind: 'event', event: 'message', data: 'a' },
      { kind: 'event', event: 'message', data: '\uFEFFb' },
    ]);
  });
});

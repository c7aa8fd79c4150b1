import { describe, expect, it } from 'vitest';
import { createSseReader, type SseItem } from '../../src/api/sse-reader.js';

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

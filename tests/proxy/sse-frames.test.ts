import { describe, expect, it } from 'vitest';
import { createSseFrames } from '../../src/proxy/sse-frames.js';

/** Feeds `text` in pieces of `size` bytes; returns what was handed on, piece by piece, and what is held at the end. */
function feed(text: string, size: number): { out: string[]; rest: string } {
  const frames = createSseFrames();
  const bytes = Buffer.from(text);
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    const got = frames.push(bytes.subarray(i, i + size));
    if (got !== null) out.push(got.toString());
  }
  return { out, rest: frames.rest()?.toString() ?? '' };
}

describe('SSE framing', () => {
  for (const [name, eol] of [['LF', '\n'], ['CRLF', '\r\n'], ['CR', '\r']] as const) {
    it(`hands on only whole events, with ${name} line ends, however the bytes are split`, () => {
      const events = [`data: {"a":"é😀"}${eol}${eol}`, `event: x${eol}data: 1${eol}data: 2${eol}${eol}`, `: comment${eol}${eol}`];
      const text = events.join('') + 'data: {"half';
      for (let size = 1; size <= text.length; size++) {
        const { out, rest } = feed(text, size);
        expect(out.join('') + rest).toBe(text);
        expect(rest).toBe('data: {"half');
        // Every piece ends where an event ends (with CRLF, the blank line's CR already
        // ends it: its LF may come with the next piece).
        let at = 0;
        const ends = new Set(events.map((e) => (at += Buffer.byteLength(e))));
        if (eol === '\r\n') for (const e of [...ends]) ends.add(e - 1);
        let sent = 0;
        for (const piece of out) {
          sent += Buffer.byteLength(piece);
          expect(ends.has(sent)).toBe(true);
        }
      }
    });
  }

  it('treats CR LF split across reads as one line end, not a blank line', () => {
    const frames = createSseFrames();
    expect(frames.push(Buffer.from('data: 1\r'))).toBeNull();
    expect(frames.push(Buffer.from('\ndata: 2\r\n'))).toBeNull();
    expect(frames.push(Buffer.from('\r\n'))?.toString()).toBe('data: 1\r\ndata: 2\r\n\r\n');
  });

  it('passes a chunk of whole events through as the same buffer', () => {
    const frames = createSseFrames();
    const chunk = Buffer.from('data: 1\n\ndata: 2\n\n');
    expect(frames.push(chunk)).toBe(chunk);
    expect(frames.rest()).toBeNull();
  });
});

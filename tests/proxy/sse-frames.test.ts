import { describe, expect, it } from 'vitest';
import { createSseFrames, streamTail } from '../../src/proxy/relay/sse-frames.js';

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

describe('the tail of a stream that ends between events', () => {
  it('is nothing, a whole event missing its blank line, or half an event', () => {
    expect(streamTail(null)).toEqual({ kind: 'none' });
    expect(streamTail(Buffer.from(': ping'))).toEqual({ kind: 'none' });
    expect(streamTail(Buffer.from('event: ping\n'))).toEqual({ kind: 'none' });
    expect(streamTail(Buffer.from('data: [DONE]'))).toEqual({ kind: 'complete', bytes: Buffer.from('data: [DONE]\n\n') });
    expect(streamTail(Buffer.from('data:[DONE]\r\n'))).toEqual({ kind: 'complete', bytes: Buffer.from('data:[DONE]\r\n\n') });
    // After a lone CR, one LF would only make it a CRLF: the blank line needs two.
    expect(streamTail(Buffer.from('data: {"n":2}\r'))).toEqual({ kind: 'complete', bytes: Buffer.from('data: {"n":2}\r\n\n') });
    expect(streamTail(Buffer.from('event: message_stop\ndata: {"type":"message_stop"}\n'))).toEqual({ kind: 'complete', bytes: Buffer.from('event: message_stop\ndata: {"type":"message_stop"}\n\n') });
    expect(streamTail(Buffer.from('data: {"a":\ndata: 1}\n'))).toEqual({ kind: 'complete', bytes: Buffer.from('data: {"a":\ndata: 1}\n\n') });
    expect(streamTail(Buffer.from('data: {"choices":[{"delta":{"content":"hal'))).toEqual({ kind: 'cut' });
    expect(streamTail(Buffer.from('data: {"a":\n'))).toEqual({ kind: 'cut' });
  });
});

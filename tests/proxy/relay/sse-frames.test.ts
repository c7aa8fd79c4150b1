import { describe, expect, it, vi } from 'vitest';
import { createSseFrames, MAX_SSE_EVENT_BYTES, streamTail } from '../../../src/proxy/relay/sse-frames.js';

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

describe('an event that arrives in many pieces', () => {
  /** Bytes that Buffer.concat copied while `run` ran (the framer's only copy). */
  function copiedBy(run: () => void): number {
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      run();
      return concat.mock.results.reduce((n, r) => n + (r.value as Buffer).length, 0);
    } finally {
      concat.mockRestore();
    }
  }

  it('is copied once, when it completes, however many pieces it came in', () => {
    const event = Buffer.from(`data: ${JSON.stringify({ content: 'x'.repeat(4 * 1024 * 1024) })}\n\n`);
    const frames = createSseFrames();
    const out: Buffer[] = [];
    const copied = copiedBy(() => {
      for (let i = 0; i < event.length; i += 1024) {
        const got = frames.push(event.subarray(i, i + 1024));
        if (got !== null) out.push(got);
      }
    });
    expect(Buffer.concat(out).equals(event)).toBe(true);
    // Joining the held bytes with every piece copied 8 GiB here.
    expect(copied).toBeLessThanOrEqual(event.length);
  });

  it('with CR LF split between pieces, still ends where the blank line does', () => {
    const frames = createSseFrames();
    const got: string[] = [];
    for (const piece of ['data: 1', '\r', '\n', 'data: 2\r', '\n\r', '\n', 'data: 3\r\n']) {
      const out = frames.push(Buffer.from(piece));
      if (out !== null) got.push(out.toString());
    }
    expect(got).toEqual(['data: 1\r\ndata: 2\r\n\r', '\n']);
    expect(frames.rest()?.toString()).toBe('data: 3\r\n');
  });
});

describe('an event over the limit', () => {
  const LIMIT = 1000;
  const eventOf = (bytes: number) => `data: ${'x'.repeat(bytes - 'data: '.length - 2)}\n\n`;

  it('of exactly the limit passes; one byte more overflows, in pieces or in one', () => {
    for (const size of [1, 7, 64, 2000]) {
      const at = feedLimited(eventOf(LIMIT), size, LIMIT);
      expect(at).toEqual({ out: eventOf(LIMIT), overflowed: false });
      expect(feedLimited(eventOf(LIMIT + 1), size, LIMIT)).toEqual({ out: '', overflowed: true });
    }
  });

  it('is let go as soon as it is past the limit, not when it ends', () => {
    const frames = createSseFrames(LIMIT);
    expect(frames.push(Buffer.from(`data: ${'x'.repeat(LIMIT)}`))).toBeNull();
    expect(frames.overflowed()).toBe(true);
    expect(frames.rest()).toBeNull();
    expect(frames.push(Buffer.from('\n\ndata: 2\n\n'))).toBeNull();
  });

  it('leaves the whole events before it, in the same piece, handed on', () => {
    const frames = createSseFrames(LIMIT);
    const out = frames.push(Buffer.from(`data: 1\n\ndata: 2\n\n${eventOf(LIMIT + 1)}data: 3\n\n`));
    expect(out?.toString()).toBe('data: 1\n\ndata: 2\n\n');
    expect(frames.overflowed()).toBe(true);
  });

  it('is 8 MiB by default', () => {
    expect(MAX_SSE_EVENT_BYTES).toBe(8 * 1024 * 1024);
    const frames = createSseFrames();
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let pushed = 0;
    while (!frames.overflowed()) {
      frames.push(piece);
      pushed += piece.length;
    }
    expect(pushed).toBe(MAX_SSE_EVENT_BYTES + piece.length);
  });
});

/** What `text` fed in pieces of `size` to a framer of `limit` hands on, and whether it overflowed. */
function feedLimited(text: string, size: number, limit: number): { out: string; overflowed: boolean } {
  const frames = createSseFrames(limit);
  const bytes = Buffer.from(text);
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += frames.push(bytes.subarray(i, i + size))?.toString() ?? '';
  return { out, overflowed: frames.overflowed() };
}

import type { ProxyError } from '../errors.js';

/**
 * Cuts a server-sent event stream at event boundaries, so that a client is only ever
 * handed whole events. A provider that dies in the middle of an event would otherwise
 * leave the client with half of it (`SyntaxError: Unterminated string in JSON`), and
 * the proxy's own error event glued to that half could not be read either.
 *
 * An event ends with a blank line; lines end with LF, CRLF or CR (the SSE grammar).
 * The bytes are scanned, not decoded: every byte of those separators is ASCII, and no
 * byte of a multi-byte UTF-8 character is below 0x80.
 * Apart from the clients' reader (api/sse-reader.ts): that one yields decoded events, not the raw bytes and boundaries relayed here.
 *
 * Linear in the bytes: each chunk is scanned once, from where the last one ended (the
 * scan's state carries over), and the pieces of an event still arriving are kept as
 * they came, joined once when the event completes. An event over MAX_SSE_EVENT_BYTES
 * is let go instead of held: the stream has overflowed, and the relay ends the answer
 * with its error event (eventTooLarge).
 */

const LF = 0x0a;
const CR = 0x0d;

/** The largest event held while it arrives. */
export const MAX_SSE_EVENT_BYTES = 8 * 1024 * 1024;

export interface SseFrames {
  /** The whole events that `chunk` completes (with any held bytes before them), or null when it completes none. */
  push(chunk: Buffer): Buffer | null;
  /** The bytes after the last whole event (an event still arriving). */
  rest(): Buffer | null;
  /**
   * An event grew past the limit: its bytes are dropped, push() hands on nothing more,
   * and the answer is to end with the proxy's error event. Checked after each push (the
   * whole events before the large one, in the same chunk, still come out of that push).
   */
  overflowed(): boolean;
}

/** Whether a Content-Type is an event stream's (a JSON answer's is decided without the pattern). */
export function isEventStream(contentType: string): boolean {
  return !contentType.startsWith('application/json') && /^\s*text\/event-stream/i.test(contentType);
}

/** The error that ends an answer whose provider sent an event over MAX_SSE_EVENT_BYTES. */
export const eventTooLarge = (prefix: string): ProxyError => ({
  status: 502,
  type: 'upstream_error',
  code: 'upstream_event_too_large',
  message: `provider "${prefix}" sent a stream event over ${MAX_SSE_EVENT_BYTES / (1024 * 1024)} MiB; the proxy ends the answer there rather than hold it`,
});

export function createSseFrames(limit = MAX_SSE_EVENT_BYTES): SseFrames {
  // The pieces of the event still arriving, as they came, and their length.
  let held: Buffer[] = [];
  let heldBytes = 0;
  let overflow = false;
  // The scan's state at the end of what it has seen: at the start of a line, and
  // whether the last line ended with a CR (an LF right after it belongs to it).
  let lineStart = true;
  let afterCr = false;
  // The last byte handed on was a CR that ended an event: an LF after it goes with it.
  let cutAtCr = false;

  const drop = (): null => {
    overflow = true;
    held = [];
    heldBytes = 0;
    return null;
  };

  return {
    push(chunk) {
      if (overflow || chunk.length === 0) return null;
      const n = chunk.length;
      // The usual case, in O(1): nothing held and the chunk ends with a blank line.
      if (heldBytes === 0 && n <= limit && endsWithBlankLine(chunk)) {
        lineStart = true;
        afterCr = false;
        cutAtCr = false;
        return chunk;
      }
      // Where the bytes handed on end (-1: nowhere yet), and where the event after the last cut began.
      let cut = -1;
      let eventStart = -heldBytes;
      let tooLarge = false;
      // The next CR and LF at or after i, searched for natively and only again once passed (-1: none left).
      let nextCr = -2;
      let nextLf = -2;
      for (let i = 0; i < n; ) {
        if (nextCr !== -1 && nextCr < i) nextCr = chunk.indexOf(CR, i);
        if (nextLf !== -1 && nextLf < i) nextLf = chunk.indexOf(LF, i);
        const at = nextCr === -1 ? nextLf : nextLf === -1 ? nextCr : Math.min(nextCr, nextLf);
        if (at === -1) {
          lineStart = false;
          afterCr = false;
          break;
        }
        if (at > i) {
          lineStart = false;
          afterCr = false;
        }
        const c = chunk[at];
        i = at + 1;
        if (c === LF && afterCr) {
          afterCr = false;
          if (cut === at || (at === 0 && cutAtCr)) cut = eventStart = at + 1;
          continue;
        }
        afterCr = c === CR;
        // A line break at the start of a line is the blank line that ends an event.
        if (lineStart) {
          if (at + 1 - eventStart > limit) {
            tooLarge = true;
            break;
          }
          cut = eventStart = at + 1;
        }
        lineStart = true;
      }
      // The event still arriving, held bytes included, may be over the limit by now.
      if (n - eventStart > limit) tooLarge = true;
      cutAtCr = cut === n && chunk[n - 1] === CR;
      if (cut === -1) {
        if (tooLarge) return drop();
        held.push(chunk);
        heldBytes += n;
        return null;
      }
      // Held bytes are copied once, here, with the event they belong to.
      const whole = heldBytes === 0 ? (cut === n ? chunk : chunk.subarray(0, cut)) : Buffer.concat([...held, chunk.subarray(0, cut)], heldBytes + cut);
      if (tooLarge) {
        drop();
        return whole;
      }
      held = cut === n ? [] : [chunk.subarray(cut)];
      heldBytes = n - cut;
      return whole;
    },
    rest() {
      if (heldBytes === 0) return null;
      if (held.length > 1) held = [Buffer.concat(held, heldBytes)];
      return held[0] ?? null;
    },
    overflowed: () => overflow,
  };
}

/**
 * What to do with the bytes after the last whole event when the provider ends its
 * stream there. Clients drop an event without its blank line (the SSE grammar says
 * so), or choke on half of one (a line reader parsing `data:` JSON). So a tail whose
 * data is whole — JSON, or `[DONE]`, only the final blank line missing — is passed on
 * with that line added; a tail without data (a comment, a field alone) is dropped;
 * any other is half an event, and the stream counts as cut.
 */
export function streamTail(rest: Buffer | null): { kind: 'none' } | { kind: 'complete'; bytes: Buffer } | { kind: 'cut' } {
  if (rest === null) return { kind: 'none' };
  const text = rest.toString('utf8');
  const data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  if (data.length === 0) return { kind: 'none' };
  const value = data.join('\n');
  if (value !== '[DONE]') {
    try {
      JSON.parse(value);
    } catch {
      return { kind: 'cut' };
    }
  }
  // After a LF one more makes the blank line; after a CR a LF would only complete a CRLF, so two.
  const last = rest[rest.length - 1];
  return { kind: 'complete', bytes: Buffer.concat([rest, Buffer.from(last === LF ? '\n' : '\n\n')]) };
}

function endsWithBlankLine(b: Buffer): boolean {
  const n = b.length;
  return n >= 2 && b[n - 1] === LF && (b[n - 2] === LF || (n >= 4 && b[n - 2] === CR && b[n - 3] === LF && b[n - 4] === CR));
}

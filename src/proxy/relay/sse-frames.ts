/**
 * Cuts a server-sent event stream at event boundaries, so that a client is only ever
 * handed whole events. A provider that dies in the middle of an event would otherwise
 * leave the client with half of it (`SyntaxError: Unterminated string in JSON`), and
 * the proxy's own error event glued to that half could not be read either.
 *
 * An event ends with a blank line; lines end with LF, CRLF or CR (the SSE grammar).
 * The bytes are scanned, not decoded: every byte of those separators is ASCII, and no
 * byte of a multi-byte UTF-8 character is below 0x80.
 * Hand-written, unlike the clients' eventsource-parser: that yields decoded events, not the raw bytes and boundaries relayed here.
 */

const LF = 0x0a;
const CR = 0x0d;

export interface SseFrames {
  /** The whole events that `chunk` completes (with any held bytes before them), or null when it completes none. */
  push(chunk: Buffer): Buffer | null;
  /** The bytes after the last whole event (an event still arriving). */
  rest(): Buffer | null;
}

/** Whether a Content-Type is an event stream's (a JSON answer's is decided without the pattern). */
export function isEventStream(contentType: string): boolean {
  return !contentType.startsWith('application/json') && /^\s*text\/event-stream/i.test(contentType);
}

export function createSseFrames(): SseFrames {
  let held: Buffer | null = null;
  // The scan's state at the end of what it has seen: at the start of a line, and
  // whether the last line ended with a CR (an LF right after it belongs to it).
  let lineStart = true;
  let afterCr = false;
  // The last byte handed on was a CR that ended an event: an LF after it goes with it.
  let cutAtCr = false;

  return {
    push(chunk) {
      if (chunk.length === 0) return null;
      // The usual case, in O(1): nothing held and the chunk ends with a blank line.
      if (held === null && endsWithBlankLine(chunk)) {
        lineStart = true;
        afterCr = false;
        cutAtCr = false;
        return chunk;
      }
      const from = held?.length ?? 0;
      const bytes = held === null ? chunk : Buffer.concat([held, chunk]);
      let cut = -1;
      for (let i = from; i < bytes.length; i++) {
        const c = bytes[i];
        if (c === LF && afterCr) {
          afterCr = false;
          if (cut === i || (i === 0 && cutAtCr)) cut = i + 1;
          continue;
        }
        afterCr = c === CR;
        if (c === LF || c === CR) {
          // A line break at the start of a line is the blank line that ends an event.
          if (lineStart) cut = i + 1;
          lineStart = true;
        } else {
          lineStart = false;
        }
      }
      cutAtCr = cut === bytes.length && bytes[cut - 1] === CR;
      if (cut === -1) {
        held = bytes;
        return null;
      }
      held = cut === bytes.length ? null : bytes.subarray(cut);
      return cut === bytes.length ? bytes : bytes.subarray(0, cut);
    },
    rest: () => held,
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

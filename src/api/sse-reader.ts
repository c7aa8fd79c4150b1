/** One server-sent event: its `event:` name ("message" when absent) and joined `data:` lines. */
export interface SseEvent {
  kind: 'event';
  event: string;
  data: string;
}

/** One item of a server-sent event stream: a dispatched event or a `:` comment line. */
export type SseItem = SseEvent | { kind: 'comment'; text: string };

/** Reads a `text/event-stream` body chunk by chunk; each push returns the items that chunk completed. */
export interface SseReader {
  push(chunk: Uint8Array): SseItem[];
}

/**
 * The largest event (or comment line) kept while it arrives. The daemon's events are a
 * few hundred bytes; a larger one is skipped whole, so that a broken or hostile server
 * cannot grow this process.
 */
export const MAX_SSE_ITEM_BYTES = 8 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The client side of GET /events, for tunnel-cli and the panel. Lines end with LF, CRLF
 * or CR and may be split anywhere, inside a CRLF or a UTF-8 character too: the bytes are
 * cut into lines first (every line break byte is ASCII, so each line is whole UTF-8)
 * and each line is decoded once. Linear in the bytes: each chunk is scanned once, and
 * the pieces of a line still arriving are joined once, when it ends. A CR at the end of
 * a chunk waits for the next one, which may begin with its LF. Comments are kept as
 * items: the daemon's `: connected` is how a client knows it is subscribed.
 */
export function createSseReader(limit = MAX_SSE_ITEM_BYTES): SseReader {
  // The line still arriving, as its pieces came, and whether the chunk before ended with its CR.
  let pieces: Uint8Array[] = [];
  let pieceBytes = 0;
  let crPending = false;
  let first = true;
  // The event being read: its name, its data lines, their size; skipping: it grew past the limit.
  let name: string | null = null;
  let data: string[] = [];
  let dataBytes = 0;
  let skipping = false;
  let items: SseItem[] = [];

  const reset = (): void => {
    name = null;
    data = [];
    dataBytes = 0;
  };

  function line(bytes: Uint8Array): void {
    if (first) {
      first = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    }
    if (bytes.length === 0) {
      if (!skipping && data.length > 0) items.push({ kind: 'event', event: name ?? 'message', data: data.join('\n') });
      skipping = false;
      return reset();
    }
    if (skipping) return;
    if (bytes.length + dataBytes > limit) return skip();
    const text = utf8.decode(bytes);
    const colon = text.indexOf(':');
    if (colon === 0) {
      items.push({ kind: 'comment', text: text.slice(text.charCodeAt(1) === 0x20 ? 2 : 1) });
      return;
    }
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? '' : text.slice(text.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1);
    if (field === 'data') {
      data.push(value);
      dataBytes += bytes.length;
    } else if (field === 'event') {
      name = value === '' ? null : value;
    }
    // `id` and `retry` are for reconnecting browsers; the clients here reconnect themselves.
  }

  /** The rest of the event, to its blank line, is let go. */
  function skip(): void {
    skipping = true;
    reset();
  }

  /** The line made of the held pieces and `bytes[from, to)`, joined once. */
  function endLine(bytes: Uint8Array, from: number, to: number): void {
    if (pieceBytes === 0) return line(bytes.subarray(from, to));
    const length = pieceBytes + to - from;
    const parts = [...pieces, bytes.subarray(from, to)];
    pieces = [];
    pieceBytes = 0;
    // A held line is never blank: one past the limit (or in an event being skipped) need not be joined.
    if (skipping) return;
    if (length + dataBytes > limit) return skip();
    line(concat(parts, length));
  }

  /** Keeps a piece of the line still arriving; once past the limit, only its length. */
  function hold(piece: Uint8Array): void {
    if (piece.length === 0) return;
    pieceBytes += piece.length;
    if (skipping || pieceBytes + dataBytes > limit) pieces = [];
    else pieces.push(piece);
  }

  return {
    push(bytes) {
      const n = bytes.length;
      let start = 0;
      if (crPending && n > 0) {
        crPending = false;
        endLine(bytes, 0, 0);
        if (bytes[0] === LF) start = 1;
      }
      // The next CR and LF at or after start, searched for natively and only again once passed (-1: none left).
      let nextCr = -2;
      let nextLf = -2;
      while (start < n) {
        if (nextCr !== -1 && nextCr < start) nextCr = bytes.indexOf(CR, start);
        if (nextLf !== -1 && nextLf < start) nextLf = bytes.indexOf(LF, start);
        const at = nextCr === -1 ? nextLf : nextLf === -1 ? nextCr : Math.min(nextCr, nextLf);
        if (at === -1) break;
        if (bytes[at] === CR && at === n - 1) {
          // Its LF may be the next chunk's first byte.
          hold(bytes.subarray(start, at));
          crPending = true;
          start = n;
          break;
        }
        endLine(bytes, start, at);
        start = at + (bytes[at] === CR && bytes[at + 1] === LF ? 2 : 1);
      }
      if (start < n) hold(bytes.subarray(start));
      const done = items;
      items = [];
      return done;
    },
  };
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

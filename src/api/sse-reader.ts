import { createParser } from 'eventsource-parser';

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
 * The client side of GET /events, for tunnel-cli and the panel: bytes are decoded with a
 * streaming decoder (a chunk may end inside a UTF-8 character) and parsed by
 * eventsource-parser (lines in LF, CRLF or CR, split anywhere). Comments are kept as
 * items: the daemon's `: connected` is how a client knows it is subscribed.
 */
export function createSseReader(): SseReader {
  const decoder = new TextDecoder();
  let items: SseItem[] = [];
  const parser = createParser({
    onEvent: (e) => items.push({ kind: 'event', event: e.event ?? 'message', data: e.data }),
    onComment: (text) => items.push({ kind: 'comment', text }),
  });
  return {
    push(chunk) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      const done = items;
      items = [];
      return done;
    },
  };
}

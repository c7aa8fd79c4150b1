/** One server-sent event: its `event:` name ("message" when absent) and joined `data:` lines. */
export interface SseEvent {
  kind: 'event';
  event: string;
  data: string;
}

/** One item of a server-sent event stream: a dispatched event or a `:` comment line. */
export type SseItem = SseEvent | { kind: 'comment'; text: string };

/**
 * Incremental parser for `text/event-stream`, the client side of GET /events, used by
 * tunnel-cli and the panel. WHATWG rules for the subset the daemon sends: lines end
 * in LF, CRLF or CR; a blank line ends an event; `:` lines are comments (returned, so
 * that a client knows the stream is open); id and retry are ignored. Feed it chunks as
 * they arrive; it returns the items completed by each chunk.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseItem[] {
    this.buffer += chunk;
    const items: SseItem[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for more.
      if (this.buffer[nl] === '\r' && nl + 1 === this.buffer.length) break;
      this.buffer = this.buffer.slice(nl + width);
      const item = this.line(line);
      if (item) items.push(item);
    }
    return items;
  }

  private line(line: string): SseItem | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const item: SseItem = { kind: 'event', event: this.event || 'message', data: this.data.join('\n') };
      this.event = '';
      this.data = [];
      return item;
    }
    if (line.startsWith(':')) return { kind: 'comment', text: line.slice(1).trimStart() };
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return null;
  }
}

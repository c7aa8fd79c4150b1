/** One server-sent event: its `event:` name ("message" when absent) and joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits a text/event-stream into events (WHATWG rules: lines end in LF, CRLF or CR;
 * a blank line ends an event; `:` lines are comments). Feed it chunks; it returns
 * the events each chunk completed.
 */
export class SseParser {
  #buffer = '';
  #event = '';
  #data: string[] = [];

  push(chunk: string): SseEvent[] {
    this.#buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buffer);
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (!m || (m[0] === '\r' && m.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, m.index);
      this.#buffer = this.#buffer.slice(m.index + m[0].length);
      const ev = this.#line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  #line(line: string): SseEvent | null {
    if (line === '') {
      const ev = this.#data.length > 0 ? { event: this.#event || 'message', data: this.#data.join('\n') } : null;
      this.#event = '';
      this.#data = [];
      return ev;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') this.#event = value;
    else if (name === 'data') this.#data.push(value);
    return null;
  }
}

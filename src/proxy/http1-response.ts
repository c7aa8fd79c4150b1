/**
 * An incremental HTTP/1.x response parser for the upstream side of the proxy. Body
 * bytes come out as views of the buffers that arrived (never copied, never
 * re-encoded), as soon as they arrive, so a streamed answer passes straight through.
 *
 *   head ──content-length──▶ length ─────────────────────────────┐
 *     │  ──chunked────────▶ size ⇄ data ▶ data-end … size 0 ▶ trailers ┼─▶ done
 *     │  ──neither────────▶ until-close (ends with the connection) ┘
 *     └─ 1xx: skipped, back to head
 */

/** Where the parsed response goes. */
export interface ResponseSink {
  head(status: number, rawHeaders: string[]): void;
  data(chunk: Buffer): void;
  /** `reusable`: the connection may carry another request (keep-alive, framed body, nothing left over). */
  end(reusable: boolean): void;
}

export interface ResponseParser {
  /** Feeds bytes from the connection; returns an error message when they are not HTTP. */
  push(chunk: Buffer): string | null;
  /** The connection ended: completes an until-close body, else returns what was missing. */
  eof(): string | null;
  /** True once the status line and headers have been read. */
  readonly headSeen: boolean;
}

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 4 * 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: .*)?$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type State =
  | { at: 'head' }
  | { at: 'length'; left: number }
  | { at: 'size' }
  | { at: 'data'; left: number }
  | { at: 'data-end' }
  | { at: 'trailers' }
  | { at: 'until-close' }
  | { at: 'done' };

export function createResponseParser(sink: ResponseSink): ResponseParser {
  let state: State = { at: 'head' };
  let headSeen = false;
  let keepAlive = false;
  // Bytes of an unfinished head, chunk-size line or trailer section.
  let pending: Buffer | null = null;

  function finish(leftover: boolean): void {
    state = { at: 'done' };
    sink.end(keepAlive && !leftover);
  }

  /** Parses one head; returns the state its framing leads to, or an error message. */
  function readHead(text: string): State | string {
    const lines = text.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]!);
    if (m === null) return `not an HTTP/1.x status line: ${JSON.stringify(lines[0]!.slice(0, 80))}`;
    const minor = m[1]!;
    const status = Number(m[2]);
    const raw: string[] = [];
    let length: string | null = null;
    let codings: string | null = null;
    let connection = '';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) return `malformed header line: ${JSON.stringify(line.slice(0, 80))}`;
      const value = line.slice(colon + 1).trim();
      raw.push(name, value);
      switch (name.toLowerCase()) {
        case 'content-length':
          if (!/^\d{1,15}$/.test(value) || (length !== null && length !== value)) return `bad content-length: ${JSON.stringify(value)}`;
          length = value;
          break;
        case 'transfer-encoding':
          codings = codings === null ? value : `${codings}, ${value}`;
          break;
        case 'connection':
          connection += `,${value.toLowerCase()}`;
          break;
      }
    }
    if (status >= 100 && status < 200) {
      // 101 would switch protocols, which the proxy never asks for; other 1xx are interim.
      return status === 101 ? 'unexpected 101 Switching Protocols' : { at: 'head' };
    }
    const tokens = connection.split(',').map((t) => t.trim());
    keepAlive = minor === '1' ? !tokens.includes('close') : tokens.includes('keep-alive');
    headSeen = true;
    sink.head(status, raw);
    if (status === 204 || status === 304) return { at: 'done' };
    if (codings !== null) {
      // A length next to a transfer coding is a smuggling smell: use the coding, then drop the connection.
      if (length !== null) keepAlive = false;
      if (codings.split(',').at(-1)!.trim().toLowerCase() === 'chunked') return { at: 'size' };
      keepAlive = false;
      return { at: 'until-close' };
    }
    if (length !== null) return Number(length) === 0 ? { at: 'done' } : { at: 'length', left: Number(length) };
    keepAlive = false;
    return { at: 'until-close' };
  }

  /** Takes a CRLF-ended line from `buf` at `offset` (joining what is pending); null when it is not complete yet. */
  function takeLine(buf: Buffer, offset: number): { line: string; next: number } | null | string {
    const end = buf.indexOf('\r\n', offset);
    if (end === -1) {
      const rest = buf.subarray(offset);
      pending = pending === null ? Buffer.from(rest) : Buffer.concat([pending, rest]);
      // A CR at the end of `pending` and an LF at the start of the next buffer is still a line end.
      return pending.length > MAX_LINE_BYTES ? 'line too long' : null;
    }
    let line = buf.toString('latin1', offset, end);
    if (pending !== null) {
      line = pending.toString('latin1') + line;
      pending = null;
    }
    return { line, next: end + 2 };
  }

  const parser: ResponseParser = {
    get headSeen() {
      return headSeen;
    },
    push(input) {
      let buf = input;
      let offset = 0;
      // A line split as "...\r" | "\n...": rejoin so indexOf sees the CRLF.
      if (pending !== null && state.at !== 'head' && pending[pending.length - 1] === 13 && buf[0] === 10) {
        buf = Buffer.concat([pending, buf]);
        pending = null;
      }
      while (offset < buf.length) {
        switch (state.at) {
          case 'head': {
            if (pending !== null) {
              buf = Buffer.concat([pending, buf.subarray(offset)]);
              offset = 0;
              pending = null;
            }
            const end = buf.indexOf(CRLF_CRLF, offset);
            if (end === -1) {
              if (buf.length - offset > MAX_HEAD_BYTES) return 'response head larger than 64 KiB';
              pending = Buffer.from(buf.subarray(offset));
              return null;
            }
            const next = readHead(buf.toString('latin1', offset, end));
            if (typeof next === 'string') return next;
            state = next;
            offset = end + 4;
            if (state.at === 'done') {
              finish(offset < buf.length);
              return null;
            }
            break;
          }
          case 'length': {
            const n = Math.min(state.left, buf.length - offset);
            state.left -= n;
            const piece = buf.subarray(offset, offset + n);
            offset += n;
            sink.data(piece);
            if (state.at === 'length' && state.left === 0) finish(offset < buf.length);
            break;
          }
          case 'size': {
            const got = takeLine(buf, offset);
            if (got === null) return null;
            if (typeof got === 'string') return got;
            offset = got.next;
            const hex = got.line.split(';', 1)[0]!.trim();
            if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return `bad chunk size: ${JSON.stringify(got.line.slice(0, 40))}`;
            const size = parseInt(hex, 16);
            state = size === 0 ? { at: 'trailers' } : { at: 'data', left: size };
            break;
          }
          case 'data': {
            const n = Math.min(state.left, buf.length - offset);
            state.left -= n;
            const piece = buf.subarray(offset, offset + n);
            offset += n;
            if (state.left === 0) state = { at: 'data-end' };
            sink.data(piece);
            break;
          }
          case 'data-end': {
            const got = takeLine(buf, offset);
            if (got === null) return null;
            if (typeof got === 'string') return got;
            if (got.line !== '') return 'chunk data longer than its size';
            offset = got.next;
            state = { at: 'size' };
            break;
          }
          case 'trailers': {
            const got = takeLine(buf, offset);
            if (got === null) return null;
            if (typeof got === 'string') return got;
            offset = got.next;
            // Trailer fields are dropped; the empty line ends the message.
            if (got.line === '') finish(offset < buf.length);
            break;
          }
          case 'until-close':
            sink.data(offset === 0 ? buf : buf.subarray(offset));
            return null;
          case 'done':
            return null;
          default:
            return state satisfies never;
        }
      }
      return null;
    },
    eof() {
      switch (state.at) {
        case 'done':
          return null;
        case 'until-close':
          finish(false);
          return null;
        case 'head':
          return headSeen ? 'the connection closed before the response was complete' : 'the connection closed without a response';
        default:
          return 'the connection closed before the response was complete';
      }
    },
  };
  return parser;
}

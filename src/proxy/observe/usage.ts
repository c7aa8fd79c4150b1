import { eventTokens } from './token-estimate.js';
import { readUsageAt, USAGE_KEY, type Usage } from './usage-object.js';

// A plain JSON answer is kept whole up to this size to read its usage from; of a longer
// one, only its first and last WINDOW_BYTES.
const MAX_JSON_BYTES = 1024 * 1024;
const WINDOW_BYTES = 64 * 1024;
// The longest unfinished event line carried from one chunk to the next.
const MAX_LINE_BYTES = 256 * 1024;
const DATA = Buffer.from('data:');
const DONE = Buffer.from('[DONE]');
const [SPACE, LF, CR] = [32, 10, 13];

/** Reads a provider's token counts out of an answer as it passes. */
export interface UsageReader {
  chunk(c: Buffer): void;
  result(): Usage;
  /** The answer's tokens by estimate (eventTokens), from what passed; 0 unless the reader was made `metered`. */
  answerTokens(): number;
}

/**
 * Reads the token counts out of an answer as it passes, without holding it back and
 * without parsing the whole of it: only the `"usage": {…}` objects are parsed — the
 * last of a JSON answer (OpenAI's and Anthropic's alike), or, in an event stream,
 * each one as its line completes (OpenAI's last chat chunk, the Responses API's
 * `response.completed`, Anthropic's `message_start` and `message_delta`; later
 * counts replace earlier ones). A search for `"usage"` gates every parse.
 *
 * `metered`: the answer counts against a client's `tpm`, and is measured as it passes
 * for an estimate in case it reports no usage (its events' sizes; a JSON answer's
 * size). Without it the reader does nothing more per chunk than find the usage.
 */
export function createUsageReader(eventStream: boolean, metered = false): UsageReader {
  return eventStream ? new StreamUsage(metered) : new JsonUsage();
}

/**
 * A JSON answer: its pieces are kept and only the last `"usage"` is read, once, at the
 * end. An answer over MAX_JSON_BYTES (a batch of embeddings easily is) keeps only its
 * first and last WINDOW_BYTES: providers put `usage` at the end (OpenAI, vLLM) or near
 * the start, never in the middle of their data.
 */
class JsonUsage implements UsageReader {
  private readonly usage: Usage = { input: null, output: null };
  private first: Buffer | null = null;
  private more: Buffer[] | null = null;
  private size = 0;
  // Past MAX_JSON_BYTES: the answer's first and (so far) last WINDOW_BYTES.
  private head: Buffer | null = null;
  private tail: Buffer | null = null;

  chunk(c: Buffer): void {
    this.size += c.length;
    if (this.tail !== null) {
      this.tail = lastBytes(Buffer.concat([this.tail, c]), WINDOW_BYTES);
      return;
    }
    if (this.first === null) this.first = c;
    else (this.more ??= []).push(c);
    if (this.size > MAX_JSON_BYTES) {
      const body = this.joined();
      this.head = Buffer.from(body.subarray(0, WINDOW_BYTES));
      this.tail = Buffer.from(lastBytes(body, WINDOW_BYTES));
      this.first = null;
      this.more = null;
    }
  }

  private joined(): Buffer {
    const { first, more } = this;
    if (first === null) return Buffer.alloc(0);
    return more === null ? first : Buffer.concat([first, ...more]);
  }

  answerTokens(): number {
    return this.size === 0 ? 0 : eventTokens(this.size);
  }

  result(): Usage {
    // head and tail are set together, when the body outgrew what is kept whole.
    const windows = this.tail !== null ? (this.head === null ? [this.tail] : [this.tail, this.head]) : this.first !== null ? [this.joined()] : [];
    this.first = this.more = this.head = this.tail = null;
    for (const body of windows) {
      const at = body.lastIndexOf(USAGE_KEY);
      if (at !== -1 && readUsageAt(body, at, this.usage)) break;
    }
    return this.usage;
  }
}

function lastBytes(b: Buffer, n: number): Buffer {
  return b.length <= n ? b : b.subarray(b.length - n);
}

/**
 * An event stream: each `"usage"` is read as the line that holds it completes. Metered,
 * each event is measured too, from one `data:` line to the next (a stream's events
 * have one each; `[DONE]` is not an event of the answer).
 */
class StreamUsage implements UsageReader {
  private readonly usage: Usage = { input: null, output: null };
  private carry: Buffer | null = null;
  // Metered: the bytes seen before the current chunk, where the event under way began (-1: none), and the estimate of the events done.
  private seen = 0;
  private eventAt = -1;
  private tokens = 0;

  constructor(private readonly metered: boolean) {}

  chunk(c: Buffer): void {
    const carry = this.carry;
    const buf = carry === null ? c : Buffer.concat([carry, c]);
    const nl = buf.lastIndexOf(10);
    if (this.metered) this.measure(buf, nl, this.seen - (carry?.length ?? 0));
    this.seen += c.length;
    this.carry = nl === buf.length - 1 ? null : buf.subarray(nl + 1);
    if (this.carry !== null && this.carry.length > MAX_LINE_BYTES) this.carry = null;
    for (let at = buf.indexOf(USAGE_KEY); at !== -1 && at < nl; at = buf.indexOf(USAGE_KEY, at + USAGE_KEY.length)) readUsageAt(buf, at, this.usage);
  }

  /** The `data:` lines that start in the complete lines of `buf` (which begins at the start of a line, `base` bytes into the answer). */
  private measure(buf: Buffer, nl: number, base: number): void {
    for (let at = buf.indexOf(DATA); at !== -1 && at < nl; at = buf.indexOf(DATA, at + DATA.length)) {
      if (at > 0 && buf[at - 1] !== LF && buf[at - 1] !== CR) continue;
      if (this.eventAt >= 0) this.tokens += eventTokens(base + at - this.eventAt);
      let v = at + DATA.length;
      if (buf[v] === SPACE) v++;
      const done = v + DONE.length <= buf.length && buf.compare(DONE, 0, DONE.length, v, v + DONE.length) === 0;
      this.eventAt = done ? -1 : base + at;
    }
  }

  answerTokens(): number {
    return this.eventAt >= 0 ? this.tokens + eventTokens(this.seen - this.eventAt) : this.tokens;
  }

  result(): Usage {
    return this.usage;
  }
}

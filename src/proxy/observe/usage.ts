/** Tokens a provider reported for one request. */
export interface Usage {
  input: number | null;
  output: number | null;
}

// A plain JSON answer is kept whole up to this size to read its usage from; of a longer
// one, only its first and last WINDOW_BYTES.
const MAX_JSON_BYTES = 1024 * 1024;
const WINDOW_BYTES = 64 * 1024;
// The longest unfinished event line carried from one chunk to the next.
const MAX_LINE_BYTES = 256 * 1024;
// A usage object is a few numbers and small detail objects.
const MAX_USAGE_BYTES = 4096;
const USAGE = Buffer.from('"usage"');
const [QUOTE, BACKSLASH, OPEN, CLOSE, COLON] = [34, 92, 123, 125, 58];

/** Reads a provider's token counts out of an answer as it passes. */
export interface UsageReader {
  chunk(c: Buffer): void;
  result(): Usage;
}

/**
 * Reads the token counts out of an answer as it passes, without holding it back and
 * without parsing the whole of it: only the `"usage": {…}` objects are parsed — the
 * last of a JSON answer (OpenAI's and Anthropic's alike), or, in an event stream,
 * each one as its line completes (OpenAI's last chat chunk, the Responses API's
 * `response.completed`, Anthropic's `message_start` and `message_delta`; later
 * counts replace earlier ones). A search for `"usage"` gates every parse.
 */
export function createUsageReader(eventStream: boolean): UsageReader {
  return eventStream ? new StreamUsage() : new JsonUsage();
}

function take(usage: Usage, u: Record<string, unknown>): void {
  const input = u.prompt_tokens ?? u.input_tokens;
  const output = u.completion_tokens ?? u.output_tokens;
  if (typeof input === 'number') usage.input = input;
  if (typeof output === 'number') usage.output = output;
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

  result(): Usage {
    // head and tail are set together, when the body outgrew what is kept whole.
    const windows = this.tail !== null ? (this.head === null ? [this.tail] : [this.tail, this.head]) : this.first !== null ? [this.joined()] : [];
    this.first = this.more = this.head = this.tail = null;
    for (const body of windows) {
      const at = body.lastIndexOf(USAGE);
      const u = at === -1 ? null : usageAt(body, at);
      if (u !== null) {
        take(this.usage, u);
        break;
      }
    }
    return this.usage;
  }
}

function lastBytes(b: Buffer, n: number): Buffer {
  return b.length <= n ? b : b.subarray(b.length - n);
}

/** An event stream: each `"usage"` is read as the line that holds it completes. */
class StreamUsage implements UsageReader {
  private readonly usage: Usage = { input: null, output: null };
  private carry: Buffer | null = null;

  chunk(c: Buffer): void {
    const carry = this.carry;
    const buf = carry === null ? c : Buffer.concat([carry, c]);
    const nl = buf.lastIndexOf(10);
    this.carry = nl === buf.length - 1 ? null : buf.subarray(nl + 1);
    if (this.carry !== null && this.carry.length > MAX_LINE_BYTES) this.carry = null;
    for (let at = buf.indexOf(USAGE); at !== -1 && at < nl; at = buf.indexOf(USAGE, at + USAGE.length)) {
      const u = usageAt(buf, at);
      if (u !== null) take(this.usage, u);
    }
  }

  result(): Usage {
    return this.usage;
  }
}

/** The object after the `"usage"` key at `at`, or null (a `null` value, the word inside a string, a cut line). */
function usageAt(buf: Buffer, at: number): Record<string, unknown> | null {
  if (at > 0 && buf[at - 1] === BACKSLASH) return null;
  let i = at + USAGE.length;
  while (i < buf.length && (buf[i] === 32 || buf[i] === 9)) i++;
  if (buf[i] !== COLON) return null;
  i++;
  while (i < buf.length && (buf[i] === 32 || buf[i] === 9)) i++;
  if (buf[i] !== OPEN) return null;
  const start = i;
  let depth = 0;
  const end = Math.min(buf.length, start + MAX_USAGE_BYTES);
  for (; i < end; i++) {
    const b = buf[i];
    if (b === QUOTE) {
      for (i++; i < end && buf[i] !== QUOTE; i++) if (buf[i] === BACKSLASH) i++;
    } else if (b === OPEN) {
      depth++;
    } else if (b === CLOSE && --depth === 0) {
      try {
        const value: unknown = JSON.parse(buf.toString('utf8', start, i + 1));
        return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
      } catch {
        return null;
      }
    }
  }
  return null;
}

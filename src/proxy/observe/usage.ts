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
const DATA = Buffer.from('data:');
const DONE = Buffer.from('[DONE]');
const [QUOTE, BACKSLASH, OPEN, CLOSE, COLON] = [34, 92, 123, 125, 58];
const [SPACE, TAB, LF, CR] = [32, 9, 10, 13];

/**
 * The estimate of an answer whose provider reported no usage (docs/proxy.md, "Client
 * keys"): about four bytes a token, for the prompt as the provider got it; for the
 * answer, one token per event (a JSON answer is one), plus one per four bytes an event
 * has beyond the framing every event carries (its ids, model, keys: up to about 256
 * bytes), so that a chunk of one token counts one and a chunk of a whole paragraph
 * counts its text.
 */
const BYTES_PER_TOKEN = 4;
const FRAMING_BYTES = 256;

/** The estimated tokens of a prompt of `bytes` (the request body as the provider got it). */
export const promptTokens = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN);

/** The estimated tokens of one answer event (or a JSON answer) of `bytes`. */
export const eventTokens = (bytes: number): number => 1 + Math.ceil(Math.max(0, bytes - FRAMING_BYTES) / BYTES_PER_TOKEN);

// The endpoints whose answers are made of tokens: only theirs are estimated when the provider reports none.
const ESTIMATED = new Set(['/chat/completions', '/completions', '/responses', '/messages', '/embeddings']);

/** Whether an answer of `endpoint` (a route label) without usage is estimated for a client's `tpm`. */
export const estimated = (endpoint: string): boolean => ESTIMATED.has(endpoint);

/** Whether an answer of `endpoint` repeats the usage of one that counted already: a stored response read again (`/responses/{id}`, its events, its cancel). */
export const recounted = (endpoint: string): boolean => endpoint.startsWith('/responses/{id}');

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

  answerTokens(): number {
    return this.size === 0 ? 0 : eventTokens(this.size);
  }

  result(): Usage {
    // head and tail are set together, when the body outgrew what is kept whole.
    const windows = this.tail !== null ? (this.head === null ? [this.tail] : [this.tail, this.head]) : this.first !== null ? [this.joined()] : [];
    this.first = this.more = this.head = this.tail = null;
    for (const body of windows) {
      const at = body.lastIndexOf(USAGE);
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
    for (let at = buf.indexOf(USAGE); at !== -1 && at < nl; at = buf.indexOf(USAGE, at + USAGE.length)) readUsageAt(buf, at, this.usage);
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

/**
 * Reads the object after the `"usage"` key at `at` into `usage`; false when there is
 * none (a `null` value, the word inside a string, a cut line).
 */
function readUsageAt(buf: Buffer, at: number, usage: Usage): boolean {
  if (at > 0 && buf[at - 1] === BACKSLASH) return false;
  let i = at + USAGE.length;
  while (i < buf.length && (buf[i] === 32 || buf[i] === 9)) i++;
  if (buf[i] !== COLON) return false;
  i++;
  while (i < buf.length && (buf[i] === 32 || buf[i] === 9)) i++;
  if (buf[i] !== OPEN) return false;
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
      if (new PlainCounts(buf, start, i + 1).read(usage)) return true;
      try {
        const value: unknown = JSON.parse(buf.toString('utf8', start, i + 1));
        if (typeof value !== 'object' || value === null) return false;
        take(usage, value as Record<string, unknown>);
        return true;
      } catch {
        return false;
      }
    }
  }
  return false;
}

const [ZERO, NINE, COMMA] = [48, 57, 44];
const COUNT_KEYS = new Set(['prompt_tokens', 'input_tokens', 'completion_tokens', 'output_tokens']);
// Up to 15 digits a count is exact as a double.
const MAX_DIGITS = 15;

/**
 * The usage objects providers send, read without JSON.parse (which cost as much as the
 * rest of a request's record): an object whose keys are plain words and whose values
 * are whole numbers or objects of the same kind. That is a part of JSON on which this
 * reader and JSON.parse agree; for anything else `read` answers false and the object
 * is parsed.
 */
class PlainCounts {
  private i: number;
  private prompt: number | null = null;
  private input: number | null = null;
  private completion: number | null = null;
  private output: number | null = null;

  constructor(
    private readonly buf: Buffer,
    start: number,
    private readonly end: number,
  ) {
    this.i = start;
  }

  /** Takes the counts into `usage` as `take` would; false (and `usage` untouched) when the object is not of the plain kind. */
  read(usage: Usage): boolean {
    if (!this.object(true)) return false;
    this.space();
    if (this.i !== this.end) return false;
    const input = this.prompt ?? this.input;
    const output = this.completion ?? this.output;
    if (input !== null) usage.input = input;
    if (output !== null) usage.output = output;
    return true;
  }

  private space(): void {
    const { buf, end } = this;
    let i = this.i;
    while (i < end) {
      const b = buf[i];
      if (b !== SPACE && b !== TAB && b !== LF && b !== CR) break;
      i++;
    }
    this.i = i;
  }

  /** `{ "word": value, … }` from `i`; the top one's counts are noted. */
  private object(top: boolean): boolean {
    const { buf } = this;
    if (buf[this.i] !== OPEN) return false;
    this.i++;
    this.space();
    if (buf[this.i] === CLOSE) {
      this.i++;
      return true;
    }
    for (;;) {
      const key = this.word();
      if (key === null) return false;
      this.space();
      if (buf[this.i] !== COLON) return false;
      this.i++;
      this.space();
      if (buf[this.i] === OPEN) {
        // A count given as an object is not a count, and `??` would not pass over it: JSON.parse decides.
        if ((top && COUNT_KEYS.has(key)) || !this.object(false)) return false;
      } else {
        const n = this.count();
        if (n === null) return false;
        if (top) this.note(key, n);
      }
      this.space();
      const b = buf[this.i];
      this.i++;
      if (b === CLOSE) return true;
      if (b !== COMMA) return false;
      this.space();
    }
  }

  private note(key: string, n: number): void {
    if (key === 'prompt_tokens') this.prompt = n;
    else if (key === 'input_tokens') this.input = n;
    else if (key === 'completion_tokens') this.completion = n;
    else if (key === 'output_tokens') this.output = n;
  }

  /** A key of letters, digits and underscores, in quotes; null for any other. */
  private word(): string | null {
    const { buf, end } = this;
    if (buf[this.i] !== QUOTE) return null;
    const from = this.i + 1;
    let i = from;
    for (; i < end; i++) {
      const b = buf[i] ?? 0;
      if (b === QUOTE) break;
      const plain = (b >= 97 && b <= 122) || (b >= 65 && b <= 90) || (b >= ZERO && b <= NINE) || b === 95;
      if (!plain) return null;
    }
    if (i === from || i >= end) return null;
    this.i = i + 1;
    return buf.toString('latin1', from, i);
  }

  /** A whole number as JSON writes one (no sign, fraction, exponent or leading zero); null for any other value. */
  private count(): number | null {
    const { buf, end } = this;
    const from = this.i;
    let n = 0;
    let i = from;
    for (; i < end; i++) {
      const b = buf[i] ?? 0;
      if (b < ZERO || b > NINE) break;
      n = n * 10 + (b - ZERO);
    }
    const digits = i - from;
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && buf[from] === ZERO)) return null;
    // A fraction or exponent follows: JSON.parse reads that one.
    const next = buf[i];
    if (next === 46 || next === 101 || next === 69) return null;
    this.i = i;
    return n;
  }
}

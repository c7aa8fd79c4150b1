/**
 * The `"usage": {…}` object of a provider's answer, read where a search for its key
 * found it (usage.ts searches): the plain kind every provider sends without
 * JSON.parse, any other kind with it.
 */

/** Tokens a provider reported for one request. */
export interface Usage {
  input: number | null;
  output: number | null;
}

// A usage object is a few numbers and small detail objects.
const MAX_USAGE_BYTES = 4096;
/** The key searched for; readUsageAt reads the object after it. */
export const USAGE_KEY = Buffer.from('"usage"');
const [QUOTE, BACKSLASH, OPEN, CLOSE, COLON] = [34, 92, 123, 125, 58];
const [SPACE, TAB, LF, CR] = [32, 9, 10, 13];

function take(usage: Usage, u: Record<string, unknown>): void {
  const input = u.prompt_tokens ?? u.input_tokens;
  const output = u.completion_tokens ?? u.output_tokens;
  if (typeof input === 'number') usage.input = input;
  if (typeof output === 'number') usage.output = output;
}

/**
 * Reads the object after the `"usage"` key at `at` into `usage`; false when there is
 * none (a `null` value, the word inside a string, a cut line).
 */
export function readUsageAt(buf: Buffer, at: number, usage: Usage): boolean {
  if (at > 0 && buf[at - 1] === BACKSLASH) return false;
  let i = at + USAGE_KEY.length;
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

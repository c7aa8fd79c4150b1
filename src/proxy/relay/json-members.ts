/**
 * The members of one JSON object in a buffer, found by walking its bytes as a lexer
 * would (strings with their escapes, the nesting of objects and arrays), so that one
 * member can be edited and every other byte left as it is: integers above 2^53, key
 * order, escapes and spacing. route/json-splice.ts does the same for a request's
 * `model`; this is the relay's, which edits `stream_options` on the way to a provider
 * and `usage` on the way back (relay/ sits below route/). A byte walk is enough because
 * every structural character of JSON is ASCII and no byte of a multi-byte UTF-8
 * sequence is below 0x80. Text that is not a JSON object gives null, never a throw:
 * a provider's events are not checked before they get here.
 */

const [QUOTE, BACKSLASH, COLON, COMMA] = [0x22, 0x5c, 0x3a, 0x2c];
const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x7b, 0x7d, 0x5b, 0x5d];

/** One member: where its key starts (the opening quote), and where its value starts and ends (exclusive). */
export interface Member {
  name: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** The index after the string literal whose opening quote is at `open`; -1 when it does not end before `end`. */
function stringEnd(b: Uint8Array, open: number, end: number): number {
  // From quote to quote (a long text or a base64 image is one search), not byte by byte.
  for (let i = open + 1; ; ) {
    const q = b.indexOf(QUOTE, i);
    if (q === -1 || q >= end) return -1;
    // A quote is escaped when an odd number of backslashes precede it.
    let slashes = 0;
    for (let j = q - 1; j > open && b[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** The index after the value that starts at `i`; -1 when there is none before `end`. */
function valueEnd(b: Uint8Array, i: number, end: number): number {
  const first = b[i];
  if (i >= end) return -1;
  if (first === QUOTE) return stringEnd(b, i, end);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next delimiter.
    const from = i;
    while (i < end) {
      const c = b[i];
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) break;
      i++;
    }
    return i === from ? -1 : i;
  }
  let depth = 0;
  while (i < end) {
    const c = b[i];
    if (c === QUOTE) {
      i = stringEnd(b, i, end);
      if (i === -1) return -1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
    i++;
  }
  return -1;
}

/** The key literal at `[start, end)` (quotes included) as the name JSON.parse reads; escapes decoded. */
function keyName(b: Buffer, start: number, end: number): string {
  const slash = b.indexOf(BACKSLASH, start);
  if (slash === -1 || slash >= end) return b.toString('utf8', start + 1, end - 1);
  try {
    return String(JSON.parse(b.toString('utf8', start, end)));
  } catch {
    return '';
  }
}

/** The members of the object that starts (after white space) at `start`, in order, duplicates included; null when `[start, end)` does not hold one. */
export function membersOf(b: Buffer, start = 0, end = b.length): Member[] | null {
  let i = skipSpace(b, start, end);
  if (b[i] !== OPEN_BRACE) return null;
  i = skipSpace(b, i + 1, end);
  const out: Member[] = [];
  if (b[i] === CLOSE_BRACE) return out;
  for (;;) {
    if (b[i] !== QUOTE) return null;
    const keyStart = i;
    const keyEnd = stringEnd(b, i, end);
    if (keyEnd === -1) return null;
    i = skipSpace(b, keyEnd, end);
    if (b[i] !== COLON) return null;
    const valueStart = skipSpace(b, i + 1, end);
    const after = valueEnd(b, valueStart, end);
    if (after === -1) return null;
    out.push({ name: keyName(b, keyStart, keyEnd), keyStart, valueStart, valueEnd: after });
    i = skipSpace(b, after, end);
    if (b[i] === CLOSE_BRACE) return out;
    if (b[i] !== COMMA) return null;
    i = skipSpace(b, i + 1, end);
  }
}

/** Whether the member's value is exactly `literal` (`true`, `null`, `[]` with no space inside). */
export function valueIs(b: Buffer, m: Member, literal: string): boolean {
  return m.valueEnd - m.valueStart === literal.length && b.toString('latin1', m.valueStart, m.valueEnd) === literal;
}

/** The last member named `name` (the one JSON.parse keeps), or undefined. */
export function lastNamed(members: readonly Member[], name: string): Member | undefined {
  for (let i = members.length - 1; i >= 0; i--) if (members[i]?.name === name) return members[i];
  return undefined;
}

/** A replacement of the bytes `[from, to)` by `text`. */
export interface Edit {
  from: number;
  to: number;
  text: string;
}

/** `b` with the edits made (in order of position, none overlapping); every other byte as it was. */
export function edited(b: Buffer, edits: readonly Edit[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const e of edits) {
    parts.push(b.subarray(at, e.from), Buffer.from(e.text, 'utf8'));
    at = e.to;
  }
  parts.push(b.subarray(at));
  return Buffer.concat(parts);
}

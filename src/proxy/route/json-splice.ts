/**
 * Replacing one top-level string member of a JSON body in place, so that everything
 * else reaches the provider byte for byte: integers above 2^53 (which JSON.parse and
 * JSON.stringify would round), key order, escapes, spacing.
 *
 * The caller has already accepted the text with JSON.parse; this only finds where the
 * member's value sits. It walks the bytes as a JSON lexer would (strings with their
 * escapes, nesting of objects and arrays), which is enough because every structural
 * character of JSON is ASCII and no byte of a multi-byte UTF-8 sequence is below
 * 0x80: a byte-level walk never mistakes part of a character for a quote or brace.
 * A regular expression over the text could not tell `"model"` as a key of the top
 * object from the same characters inside a string or a nested object.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Where a string literal that starts at `open` (its opening quote) ends: the index after its closing quote. */
function stringEnd(bytes: Uint8Array, open: number): number {
  let i = open + 1;
  for (;;) {
    const q = bytes.indexOf(QUOTE, i);
    if (q === -1) throw new Error('unterminated string in accepted JSON');
    // A quote is escaped when an odd number of backslashes precede it.
    let slashes = 0;
    for (let j = q - 1; j > open && bytes[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** The index after the value that starts at or after `i` (whitespace skipped by the caller's walk). */
function valueEnd(bytes: Uint8Array, i: number): number {
  const first = bytes[i];
  if (first === QUOTE) return stringEnd(bytes, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: runs to the next delimiter.
    while (i < bytes.length) {
      const c = bytes[i];
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  while (i < bytes.length) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = stringEnd(bytes, i);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
    i++;
  }
  throw new Error('unbalanced value in accepted JSON');
}

// Printable ASCII but the quote and the backslash: JSON.stringify would leave it as it is.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The byte spans `[start, end)` of the values of every top-level member named `key` (duplicates included). */
export function topLevelValueSpans(bytes: Uint8Array, key: string): [number, number][] {
  const spans: [number, number][] = [];
  let i = 0;
  while (isSpace(bytes[i])) i++;
  if (bytes[i] !== OPEN_BRACE) return spans;
  i++;
  for (;;) {
    while (isSpace(bytes[i]) || bytes[i] === COMMA) i++;
    if (i >= bytes.length || bytes[i] === CLOSE_BRACE) return spans;
    const keyStart = i;
    const keyEnd = stringEnd(bytes, keyStart);
    i = keyEnd;
    while (isSpace(bytes[i])) i++;
    if (bytes[i] !== COLON) throw new Error('expected ":" in accepted JSON');
    i++;
    while (isSpace(bytes[i])) i++;
    const start = i;
    i = valueEnd(bytes, i);
    if (sameKey(bytes, keyStart, keyEnd, key)) spans.push([start, i]);
  }
}

/** Whether the key literal at `[start, end)` (quotes included) names `key`; escapes (`"mod\u0065l"`) decoded. */
function sameKey(bytes: Uint8Array, start: number, end: number, key: string): boolean {
  if (end - start === key.length + 2) {
    // The usual case, without allocating: an unescaped ASCII key, compared in place.
    let i = 0;
    while (i < key.length && bytes[start + 1 + i] === key.charCodeAt(i)) i++;
    if (i === key.length) return true;
  }
  // Only a literal with an escape can spell `key` in other bytes; most keys have none.
  let escaped = false;
  for (let i = start + 1; i < end - 1 && !escaped; i++) escaped = bytes[i] === BACKSLASH;
  if (!escaped) return false;
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8')) === key;
}

/**
 * `body` with the value of every top-level member `key` replaced by the JSON string
 * `value`; every other byte unchanged. Every occurrence, because JSON.parse keeps the
 * last of duplicate keys while some providers' parsers keep the first: both must see
 * the new value. `body` must be text JSON.parse accepted as an object; `key` is ASCII.
 */
export function spliceTopLevelString(body: Buffer, key: string, value: string): Buffer {
  const spans = topLevelValueSpans(body, key);
  if (spans.length === 0) return body;
  // A plain ASCII value (nearly every model name) is its own JSON text between quotes.
  const replacement = PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
  const width = Buffer.byteLength(replacement, 'utf8');
  let size = body.length;
  for (const [start, end] of spans) size += width - (end - start);
  // One buffer written in place: this runs for every proxied request.
  const out = Buffer.allocUnsafe(size);
  let from = 0;
  let to = 0;
  for (const [start, end] of spans) {
    to += body.copy(out, to, from, start);
    to += out.write(replacement, to, 'utf8');
    from = end;
  }
  body.copy(out, to, from);
  return out;
}

import { err, ok, type Result } from '../../kernel/result.js';

/**
 * The framing and part headers of a multipart/form-data body, read by the proxy itself
 * and strictly, so that a form whose fields servers could read differently is refused
 * instead of guessed at. Busboy (multipart.ts) keeps the first of two Content-Disposition
 * headers, the first of two `name=` parameters, ignores `name*=`, and skips a part
 * whose disposition is not `form-data`; werkzeug and python-multipart (Starlette,
 * FastAPI, vLLM) keep others. A form where one reader finds `model` in a part another
 * reads as something else would be routed by one model and served by another, so any
 * of these is a refusal here, with what was found:
 *   - a parameter given twice (the body's `boundary`, a part's `name`), or `name*=`;
 *   - a header given twice in a part, or folded over two lines;
 *   - a disposition other than `form-data`, or a field name with a backslash escape;
 *   - the boundary followed by anything but CRLF or `--` (readers cut the part there or not).
 */

/** One part as read here: its field name (null: no Content-Disposition, which no reader takes as a field) and where its content lies. */
export interface RawPart {
  name: string | null;
  start: number;
  end: number;
  /** Its Content-Transfer-Encoding, lower-cased; null when it has none. */
  transferEncoding: string | null;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A header value of the form `value; name=value; name="quoted"` (RFC 9110 §5.6.6), each parameter once. */
export interface Parameters {
  value: string;
  /** By lower-cased name; `escaped` when the quoted string held a backslash escape. */
  params: Map<string, { text: string; escaped: boolean }>;
}

/** Reads `text` as a value with parameters; the error says what is wrong, for a message that names where. */
export function parameters(text: string): Result<Parameters, string> {
  const semi = text.indexOf(';');
  const value = (semi === -1 ? text : text.slice(0, semi)).trim().toLowerCase();
  const params = new Map<string, { text: string; escaped: boolean }>();
  let i = semi === -1 ? text.length : semi;
  const skipSpace = (): void => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  while (i < text.length) {
    skipSpace();
    if (i >= text.length) break;
    if (text[i] !== ';') return err(`expected ";" before ${JSON.stringify(text.slice(i, i + 20))}`);
    i++;
    skipSpace();
    const eq = text.indexOf('=', i);
    const name = (eq === -1 ? text.slice(i) : text.slice(i, eq)).trim().toLowerCase();
    if (eq === -1 || !TOKEN.test(name)) return err(`expected name=value, found ${JSON.stringify(text.slice(i, i + 40))}`);
    i = eq + 1;
    let got: { text: string; escaped: boolean };
    if (text[i] === '"') {
      let out = '';
      let escaped = false;
      i++;
      for (;;) {
        const c = text[i];
        if (c === undefined) return err(`the quoted value of ${name} is not closed`);
        i++;
        if (c === '"') break;
        if (c === '\\') {
          escaped = true;
          out += text[i] ?? '';
          i++;
        } else {
          out += c;
        }
      }
      got = { text: out, escaped };
    } else {
      const start = i;
      while (i < text.length && text[i] !== ';' && text[i] !== ' ' && text[i] !== '\t') i++;
      got = { text: text.slice(start, i), escaped: false };
      if (!TOKEN.test(got.text)) return err(`the value of ${name} is neither a token nor a quoted string: ${JSON.stringify(got.text.slice(0, 40))}`);
    }
    if (params.has(name)) return err(`it gives ${name}= twice`);
    params.set(name, got);
  }
  return ok({ value, params });
}

const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');
const DASH = 0x2d;
const CR = 0x0d;
const LF = 0x0a;

/** The parts of `bytes` split at `boundary`, each one's headers read; an error names the first ambiguity met. */
export function splitParts(bytes: Buffer, boundary: string): Result<RawPart[], string> {
  // A delimiter is CRLF, "--" and the boundary; the first one may open the body without its CRLF.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const parts: RawPart[] = [];
  let at = bytes.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? 0 : bytes.indexOf(delimiter);
  if (at === -1) return err('it holds no boundary line');
  for (;;) {
    // Just after the boundary: "--" closes the form, CRLF opens a part.
    const after = at === 0 ? delimiter.length - 2 : at + delimiter.length;
    if (bytes[after] === DASH && bytes[after + 1] === DASH) return ok(parts);
    if (bytes[after] !== CR || bytes[after + 1] !== LF) {
      return err(`its boundary is followed by ${JSON.stringify(bytes.toString('latin1', after, after + 10))} instead of a line end or "--" (readers end a part there or not)`);
    }
    const headersStart = after + 2;
    // A part without headers has its blank line at once.
    const blank = bytes[headersStart] === CR && bytes[headersStart + 1] === LF ? headersStart - 2 : bytes.indexOf(CRLF2, headersStart);
    const next = bytes.indexOf(delimiter, headersStart);
    if (next === -1) return err('it ends before its closing boundary');
    if (blank === -1 || blank + 4 > next) return err(`part ${parts.length + 1} has no blank line after its headers`);
    const part = readHeaders(bytes.toString('latin1', headersStart, blank), parts.length + 1);
    if (!part.ok) return part;
    parts.push({ ...part.value, start: blank + 4, end: next });
    at = next;
  }
}

/** The headers of part `n` (1-based, for messages): its field name and transfer encoding. */
function readHeaders(block: string, n: number): Result<Omit<RawPart, 'start' | 'end'>, string> {
  const seen = new Set<string>();
  let name: string | null = null;
  let transferEncoding: string | null = null;
  const lines = block === '' ? [] : block.split(CRLF.toString('latin1'));
  // Busboy joins a folded line to the header above it; others take it as a header of its own.
  if (lines.some((line) => line.startsWith(' ') || line.startsWith('\t'))) return err(`part ${n} folds a header over two lines`);
  for (const line of lines) {
    const colon = line.indexOf(':');
    const header = (colon === -1 ? line : line.slice(0, colon)).toLowerCase();
    if (colon === -1 || !TOKEN.test(header)) return err(`part ${n} has a header line that is not "Name: value": ${JSON.stringify(line.slice(0, 60))}`);
    if (seen.has(header)) return err(`part ${n} has two ${header} headers`);
    seen.add(header);
    const value = line.slice(colon + 1).trim();
    if (header === 'content-transfer-encoding') transferEncoding = value.toLowerCase();
    if (header !== 'content-disposition') continue;
    const disposition = parameters(value);
    if (!disposition.ok) return err(`part ${n}'s Content-Disposition cannot be read: ${disposition.error}`);
    const { value: type, params } = disposition.value;
    if (type !== 'form-data') return err(`part ${n}'s Content-Disposition is ${JSON.stringify(type)}, not form-data`);
    if (params.has('name*')) return err(`part ${n} names its field with name*=, which readers take differently; use name="…"`);
    const given = params.get('name');
    if (given?.escaped === true) return err(`part ${n}'s field name holds a backslash escape, which readers take differently`);
    name = given?.text ?? '';
  }
  return ok({ name, transferEncoding });
}

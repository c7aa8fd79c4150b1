/**
 * Keeping a provider's key out of what the client gets. Some providers echo the
 * credential they were sent: in an error message ("Incorrect API key provided: …"), in
 * a `WWW-Authenticate` header, or in a 200 answer that quotes the request. The key is
 * looked for as it was sent and as a JSON or URL encoder would have written it (`\"`,
 * `\\`, `\/` as PHP writes slashes, `%2F`), since an echo usually went through one.
 */

/**
 * The characters each common URL encoder leaves as they are (every other byte of UTF-8
 * becomes %XX): RFC 3986's unreserved set (Python's quote with safe='', quote_plus and
 * urlencode, Go's QueryEscape, PHP's rawurlencode), the same with `/` (Python's quote),
 * JavaScript's encodeURIComponent, form bodies as URLSearchParams and Java's URLEncoder
 * write them, PHP's urlencode, and Go's PathEscape.
 */
const URL_ENCODERS = [/[A-Za-z0-9_.~-]/, /[A-Za-z0-9_.~/-]/, /[A-Za-z0-9_.!~*'()-]/, /[A-Za-z0-9_.*-]/, /[A-Za-z0-9_.-]/, /[A-Za-z0-9_.~$&+:=@-]/];

/**
 * The spellings of `key` to look for, longest first, each once: as sent; as JSON
 * escapes it, with or without `\/` for slashes; and URL-encoded as the encoders above
 * write it, with a space as `%20` or `+`, in upper- or lower-case hex.
 */
export function keySpellings(key: string): string[] {
  const json = JSON.stringify(key).slice(1, -1);
  const forms = new Set([key, json, json.replaceAll('/', '\\/')]);
  for (const keep of URL_ENCODERS) {
    const upper = percentEncoded(key, keep);
    for (const form of [upper, upper.replaceAll('%20', '+')]) {
      forms.add(form);
      forms.add(form.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()));
    }
  }
  return [...forms].filter((f) => f !== '').sort((a, b) => b.length - a.length);
}

/** `text` with every UTF-8 byte of a character outside `keep` written as %XX. */
function percentEncoded(text: string, keep: RegExp): string {
  let out = '';
  for (const ch of text) {
    if (keep.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The shortest key masked in answers other than errors. Local servers take any key,
 * and the placeholders their docs suggest (`ollama`, `EMPTY`, `lm-studio`,
 * `not-needed`) are ordinary words that answers contain: masked there, they would
 * corrupt the text. Error bodies and error headers, where a key is echoed, are
 * scrubbed of keys of any length.
 */
export const MIN_MASKED_KEY_LENGTH = 12;

// Spellings per key, made once per key rather than per request (keys come from the config: a handful).
const cache = new Map<string, { text: string[]; bytes: Buffer[] }>();

function spellingsOf(key: string): { text: string[]; bytes: Buffer[] } {
  let s = cache.get(key);
  if (s === undefined) {
    if (cache.size >= 64) cache.clear();
    const text = keySpellings(key);
    s = { text, bytes: text.map((t) => Buffer.from(t, 'utf8')) };
    cache.set(key, s);
  }
  return s;
}

/** `text` with every spelling of `key` replaced by `***` (for header values and held bodies). */
export function scrubText(text: string, key: string): string {
  let out = text;
  for (const form of spellingsOf(key).text) if (out.includes(form)) out = out.replaceAll(form, '***');
  return out;
}

/** The key masked in answers (not only in errors): one of MIN_MASKED_KEY_LENGTH or more; a shorter one is a placeholder that answers may contain as a word (null). */
export const maskedKey = (key: string | null): string | null => (key !== null && key.length >= MIN_MASKED_KEY_LENGTH ? key : null);

/** Text the proxy wrote whole (a translated answer) with the key blanked out, when it is one that is masked (maskedKey). */
export function maskedText(text: string, key: string | null): string {
  const masked = maskedKey(key);
  return masked !== null && holdsKey(Buffer.from(text), masked) ? scrubText(text, masked) : text;
}

/** Whether `bytes` hold any spelling of `key`. */
export function holdsKey(bytes: Buffer, key: string): boolean {
  return spellingsOf(key).bytes.some((form) => bytes.includes(form));
}

/** The length of the longest tail of `bytes` that begins a spelling of `key` without completing it (0 if none). */
export function keyStartAtEnd(bytes: Buffer, key: string): number {
  const forms = spellingsOf(key).bytes;
  // The spellings come longest first.
  const longest = forms[0]?.length ?? 0;
  for (let n = Math.min(longest - 1, bytes.length); n > 0; n--) {
    const from = bytes.length - n;
    for (const form of forms) {
      if (form.length > n && bytes[from] === form[0] && bytes.subarray(from).equals(form.subarray(0, n))) return n;
    }
  }
  return 0;
}

const STAR = 0x2a;

/**
 * Masks the key in a body that is passed on as it arrives: each spelling found is
 * overwritten with as many `*`, so the body keeps its length (and its
 * Content-Length stays true). A spelling may be split between two pieces, so the
 * tail of a piece that begins one is held back until the next piece (or the end)
 * shows whether it completes it.
 */
export class KeyScrubber {
  private readonly forms: Buffer[];
  private carry: Buffer | null = null;

  constructor(private readonly key: string) {
    this.forms = spellingsOf(key).bytes;
  }

  /** The bytes that may go on now; `last`: nothing follows, so nothing is held back. */
  push(chunk: Buffer, last: boolean): Buffer {
    let bytes = this.carry === null ? chunk : Buffer.concat([this.carry, chunk]);
    this.carry = null;
    let copied = bytes !== chunk;
    for (const form of this.forms) {
      for (let at = bytes.indexOf(form); at !== -1; at = bytes.indexOf(form, at + form.length)) {
        // The provider's buffer is not written to: the first match works on a copy.
        if (!copied) {
          bytes = Buffer.from(bytes);
          copied = true;
        }
        bytes.fill(STAR, at, at + form.length);
      }
    }
    if (last) return bytes;
    const held = keyStartAtEnd(bytes, this.key);
    if (held === 0) return bytes;
    this.carry = bytes.subarray(bytes.length - held);
    return bytes.subarray(0, bytes.length - held);
  }

  /** What is still held back, for the end of the body. */
  flush(): Buffer | null {
    const rest = this.carry;
    this.carry = null;
    return rest;
  }
}

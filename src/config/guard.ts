/**
 * Cheap checks run before the YAML parser sees the text: the parser can run Node out
 * of memory on very deep flow nesting, so size and nesting are bounded first.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_NESTING = 64;

export function guardText(text: string): string | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) return `the file is ${bytes} bytes; the limit is ${MAX_CONFIG_BYTES} bytes (1 MiB)`;
  let depth = 0;
  let quote: string | null = null;
  let comment = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (comment) { if (c === '\n') comment = false; continue; }
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) comment = true;
    else if (c === '[' || c === '{') {
      if (++depth > MAX_NESTING) return `flow collections are nested more than ${MAX_NESTING} levels deep`;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  return null;
}

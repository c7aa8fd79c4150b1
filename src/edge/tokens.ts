import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Secrets that callers present: the daemon API's bearer tokens, the proxy's client
 * keys and the panel's password. One module, so that every surface reads a token list
 * and compares a secret the same way.
 */

/** A token list as TUNNEL_API_TOKEN holds it: comma-separated (rotation), blanks ignored; null when none. */
export function parseTokens(text: string | undefined): string[] | null {
  const tokens = (text ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  return tokens.length > 0 ? tokens : null;
}

/** The token of an `Authorization: Bearer <token>` header (one word, case-insensitive scheme), else null. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return m?.[1] ?? null;
}

/** A secret kept as its SHA-256 digest. */
export type SecretDigest = Buffer;

// Hashing both sides first gives equal-length buffers, so timingSafeEqual can compare
// them and the time taken says nothing about the secret's length or content.
export const digestSecret = (secret: string): SecretDigest => createHash('sha256').update(secret, 'utf8').digest();

/** Constant-time check of `presented` against every digest: no early exit, so the time does not tell which matched. */
export function secretMatches(presented: string, digests: readonly SecretDigest[]): boolean {
  const p = digestSecret(presented);
  let matched = false;
  for (const d of digests) matched = timingSafeEqual(p, d) || matched;
  return matched;
}

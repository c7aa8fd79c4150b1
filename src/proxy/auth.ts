import { createHash, timingSafeEqual } from 'node:crypto';

/** A key kept as its SHA-256 digest, so every comparison takes the same time whatever the lengths. */
export type KeyDigest = Buffer;

export const digestKey = (key: string): KeyDigest => createHash('sha256').update(key).digest();

/**
 * True when `authorization` is `Bearer <k>` with `k` one of `keys`. Every key is
 * compared, match or not, so the time taken does not reveal which one matched or
 * how much of a key was right.
 */
export function bearerMatches(authorization: string | undefined, keys: readonly KeyDigest[]): boolean {
  if (authorization === undefined || !/^Bearer\s+\S/i.test(authorization)) return false;
  const given = digestKey(authorization.replace(/^Bearer\s+/i, '').trim());
  let matched = false;
  for (const key of keys) matched = timingSafeEqual(given, key) || matched;
  return matched;
}

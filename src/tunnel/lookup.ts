import { err, ok, type Result } from '../kernel/result.js';

export type LookupFailure =
  | { reason: 'invalid'; message: string }
  | { reason: 'not_found'; message: string }
  | { reason: 'ambiguous'; message: string; matches: string[] };

export const MIN_PREFIX = 4;

/** Finds the one hash that `prefix` starts (at least 4 hex characters; a full hash always wins). */
export function lookupHash(prefix: string, hashes: Iterable<string>): Result<string, LookupFailure> {
  const p = prefix.toLowerCase();
  if (!/^[0-9a-f]+$/.test(p) || p.length < MIN_PREFIX || p.length > 32) {
    return err({ reason: 'invalid', message: `expected a tunnel hash or a prefix of at least ${MIN_PREFIX} hex characters, found ${JSON.stringify(prefix.slice(0, 80))}` });
  }
  const matches = [...hashes].filter((h) => h.startsWith(p));
  if (matches.length === 1) return ok(matches[0] as string);
  if (matches.length === 0) return err({ reason: 'not_found', message: `no tunnel has a hash starting with ${p}` });
  return err({ reason: 'ambiguous', message: `${p} matches ${matches.length} tunnels: ${matches.join(', ')}`, matches });
}

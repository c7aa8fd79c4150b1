import { isScalar, type YAMLMap } from 'yaml';
import { fieldPair } from './merge.js';
import { tunnelHash, type TunnelIdentity } from '../tunnel/hash.js';

/**
 * What identifies a tunnel entry (SPEC §3, §5), read the same way by the daemon and by
 * every writer of the file, so that a hash shown anywhere is the hash the daemon uses.
 * Defaults are the reference implementation's: a name that is absent or empty is
 * `unnamed`, direction `remote_to_local`, interactive `false`; a null written as text
 * (`~`, `null`) hashes as that text, as there.
 */

export const DEFAULT_NAME = 'unnamed';
export const DEFAULT_DIRECTION = 'remote_to_local';
export const DEFAULT_INTERACTIVE = 'false';

export const IDENTITY_FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction', 'interactive'] as const;
export type IdentityField = (typeof IDENTITY_FIELDS)[number];

/**
 * A scalar's text as written, quotes removed: `05432` → "05432", `True` → "True",
 * `'a b'` → "a b", `~` → "~". Null for an empty value (`name:`, `name: ""`, `name: !!null`)
 * and for anything that is not a scalar.
 * Works on nodes whose value a writer replaced by its own object, as long as the
 * node keeps its source text.
 */
export function writtenText(node: unknown): string | null {
  if (!isScalar(node)) return null;
  const v = node.value;
  // `null`, `~`, `NULL` as written are text to the reference, which hashed them as such
  // (SPEC §3: the scalar's text as written); only an empty value is no value.
  if (v === null && node.source !== undefined && node.source !== '') return node.source;
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'string') return v;
  if (node.source !== undefined && node.source !== '') return node.source;
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : null;
}

/**
 * The identity of an entry. `field` returns the value node of a key (aliases already
 * resolved), or undefined when the entry has no such key. Required fields that are
 * missing read as '' here; validation reports them.
 */
export function identityOf(field: (key: IdentityField) => unknown): TunnelIdentity {
  const text = (key: IdentityField) => writtenText(field(key));
  return {
    name: text('name') ?? DEFAULT_NAME,
    remote_host: text('remote_host') ?? '',
    remote_port: text('remote_port') ?? '',
    local_port: text('local_port') ?? '',
    direction: text('direction') ?? DEFAULT_DIRECTION,
    interactive: text('interactive') ?? DEFAULT_INTERACTIVE,
  };
}

/** The hash of an entry, from `identityOf`. */
export function entryHash(field: (key: IdentityField) => unknown): string {
  return tunnelHash(identityOf(field));
}

/**
 * How the daemon finds an identity field in an entry map: the value of its key with
 * aliases resolved by `deref` (Tree.deref), so that `name: *n` reads as the anchored
 * text, and a field a merge key brings (`<<: *defaults`) reads as merged (merge.ts).
 * Every reader of the file (the daemon, the panel, `/config` edits) goes through
 * this, so that a file with aliases has one hash everywhere.
 */
export function fieldsOf(deref: (node: unknown) => unknown, entry: YAMLMap): (key: IdentityField) => unknown {
  return (key) => deref(fieldPair(deref, entry, key)?.pair.value);
}

/** How `interactive` was written: the boolean it means, and whether that spelling is the canonical one. */
export type InteractiveReading = { ok: true; value: boolean; canonical: boolean } | { ok: false };

const SPELLINGS: Readonly<Record<string, boolean>> = { true: true, false: false, yes: true, no: false };

/**
 * `interactive` as the reference accepted it: true/false, and the strings "true",
 * "false", yes, no in any case. Only a plain `true` or `false` is canonical; the
 * others work and earn a warning. Absent or null is false.
 */
export function readInteractive(node: unknown): InteractiveReading {
  if (node === undefined || node === null || (isScalar(node) && (node.value === null || node.value === undefined))) {
    return { ok: true, value: false, canonical: true };
  }
  if (!isScalar(node)) return { ok: false };
  const text = writtenText(node);
  if (text === null) return { ok: false };
  const value = SPELLINGS[text.toLowerCase()];
  if (value === undefined) return { ok: false };
  return { ok: true, value, canonical: node.type === 'PLAIN' && (text === 'true' || text === 'false') };
}

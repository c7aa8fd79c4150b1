import { isMap, isSeq } from 'yaml';
import { identityOf, IDENTITY_FIELDS, writtenText, type IdentityField } from './identity.js';
import { readLikeReference, type ReferenceEntry } from './reference-reader.js';
import { tunnelHash } from '../tunnel/hash.js';
import { Tree } from './tree.js';
import { loadYaml } from './yaml-loader.js';

/**
 * Where this product's hash of an entry differs from the reference implementation's
 * (SPEC §12): the reference read the file line by line and misread some YAML (a
 * comment taken into a value, quotes kept, `~` taken as text); here the file is read
 * as YAML. Each difference says which entry, both hashes and why.
 */
export interface HashChange {
  /** 1-based line of the entry. */
  line: number;
  /** The entry's name as read here (or as the reference read it, when YAML has no entry there). */
  name: string;
  /** The reference's hash; null when the reference ran no tunnel from this entry. */
  reference_hash: string | null;
  /** The hash here; null when YAML reads no tunnel entry there. */
  hash: string | null;
  reasons: string[];
  /** The field written so that YAML reads what the reference read (`name: "#1 primary"`): the way to keep its hash. */
  keep: string | null;
}

const q = (s: string | null) => (s === null ? 'nothing' : JSON.stringify(s));

/** Why the reference's text of a field differs from YAML's. */
function why(ref: string, ours: string | null): string {
  if (ref.startsWith('#')) return 'YAML reads a value that starts with "#" as a comment, so the field is empty; the reference took the text as the value';
  if (/\s#/.test(ref) && (ours === null || !/\s#/.test(ours))) return 'the reference took the comment at the end of the line into the value';
  if (ref.length >= 2 && ref.startsWith("'") && ref.endsWith("'")) return 'the reference kept the single quotes';
  if (ref.startsWith('"')) return 'the reference kept the double quotes (only a value that ends with the closing quote lost them)';
  if (ref.startsWith('&')) return 'YAML reads "&…" as an anchor, a label for the value that follows, not as text';
  if (ref.startsWith('*')) return 'YAML reads "*…" as an alias: the value of the anchor of that name';
  if (ref.startsWith('!')) return 'YAML reads "!…" as a tag, a type for the value that follows, not as text';
  if (/^[|>]/.test(ref)) return `YAML reads "${ref.slice(0, 1)}" as the start of a block of text on the lines below`;
  if (ref.includes('\\')) return 'YAML reads the escape sequences in double quotes, the reference kept them as written';
  if (ours === null && ref !== '') return 'YAML reads it as empty (null), the reference took it as text';
  return 'written in a form the reference did not read as YAML does';
}

interface YamlEntry {
  line: number;
  fields: Record<IdentityField, string | null>;
  name: string;
  hash: string;
}

function yamlEntries(text: string): YamlEntry[] | null {
  const loaded = loadYaml(text);
  if (!loaded.ok) return null;
  const { doc, lines, aliases } = loaded.value;
  if (doc.errors.length > 0) return null;
  const root = doc.contents;
  if (!isMap(root)) return [];
  const seq = root.get('tunnels', true);
  if (!isSeq(seq)) return [];
  // Aliases resolved in one walk: the package's Alias.resolve() walks the whole document for each.
  const tree = new Tree(doc, lines, aliases);
  const out: YamlEntry[] = [];
  for (const item of seq.items) {
    if (!isMap(item)) continue;
    const node = (k: IdentityField) => tree.deref(item.get(k, true));
    const identity = identityOf(node);
    const fields = Object.fromEntries(IDENTITY_FIELDS.map((k) => [k, writtenText(node(k))])) as Record<IdentityField, string | null>;
    out.push({ line: lines.linePos(item.range?.[0] ?? 0).line, fields, name: identity.name, hash: tunnelHash(identity) });
  }
  return out;
}

/**
 * The entries whose hash here differs from the reference's, for `text` (valid YAML).
 * `reference` is what the reference read; by default from `text` itself (a file being
 * migrated passes the reading of its original text). Null when `text` is not YAML.
 */
export function hashChanges(text: string, reference: readonly ReferenceEntry[] = readLikeReference(text)): HashChange[] | null {
  const ours = yamlEntries(text);
  if (ours === null) return null;
  const byLine = new Map(ours.map((e) => [e.line, e]));
  const out: HashChange[] = [];
  const seen = new Set<number>();
  for (const ref of reference) {
    const here = byLine.get(ref.line + 1);
    if (here === undefined) {
      out.push({ line: ref.line + 1, name: ref.name, reference_hash: ref.hash, hash: null, reasons: ['YAML reads no tunnel entry here, the reference did'], keep: null });
      continue;
    }
    seen.add(here.line);
    if (here.hash === ref.hash) continue;
    const reasons: string[] = [];
    const keep: string[] = [];
    for (const k of IDENTITY_FIELDS) {
      const r = ref.fields[k]?.value ?? '';
      const o = here.fields[k];
      if ((o ?? '') === r) continue;
      reasons.push(`${k}: the reference read ${q(r)}, YAML reads ${q(o)}: ${why(r, o)}`);
      // A double-quoted YAML string of exactly the reference's text (JSON's escapes are YAML's).
      if (r !== '') keep.push(`${k}: ${JSON.stringify(r)}`);
    }
    out.push({ line: here.line, name: here.name, reference_hash: ref.hash, hash: here.hash, reasons, keep: keep.length > 0 ? keep.join(', ') : null });
  }
  for (const e of ours) {
    // An entry neither reads as a tunnel (a required field missing) is no change; validation reports it.
    if (seen.has(e.line) || e.fields.remote_host === null || e.fields.remote_port === null || e.fields.local_port === null) continue;
    out.push({
      line: e.line,
      name: e.name,
      reference_hash: null,
      hash: e.hash,
      reasons: ['the reference ran no tunnel from this entry (it reads only block-style entries with remote_host, remote_port and local_port, each key on its own line); it is new here'],
      keep: null,
    });
  }
  return out.sort((a, b) => a.line - b.line);
}

/** One line per change, for `check` and `migrate`: what changed, why, and what to do about it. */
export function formatHashChange(c: HashChange): string {
  const hashes = `${c.reference_hash?.slice(0, 8) ?? 'none'} there → ${c.hash?.slice(0, 8) ?? 'none'} here`;
  const todo =
    c.keep === null || c.reference_hash === null || c.hash === null
      ? ''
      : `; scripts that stored ${c.reference_hash.slice(0, 8)} need ${c.hash.slice(0, 8)}, or write ${c.keep} to keep the reference's value and hash`;
  return `line ${c.line}, tunnel ${JSON.stringify(c.name)}: hash ${hashes}: ${c.reasons.join('; ')}${todo}`;
}

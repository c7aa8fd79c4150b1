import { tunnelHash, type TunnelIdentity } from '../tunnel/hash.js';
import { DEFAULT_DIRECTION, DEFAULT_INTERACTIVE, DEFAULT_NAME, IDENTITY_FIELDS, type IdentityField } from './identity.js';

/**
 * How the reference implementation (autossh-tunnel-dockerized v2.3.1) read a config
 * file: not as YAML but line by line. Each line is trimmed; a line starting with `#`
 * is skipped (a `#` later in the line is part of the value); `tunnels:` alone on its
 * line opens the list; a line starting with `-` opens an entry; `key: value` lines of
 * the six known keys set a field, with one pair of surrounding double quotes removed
 * (single quotes are kept). An entry counts only with remote_host, remote_port and
 * local_port. This is a reader for a foreign format, kept to tell users what the
 * reference saw in their file (and to carry its values over to valid YAML); the
 * daemon itself reads YAML.
 */

/** One field as the reference read it, and where. */
export interface ReferenceField {
  value: string;
  /** 0-based line index in the file. */
  line: number;
}

/** The values the reference ran with (its TunnelIdentity, defaults filled in), and its hash of them. */
export interface ReferenceEntry extends TunnelIdentity {
  /** 0-based line index of the entry's `-` line. */
  line: number;
  fields: Partial<Record<IdentityField, ReferenceField>>;
  hash: string;
}

/** POSIX [[:space:]]: what the reference's sed trimmed. */
const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/**
 * The line without the white space around it. Scanned by hand: `/\s+$/` tries every
 * start inside a run of spaces, which is quadratic in a long run before the end.
 */
function trimSpace(s: string): string {
  let from = 0;
  let to = s.length;
  while (from < to && isSpace(s.charCodeAt(from))) from++;
  while (to > from && isSpace(s.charCodeAt(to - 1))) to--;
  return s.slice(from, to);
}

function valueAfterKey(line: string, key: string): string {
  let from = key.length + 1;
  while (from < line.length && isSpace(line.charCodeAt(from))) from++;
  const rest = line.slice(from);
  // sed 's/^"\(.*\)"$/\1/': one pair of double quotes around the whole value.
  return rest.length >= 2 && rest.startsWith('"') && rest.endsWith('"') ? rest.slice(1, -1) : rest;
}

function fieldOf(line: string): IdentityField | null {
  for (const key of IDENTITY_FIELDS) if (line.startsWith(`${key}:`)) return key;
  return null;
}

/** The tunnels the reference would have run from `text`, in its order, with its hashes. */
export function readLikeReference(text: string): ReferenceEntry[] {
  // `while read` never sees a last line without its newline.
  const lines = text.split('\n');
  lines.pop();
  const out: ReferenceEntry[] = [];
  let inTunnels = false;
  let current: { line: number; fields: ReferenceEntry['fields'] } | null = null;

  const emit = () => {
    if (current === null) return;
    const f = current.fields;
    const v = (k: IdentityField) => f[k]?.value ?? '';
    if (v('remote_host') === '' || v('remote_port') === '' || v('local_port') === '') return;
    const identity = {
      name: v('name') || DEFAULT_NAME,
      remote_host: v('remote_host'),
      remote_port: v('remote_port'),
      local_port: v('local_port'),
      direction: v('direction') || DEFAULT_DIRECTION,
      interactive: v('interactive') || DEFAULT_INTERACTIVE,
    };
    out.push({ line: current.line, fields: f, ...identity, hash: tunnelHash(identity) });
  };

  lines.forEach((raw, index) => {
    const line = trimSpace(raw);
    if (line === '' || line.startsWith('#')) return;
    if (line === 'tunnels:') {
      inTunnels = true;
      return;
    }
    if (!inTunnels) return;
    if (line.startsWith('-')) {
      emit();
      current = { line: index, fields: {} };
      // `- key: value` on the entry's first line: only with "- " and a colon after it.
      if (line.startsWith('- ') && line.indexOf(':', 2) !== -1) {
        const field = line.replace(/^- */, '');
        const key = fieldOf(field);
        if (key !== null) current.fields[key] = { value: valueAfterKey(field, key), line: index };
      }
      return;
    }
    if (current === null) return;
    const key = fieldOf(line);
    if (key !== null) current.fields[key] = { value: valueAfterKey(line, key), line: index };
  });
  emit();
  return out;
}

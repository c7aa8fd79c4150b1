import { isAlias, isMap, isScalar, isSeq, stringify } from 'yaml';
import { err, ok, type Result } from '../kernel/result.js';
import { IDENTITY_FIELDS } from './identity.js';
import { hashChanges, type HashChange } from './reference-compare.js';
import { readLikeReference, type ReferenceEntry } from './reference-reader.js';
import { Tree } from './tree.js';
import { loadYaml, refusalText } from './yaml-loader.js';

/**
 * Turns a config file the reference implementation accepted but YAML refuses into
 * valid YAML with the same values, hence the same hashes (SPEC §12). The reference
 * wrote names unquoted (`[prod] db`, `@home`, `db: main`, `*star`, `- dash`) and
 * read indentation loosely (tabs). Only the lines that need it change, so every
 * comment and every other key stays as written: a value YAML would refuse or read as
 * something else becomes a double-quoted YAML string of exactly what the reference
 * read, and tab indentation becomes spaces. The result is checked by parsing it.
 */
export interface Migration {
  text: string;
  /** 0-based indices of the lines that changed (the line count never changes). */
  changedLines: number[];
  /** How tabs in indentation were read, when there were any. */
  tabWidth: number | null;
  /** Entries whose hash here differs from the reference's, and why. */
  changes: HashChange[];
  /** Things worth knowing about the rewritten values (a comment the reference took into a value). */
  notes: string[];
}

// The value runs to the end of the line; its trailing white space is cut off by hand
// (fieldLine), as a lazy `(.*?)[ \t\r]*$` is quadratic in a long run of spaces.
const FIELD_LINE = new RegExp(`^([ \\t]*)(-[ ]*)?(${IDENTITY_FIELDS.join('|')}):[ \\t]*(.*)$`);

/** A `key: value` line of one of the reference's fields: its indent, its `- `, the key and the value as written. */
function fieldLine(line: string): { indent: string; dash: string; key: string; value: string } | null {
  const m = FIELD_LINE.exec(line);
  if (!m) return null;
  const rest = m[4] ?? '';
  let end = rest.length;
  while (end > 0 && (rest[end - 1] === ' ' || rest[end - 1] === '\t' || rest[end - 1] === '\r')) end--;
  return { indent: m[1] ?? '', dash: m[2] ?? '', key: m[3] ?? '', value: rest.slice(0, end) };
}

/** True when YAML would not read `value` after `key:` as the plain text the reference read. */
function needsQuotes(key: string, value: string): boolean {
  if (value === '') return false;
  const loaded = loadYaml(`${key}: ${value}\n`);
  if (!loaded.ok) return true;
  const { doc } = loaded.value;
  if (doc.errors.length > 0 || doc.warnings.length > 0) return true;
  const node = isMap(doc.contents) ? doc.contents.items[0]?.value : undefined;
  return isAlias(node) || !isScalar(node) || node.tag !== undefined;
}

/** Leading white space with tabs expanded to the next multiple of `width`. */
function expandIndent(line: string, width: number): string {
  const m = /^[ \t]*/.exec(line)?.[0] ?? '';
  if (!m.includes('\t')) return line;
  let col = 0;
  for (const ch of m) col = ch === '\t' ? (Math.floor(col / width) + 1) * width : col + 1;
  return ' '.repeat(col) + line.slice(m.length);
}

function quoteFields(lines: string[], reference: readonly ReferenceEntry[]): string[] {
  const out = [...lines];
  for (const entry of reference) {
    for (const field of Object.values(entry.fields)) {
      const m = fieldLine(out[field.line] ?? '');
      if (!m) continue;
      const { indent, dash, key, value } = m;
      if (!needsQuotes(key, value)) continue;
      const quoted = stringify(field.value, { defaultStringType: 'QUOTE_DOUBLE', lineWidth: 0 }).trimEnd();
      out[field.line] = `${indent}${dash}${key}: ${quoted}`;
    }
  }
  return out;
}

/** A quoted value that holds what the user meant as a comment: kept, since the hash depends on it, but said. */
function commentNotes(reference: readonly ReferenceEntry[], changed: ReadonlySet<number>): string[] {
  const out: string[] = [];
  for (const entry of reference) {
    for (const [key, field] of Object.entries(entry.fields)) {
      if (!changed.has(field.line) || !/\s#/.test(field.value)) continue;
      out.push(
        `line ${field.line + 1}: ${key} is ${JSON.stringify(field.value)}, with the text after "#" that the reference read as part of it; ` +
          'to make that a comment, move it after the closing quote (the hash then changes)',
      );
    }
  }
  return out;
}

/**
 * Whether a field the reference read as text is a list or a map to YAML (`name: [x]`,
 * `name: {x}`): valid YAML, but no value the daemon takes, so the file needs repair.
 */
function hasCollectionField(text: string, reference: readonly ReferenceEntry[]): boolean {
  const lines = text.split('\n');
  return reference.some((entry) =>
    Object.values(entry.fields).some((field) => {
      const m = fieldLine(lines[field.line] ?? '');
      if (!m || m.value === '') return false;
      const loaded = loadYaml(`${m.key}: ${m.value}\n`);
      // Past the loader's limits it is no text the daemon takes either: the file needs repair.
      if (!loaded.ok) return true;
      const { doc } = loaded.value;
      const node = isMap(doc.contents) ? doc.contents.items[0]?.value : undefined;
      return isMap(node) || isSeq(node);
    }),
  );
}

/**
 * The first problem that keeps the daemon from reading `text`: past the loader's limits
 * (`refused`), a YAML error, or an alias with no anchor before it (the parser accepts
 * it; reading its value fails), which is how YAML sees a name the reference's panel
 * wrote as `*star`.
 */
function firstProblem(text: string): { refused: boolean; text: string } | null {
  const loaded = loadYaml(text, { positions: true });
  if (!loaded.ok) return { refused: true, text: refusalText(loaded.error) };
  const { doc, lines, aliases } = loaded.value;
  const at = (pos: number) => {
    const { line, col } = lines.linePos(pos);
    return `line ${line}, column ${col}`;
  };
  const e = doc.errors[0];
  if (e) return { refused: false, text: `${at(e.pos[0])}: ${e.message.split('\n')[0] ?? ''}` };
  for (const [alias, target] of new Tree(doc, lines, aliases).aliasTargets()) {
    if (target === undefined && isAlias(alias)) return { refused: false, text: `${at(alias.range?.[0] ?? 0)}: the alias *${alias.source} has no anchor &${alias.source} before it` };
  }
  return null;
}

/**
 * The migrated text of `text`, or why it cannot be migrated automatically (the first
 * YAML problem left). A file YAML already accepts comes back unchanged, with the hash
 * changes it carries. A file past the loader's limits is not tried line by line: the
 * same lines quoted are past them too, and trying would cost a parse per line.
 */
export function migrate(text: string): Result<Migration, string> {
  const first = firstProblem(text);
  if (first?.refused) return err(`is refused before it is read, so it cannot be migrated: ${first.text}`);
  const reference = readLikeReference(text);
  if (first === null && !hasCollectionField(text, reference)) {
    return ok({ text, changedLines: [], tabWidth: null, changes: hashChanges(text, reference) ?? [], notes: [] });
  }

  const lines = text.split('\n');
  const hasTabs = lines.some((l) => /^[ \t]*\t/.test(l));
  let left = '';
  for (const width of hasTabs ? [2, 4, 8] : [0]) {
    const indented = width === 0 ? lines : lines.map((l) => expandIndent(l, width));
    const candidate = quoteFields(indented, reference);
    const joined = candidate.join('\n');
    const problem = firstProblem(joined);
    if (problem !== null) {
      left ||= problem.text;
      continue;
    }
    const changedLines = candidate.flatMap((l, i) => (l !== lines[i] ? [i] : []));
    return ok({ text: joined, changedLines, tabWidth: hasTabs ? width : null, changes: hashChanges(joined, reference) ?? [], notes: commentNotes(reference, new Set(changedLines)) });
  }
  return err(`cannot be turned into valid YAML line by line; fix this by hand first: ${left}`);
}

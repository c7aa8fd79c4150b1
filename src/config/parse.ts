import { isMap, isSeq, visit, type Document, type YAMLError } from 'yaml';
import type { DirectionMode } from '../tunnel/spec.js';
import { isolate } from './isolation.js';
import { readConfig } from './schema.js';
import { child, keyText, quote, Tree } from './tree.js';
import type { ConfigProblem, LoadResult } from './types.js';
import { loadYaml } from './yaml-loader.js';

export interface ParseOptions {
  /** Decides which side of a tunnel listens, for listen-conflict checks (SPEC §4). */
  mode?: DirectionMode;
}

const FILE = '(file)';
/**
 * Syntax errors listed one by one; the rest are one problem that counts them. A file
 * of 100,000 stray `]` has as many errors, and a list of them only weighs on /health.
 */
const MAX_SYNTAX_PROBLEMS = 100;
const byPosition = (a: ConfigProblem, b: ConfigProblem) => a.line - b.line || a.column - b.column;

/**
 * Validates config text: YAML read within the loader's limits (yaml-loader.ts), then
 * the schema. Pure: no I/O, never throws for a bad file. Empty text, comments only, or
 * a null document is a valid empty config. Every problem found is reported (syntax
 * errors past the first MAX_SYNTAX_PROBLEMS as one), sorted by position.
 */
export function parseConfigText(text: string, opts: ParseOptions = {}): LoadResult {
  const mode = opts.mode ?? 'default';
  // Odd keys (a list as a key) are reported as problems; the package's own console warning would only be noise.
  const loaded = loadYaml(text, { logLevel: 'error' });
  if (!loaded.ok) return invalid([{ ...loaded.error, field: FILE }]);
  const { doc, lines, aliases } = loaded.value;
  const tree = new Tree(doc, lines, aliases);
  const duplicates = doc.errors.filter((e) => e.code === 'DUPLICATE_KEY');
  const named = duplicates.length === 0 ? new Map<number, ConfigProblem>() : duplicateKeyProblems(tree, doc, duplicates);
  for (const e of duplicates) tree.errors.push(named.get(e.pos[0]) ?? { ...tree.position(e.pos[0]), field: FILE, expected: 'each key at most once in a map', found: firstLine(e.message) });
  const syntax = doc.errors.filter((e) => e.code !== 'DUPLICATE_KEY');
  for (const e of syntax.slice(0, MAX_SYNTAX_PROBLEMS)) tree.errors.push({ ...tree.position(e.pos[0]), field: FILE, expected: 'valid YAML', found: firstLine(e.message) });
  const more = syntax[MAX_SYNTAX_PROBLEMS];
  if (more !== undefined) {
    tree.errors.push({ ...tree.position(more.pos[0]), field: FILE, expected: 'valid YAML', found: `${syntax.length - MAX_SYNTAX_PROBLEMS} more syntax errors from here on (the first ${MAX_SYNTAX_PROBLEMS} are listed)` });
  }
  for (const w of doc.warnings) tree.warnings.push({ ...tree.position(w.pos[0]), field: FILE, expected: 'plain YAML (no custom tags)', found: firstLine(w.message) });
  // A syntax error leaves a partial tree; checking its fields would only add noise.
  // Duplicate keys leave a whole tree, so the rest is checked too.
  if (syntax.length > 0) return invalid(tree.errors);

  let js: unknown;
  try {
    // What the aliases expand to was bounded by the loader; the package's own count
    // (which refuses one anchor used 100 times) is not wanted on top.
    js = doc.toJS({ maxAliasCount: -1 });
  } catch (e) {
    // The yaml package reports an alias with no anchor before it by throwing
    // ReferenceError; anything else is a bug and is not ours to hide.
    if (!(e instanceof ReferenceError)) throw e;
    return invalid([...tree.errors, aliasProblem(tree, doc, e)]);
  }

  const read = readConfig(tree, js, mode);
  if (read === null) return invalid(tree.errors);
  return isolate(tree, read);
}

/** One problem per line: `line 4, column 17: tunnels[0].local_port: expected …, found …`. */
export function formatProblem(p: ConfigProblem): string {
  const where = p.line > 0 ? `line ${p.line}, column ${p.column}: ` : '';
  return `${where}${p.field}: expected ${p.expected}, found ${p.found}`;
}

function invalid(problems: ConfigProblem[]): LoadResult {
  return { kind: 'invalid', problems: [...problems].sort(byPosition) };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/**
 * The yaml package names no field for a repeated key: one walk finds every repeated
 * key's pair to say which field, and where its first one is (a walk per key would be
 * quadratic in a map of repeated keys). Keyed by the offset each error gives.
 */
function duplicateKeyProblems(tree: Tree, doc: Document, errors: readonly YAMLError[]): Map<number, ConfigProblem> {
  const offsets = new Set(errors.map((e) => e.pos[0]));
  const out = new Map<number, ConfigProblem>();
  const walk = (node: unknown, path: string): void => {
    if (isMap(node)) {
      const first = new Map<string, unknown>();
      for (const pair of node.items) {
        const name = keyText(pair.key);
        const offset = (pair.key as { range?: [number, number, number] } | null)?.range?.[0];
        if (offset !== undefined && offsets.has(offset)) {
          const earlier = name === null ? undefined : first.get(name);
          const at = tree.at(earlier);
          out.set(offset, {
            ...tree.position(offset),
            field: fieldOf(path, name),
            expected: 'each key at most once in a map',
            found: `${quote(name ?? '?')} again${earlier !== undefined ? ` (first at line ${at.line}, column ${at.column})` : ''}`,
          });
        } else if (name !== null && !first.has(name)) {
          first.set(name, pair.key);
        }
        walk(pair.key, path);
        walk(pair.value, child(path, name ?? '?'));
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
    }
  };
  walk(doc.contents, '');
  return out;
}

function fieldOf(path: string, key: string | null): string {
  if (key === null) return path === '' ? FILE : path;
  return child(path, key);
}

function aliasProblem(tree: Tree, doc: Document, e: ReferenceError): ConfigProblem {
  let first: unknown;
  visit(doc, { Alias: (_k, node) => { first = node; return visit.BREAK; } });
  return {
    ...tree.at(first),
    field: FILE,
    expected: 'aliases (*name) that follow their anchor (&name)',
    // autossh-tunnel-dockerized's panel wrote names as typed: `name: *star` is such a name to it.
    found: `${firstLine(e.message)} (a value written for autossh-tunnel-dockerized as *text is text there: \`tunnel-manager migrate\` quotes it)`,
  };
}

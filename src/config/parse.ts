import { Composer, isPair, isSeq, LineCounter, Parser, visit, YAMLParseError, type Document, type YAMLError } from 'yaml';
import type { DirectionMode } from '../tunnel/spec.js';
import { guardedLexemes, sizeBreach, type GuardFailure } from './guard.js';
import { isolate } from './isolation.js';
import { readConfig } from './schema.js';
import { child, keyText, quote, Tree } from './tree.js';
import type { ConfigProblem, LoadResult } from './types.js';

/**
 * How many times an anchor may be expanded. Legitimate files share a few blocks of
 * ssh_options; "billion laughs" files expand aliases of aliases exponentially.
 */
export const MAX_ALIAS_COUNT = 100;

export interface ParseOptions {
  /** Decides which side of a tunnel listens, for listen-conflict checks (SPEC §4). */
  mode?: DirectionMode;
}

const FILE = '(file)';
const byPosition = (a: ConfigProblem, b: ConfigProblem) => a.line - b.line || a.column - b.column;

/**
 * Validates config text: guard, YAML, then the schema. Pure: no I/O, never throws
 * for a bad file. Empty text, comments only, or a null document is a valid empty
 * config. Every problem found is reported, sorted by position.
 */
export function parseConfigText(text: string, opts: ParseOptions = {}): LoadResult {
  const mode = opts.mode ?? 'default';
  const lines = new LineCounter();

  const size = sizeBreach(text);
  if (size !== null) return refused(text, size);
  const guarded = guardedLexemes(text);
  const doc = parseGuarded(text, guarded.lexemes, lines);
  const nesting = guarded.breach();
  if (nesting !== null) return refused(text, nesting);
  const tree = new Tree(doc, lines, guarded.anchorsOrAliases());
  for (const e of doc.errors) {
    if (e.code === 'DUPLICATE_KEY') tree.errors.push(duplicateKeyProblem(tree, doc, e));
    else tree.errors.push({ ...tree.position(e.pos[0]), field: FILE, expected: 'valid YAML', found: firstLine(e.message) });
  }
  for (const w of doc.warnings) tree.warnings.push({ ...tree.position(w.pos[0]), field: FILE, expected: 'plain YAML (no custom tags)', found: firstLine(w.message) });
  // A syntax error leaves a partial tree; checking its fields would only add noise.
  // Duplicate keys leave a whole tree, so the rest is checked too.
  if (doc.errors.some((e) => e.code !== 'DUPLICATE_KEY')) return invalid(tree.errors);

  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // The yaml package reports alias bombs and unresolvable aliases by throwing
    // ReferenceError; anything else is a bug and is not ours to hide.
    if (!(e instanceof ReferenceError)) throw e;
    return invalid([...tree.errors, aliasProblem(tree, doc, e)]);
  }

  const read = readConfig(tree, js, mode);
  if (read === null) return invalid(tree.errors);
  return isolate(tree, read);
}

/**
 * The document, as the yaml package's parseDocument makes it, from tokens that stop at
 * the nesting limit (guard.ts): lexing once serves both the guard and the parser.
 */
function parseGuarded(text: string, lexemes: Iterable<string>, lines: LineCounter): Document {
  const parser = new Parser(lines.addNewLine);
  // Parser.parse() marks the first line itself; fed token by token, it is ours to mark.
  lines.addNewLine(0);
  // Odd keys (a list as a key) are reported as problems; the package's own console warning would only be noise.
  const composer = new Composer({ uniqueKeys: true, logLevel: 'error' });
  function* tokens() {
    for (const lexeme of lexemes) yield* parser.next(lexeme);
    yield* parser.end();
  }
  let doc: Document | null = null;
  for (const next of composer.compose(tokens(), true, text.length)) {
    if (doc === null) doc = next;
    else {
      doc.errors.push(new YAMLParseError([next.range[0], next.range[1]], 'MULTIPLE_DOCS', 'Source contains multiple documents; please use YAML.parseAllDocuments()'));
      break;
    }
  }
  // compose(…, forceDoc) always yields one document, an empty one for empty text.
  if (doc === null) throw new Error('the YAML composer yielded no document');
  return doc;
}

function refused(text: string, guard: GuardFailure): LoadResult {
  const at = guard.offset === null ? { line: 0, column: 0 } : positionIn(text, guard.offset);
  return invalid([{ ...at, field: FILE, expected: guard.expected, found: guard.found }]);
}

/** One problem per line: `line 4, column 17: tunnels[0].local_port: expected …, found …`. */
export function formatProblem(p: ConfigProblem): string {
  const where = p.line > 0 ? `line ${p.line}, column ${p.column}: ` : '';
  return `${where}${p.field}: expected ${p.expected}, found ${p.found}`;
}

function invalid(problems: ConfigProblem[]): LoadResult {
  return { kind: 'invalid', problems: [...problems].sort(byPosition) };
}

/** 1-based line and column of an offset, for text the YAML parser has not seen. */
function positionIn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/** The yaml package names no field for a repeated key; find the pair to say which, and where the first one is. */
function duplicateKeyProblem(tree: Tree, doc: Document, e: YAMLError): ConfigProblem {
  const offset = e.pos[0];
  let problem: ConfigProblem = { ...tree.position(offset), field: FILE, expected: 'each key at most once in a map', found: firstLine(e.message) };
  visit(doc, {
    Map: (_key, map, path) => {
      const idx = map.items.findIndex((p) => (p.key as { range?: [number, number, number] } | null)?.range?.[0] === offset);
      if (idx < 0) return undefined;
      const pair = map.items[idx];
      const name = keyText(pair?.key);
      const first = map.items.slice(0, idx).find((p) => name !== null && keyText(p.key) === name);
      const at = tree.at(first?.key);
      problem = {
        ...tree.position(offset),
        field: fieldOf(pathOf(path, map), name),
        expected: 'each key at most once in a map',
        found: `${quote(name ?? '?')} again${first ? ` (first at line ${at.line}, column ${at.column})` : ''}`,
      };
      return visit.BREAK;
    },
  });
  return problem;
}

/** A field path (`tunnels[1].ssh_options`) from the ancestors yaml's visit() passes. */
function pathOf(ancestors: readonly unknown[], node: unknown): string {
  const chain = [...ancestors, node];
  let path = '';
  for (let i = 1; i < chain.length; i++) {
    const parent = chain[i - 1];
    const here = chain[i];
    if (isPair(parent) && parent.value === here) path = child(path, keyText(parent.key) ?? '?');
    else if (isSeq(parent)) path = `${path}[${parent.items.indexOf(here)}]`;
  }
  return path;
}

function fieldOf(path: string, key: string | null): string {
  if (key === null) return path === '' ? FILE : path;
  return child(path, key);
}

function aliasProblem(tree: Tree, doc: Document, e: ReferenceError): ConfigProblem {
  let first: unknown;
  visit(doc, { Alias: (_k, node) => { first = node; return visit.BREAK; } });
  const bomb = /resource exhaustion|Excessive alias/i.test(e.message);
  return {
    ...tree.at(first),
    field: FILE,
    expected: bomb ? `aliases expanded at most ${MAX_ALIAS_COUNT} times in all` : 'aliases (*name) that follow their anchor (&name)',
    // autossh-tunnel-dockerized's panel wrote names as typed: `name: *star` is such a name to it.
    found: bomb
      ? 'aliases that expand exponentially (an alias bomb); refused to protect memory'
      : `${firstLine(e.message)} (a value written for autossh-tunnel-dockerized as *text is text there: \`tunnel-manager migrate\` quotes it)`,
  };
}

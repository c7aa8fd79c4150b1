import { Composer, isAlias, isMap, isPair, isScalar, isSeq, Lexer, LineCounter, Parser, visit, YAMLParseError, type Document, type SchemaOptions, type YAMLError } from 'yaml';
import { err, ok, type Result } from '../kernel/result.js';
import { unreachable } from '../kernel/unreachable.js';
import { TokenMeter, type Breach } from './yaml-meter.js';

/**
 * The one way YAML is read here: the daemon's config (parse.ts), the panel's editable
 * document (config-edit/yaml-doc.ts), `check` and `migrate` (the snippets too). The
 * limits hold before a document is built, so any text within the size limit costs a
 * bounded amount of memory and time however it is written: size and lines first; then
 * nesting, tokens, anchors and aliases, counted on the lexer's tokens as they stream to
 * the parser (yaml-meter.ts); then, on the document, what its aliases expand to (nothing
 * expands them before that: toJS, zod and the validators all come after).
 *
 * The yaml package's own duplicate-key check compares each key with every earlier one
 * of its map (quadratic: a 1 MiB map of 150,000 keys takes minutes), so the composer
 * runs without it and the same errors are found here with one set per map.
 */

/** The largest config file read, in bytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** Collections inside collections. */
export const MAX_NESTING = 64;
/** Tokens other than white space and comments: scalars, aliases, anchors, tags, `- ? : , [ ] { }` (yaml-meter.ts). */
export const MAX_TOKENS = 50_000;
/** Lines, blank ones and those of block scalars too: the parser keeps a record of each. */
export const MAX_LINES = 100_000;
/** Anchors (&name) and aliases (*name) together: the package resolves each alias by a walk over them. */
export const MAX_ANCHORS_AND_ALIASES = 5_000;
/** Nodes of the data once every alias is expanded (an alias counts as the nodes it stands for). */
export const MAX_EXPANDED_NODES = 100_000;

/** The size limit as messages state it. */
export const SIZE_LIMIT = `${MAX_CONFIG_BYTES} bytes (${MAX_CONFIG_BYTES / (1024 * 1024)} MiB)`;

/** Why a text was refused whole: where, what was expected, what was found. */
export interface YamlRefusal {
  /** 1-based; 0 (and column 0) when it is about the whole file (its size). */
  line: number;
  column: number;
  expected: string;
  found: string;
}

/** `line 3, column 7: expected …, found …` (no place for a size refusal). */
export function refusalText(r: YamlRefusal): string {
  return `${r.line > 0 ? `line ${r.line}, column ${r.column}: ` : ''}expected ${r.expected}, found ${r.found}`;
}

export interface LoadedYaml {
  /** The first document; its syntax errors (and a second document) are in `doc.errors`. */
  doc: Document.Parsed;
  lines: LineCounter;
  /** False when the text holds no anchor and no alias, so there is nothing to resolve. */
  aliases: boolean;
}

export interface YamlOptions {
  customTags?: SchemaOptions['customTags'];
  /** The yaml package's own console warnings; 'silent' by default. */
  logLevel?: 'silent' | 'error' | 'warn';
  /** Every error and warning message ends with ` at line L, column C`, as parseDocument's prettyErrors writes its first line. */
  positions?: boolean;
}

const PROTECT = 'refused before parsing, to protect memory';

export function loadYaml(text: string, opts: YamlOptions = {}): Result<LoadedYaml, YamlRefusal> {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) return err({ line: 0, column: 0, expected: `a file of at most ${SIZE_LIMIT}`, found: `${bytes} bytes` });
  if (hasLinePast(text, MAX_LINES)) return err({ line: MAX_LINES + 1, column: 1, expected: `at most ${MAX_LINES} lines`, found: `more, from here on (${PROTECT})` });

  const lines = new LineCounter();
  const meter = new TokenMeter({ nesting: MAX_NESTING, tokens: MAX_TOKENS, anchorsAndAliases: MAX_ANCHORS_AND_ALIASES });
  let breach: Breach | null = null;
  function* lexemes(): Generator<string> {
    for (const token of new Lexer().lex(text)) {
      breach = meter.feed(token);
      if (breach !== null) return;
      yield token;
    }
  }
  // The yaml package makes an Error for each syntax problem (so does findDuplicateKeys),
  // and V8 records a stack for each, about 1 KB: 100,000 of them doubled the memory a
  // hostile file costs. None is thrown; its place in the text is what tells where.
  const traces = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const doc = compose(text, lexemes(), () => breach !== null, lines, opts);
    // The generator has run to its end (or to the breach) once compose() returns.
    const stopped = breach as Breach | null;
    if (stopped !== null) return err(breachRefusal(stopped, positionIn(text, stopped.offset)));
    const aliases = meter.sawAnchorsOrAliases;
    const expansion = aliases ? aliasExpansion(doc) : null;
    if (expansion !== null) return err({ ...at(lines, expansion.offset), ...expansionText(expansion) });
    findDuplicateKeys(doc);
    if (opts.positions) for (const e of [...doc.errors, ...doc.warnings]) withPosition(e, lines);
    return ok({ doc, lines, aliases });
  } finally {
    Error.stackTraceLimit = traces;
  }
}

/** The first document, as parseDocument makes it, from tokens that stop at a limit. */
function compose(text: string, lexemes: Iterable<string>, stopped: () => boolean, lines: LineCounter, opts: YamlOptions): Document.Parsed {
  const parser = new Parser(lines.addNewLine);
  // Parser.parse() marks the first line itself; fed token by token, it is ours to mark.
  lines.addNewLine(0);
  const composer = new Composer({ customTags: opts.customTags, logLevel: opts.logLevel ?? 'silent', uniqueKeys: false });
  function* tokens() {
    for (const lexeme of lexemes) yield* parser.next(lexeme);
    // Past a limit the document is refused: what was parsed of it is not composed.
    if (!stopped()) yield* parser.end();
  }
  let doc: Document.Parsed | null = null;
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

function breachRefusal(b: Breach, where: { line: number; column: number }): YamlRefusal {
  switch (b.limit) {
    case 'nesting':
      return { ...where, expected: `collections nested at most ${MAX_NESTING} levels deep`, found: `deeper nesting (${PROTECT})` };
    case 'tokens':
      return { ...where, expected: `at most ${MAX_TOKENS} YAML tokens in the file (values, keys, anchors, aliases, tags and the - ? : , [ ] { } marks)`, found: `more, from here on (${PROTECT})` };
    case 'anchorsAndAliases':
      return { ...where, expected: `at most ${MAX_ANCHORS_AND_ALIASES} anchors (&name) and aliases (*name) in the file`, found: `more, from here on (${PROTECT})` };
    default:
      return unreachable(b.limit, 'YAML limit');
  }
}

/** Where an alias makes the data too large, or names a node it is inside of. */
export interface AliasExpansion {
  offset: number;
  kind: 'too_large' | 'loop';
  alias: string;
}

/**
 * What the aliases of `doc` expand to, in one walk: each anchored node's expanded size
 * is kept as the walk leaves it, so an alias costs a lookup. An alias means the last
 * anchor of its name before it (as Tree reads it). Null when the data stays within
 * MAX_EXPANDED_NODES and no alias is inside the node it names.
 */
export function aliasExpansion(doc: Document): AliasExpansion | null {
  const anchors = new Map<string, unknown>();
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  let total = 0;
  let found: AliasExpansion | null = null;
  const walk = (node: unknown): void => {
    if (found !== null || node === null || node === undefined) return;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      const offset = node.range?.[0] ?? 0;
      if (target !== undefined && open.has(target)) found = { offset, kind: 'loop', alias: node.source };
      total += target === undefined ? 1 : (sizes.get(target) ?? 1);
      if (found === null && total > MAX_EXPANDED_NODES) found = { offset, kind: 'too_large', alias: node.source };
      return;
    }
    const start = total;
    total++;
    const anchor = isScalar(node) || isMap(node) || isSeq(node) ? node.anchor : undefined;
    if (anchor !== undefined) {
      anchors.set(anchor, node);
      open.add(node);
    }
    if (isPair(node)) {
      walk(node.key);
      walk(node.value);
    } else if (isMap(node) || isSeq(node)) {
      for (const item of node.items) walk(item);
    }
    if (anchor !== undefined) {
      open.delete(node);
      sizes.set(node, total - start);
    }
  };
  walk(doc.contents);
  return found;
}

function expansionText(e: AliasExpansion): { expected: string; found: string } {
  return e.kind === 'loop'
    ? { expected: 'aliases (*name) outside the node their anchor (&name) is on', found: `*${e.alias} inside the node &${e.alias} names, which would expand without end` }
    : { expected: `aliases that expand the data to at most ${MAX_EXPANDED_NODES} nodes in all`, found: `*${e.alias}, which takes it past that (an alias expansion bomb); refused to protect memory` };
}

/** The errors the composer's own uniqueKeys check would add (same code, place and message), in one pass. */
function findDuplicateKeys(doc: Document.Parsed): void {
  const found: YAMLParseError[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        // Keys that are not scalars are told apart by identity, so never equal; NaN equals nothing.
        if (!isScalar(key) || Number.isNaN(key.value)) continue;
        if (!seen.has(key.value)) {
          seen.add(key.value);
          continue;
        }
        const offset = key.range?.[0] ?? 0;
        found.push(new YAMLParseError([offset, offset + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
      }
    },
  });
  if (found.length === 0) return;
  doc.errors.push(...found);
  doc.errors.sort((a, b) => a.pos[0] - b.pos[0]);
}

function withPosition(e: YAMLError, lines: LineCounter): void {
  if (e.pos[0] === -1) return;
  const { line, col } = lines.linePos(e.pos[0]);
  e.message += ` at line ${line}, column ${col}`;
}

function at(lines: LineCounter, offset: number): { line: number; column: number } {
  const { line, col } = lines.linePos(offset);
  return { line, column: col };
}

/** Whether `text` has a line after its first `max`. */
function hasLinePast(text: string, max: number): boolean {
  let end = -1;
  for (let n = 0; n < max; n++) {
    end = text.indexOf('\n', end + 1);
    if (end === -1) return false;
  }
  return end + 1 < text.length;
}

/** 1-based line and column of an offset, for text the parser has not seen to the end. */
function positionIn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

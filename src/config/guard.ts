import { CST, Lexer } from 'yaml';

/**
 * Cheap checks run before the YAML parser sees the text. The parser and composer use
 * memory and stack in proportion to nesting (~100,000 levels of `[`, or of compact
 * `- - - …` / `? ? ? …`, take seconds and hundreds of MB, or never finish), so size
 * and nesting are bounded first. Nesting is measured on the yaml package's own lexer
 * tokens, which are produced in one streaming pass with constant memory, so quotes,
 * comments and block scalars are read exactly as the parser will read them.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_NESTING = 64;

/** Why the text was refused, and where (a character offset), when there is a place. */
export interface GuardFailure {
  /** One sentence for a log or a page. */
  message: string;
  expected: string;
  found: string;
  offset: number | null;
}

// Tokens the lexer makes up that stand for no source characters.
const SCALAR_MARK = '\x1f';
const DOC_MODE = '\x02';
const FLOW_ERROR_END = '\x18';

export function guardLimits(text: string): GuardFailure | null {
  return sizeBreach(text) ?? nestingBreach(text);
}

/** The size check alone: parseConfigText measures nesting while it parses (guardedLexemes). */
export function sizeBreach(text: string): GuardFailure | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_CONFIG_BYTES) return null;
  return {
    message: `the file is ${bytes} bytes; the limit is ${MAX_CONFIG_BYTES} bytes (1 MiB)`,
    expected: `a file of at most ${MAX_CONFIG_BYTES} bytes (1 MiB)`,
    found: `${bytes} bytes`,
    offset: null,
  };
}

/** The same checks, as the message alone. */
export function guardText(text: string): string | null {
  return guardLimits(text)?.message ?? null;
}

/**
 * The lexer's tokens of `text`, in order, as the YAML parser takes them (Parser.next),
 * measured on the way: the parser never sees a token past the nesting limit, so it and
 * the composer stay within it with one lexer pass for both. `breach()` says afterwards
 * whether the tokens stopped early, and why.
 */
export function guardedLexemes(text: string): { lexemes: Iterable<string>; breach(): GuardFailure | null; anchorsOrAliases(): boolean } {
  let failure: GuardFailure | null = null;
  const meter = new NestingMeter();
  function* lexemes(): Generator<string> {
    for (const token of new Lexer().lex(text)) {
      failure = meter.feed(token);
      if (failure !== null) return;
      yield token;
    }
  }
  return { lexemes: lexemes(), breach: () => failure, anchorsOrAliases: () => meter.anchorsOrAliases };
}

function nestingBreach(text: string): GuardFailure | null {
  const meter = new NestingMeter();
  for (const token of new Lexer().lex(text)) {
    const failure = meter.feed(token);
    if (failure !== null) return failure;
  }
  return null;
}

/**
 * Block nesting is tracked as a stack of the columns where nodes start: a node at a
 * column no deeper than the top closes the levels above it. Compact forms (`- - x`,
 * `? ? x`, `a: b`) start nodes further right on the same line, so they count too.
 * Flow collections add their own depth on top. Fed the lexer's tokens one by one.
 */
class NestingMeter {
  private readonly columns: number[] = [];
  private flowDepth = 0;
  private offset = 0;
  private lineStart = 0;
  private atLineStart = true;
  private nodeExpected = true;
  private scalarNext = false;
  /** An anchor (&a) or an alias (*a) token went by. */
  anchorsOrAliases = false;

  private blockNode(column: number): void {
    const { columns } = this;
    while (columns.length > 0 && (columns[columns.length - 1] as number) >= column) columns.pop();
    columns.push(column);
  }

  /** Takes the next token; a failure when it crosses the limit (at its offset). */
  feed(token: string): GuardFailure | null {
    if (token === SCALAR_MARK) {
      this.scalarNext = true;
      return null;
    }
    if (token === DOC_MODE || token === FLOW_ERROR_END) return null;
    const type = this.scalarNext ? 'scalar' : CST.tokenType(token);
    this.scalarNext = false;
    const column = this.offset - this.lineStart;
    switch (type) {
      case 'newline':
      case 'space':
      case 'comment':
        break;
      case 'flow-seq-start':
      case 'flow-map-start':
        if (this.flowDepth === 0 && (this.atLineStart || this.nodeExpected)) this.blockNode(column);
        this.flowDepth++;
        this.nodeExpected = false;
        this.atLineStart = false;
        break;
      case 'flow-seq-end':
      case 'flow-map-end':
        this.flowDepth = Math.max(0, this.flowDepth - 1);
        this.atLineStart = false;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
      case 'map-value-ind':
        if (this.flowDepth === 0 && type !== 'map-value-ind') this.blockNode(column);
        this.nodeExpected = true;
        this.atLineStart = false;
        break;
      case 'anchor':
        this.anchorsOrAliases = true;
        break;
      case 'tag':
        // Properties belong to the node that follows; it is counted where it starts.
        break;
      case 'alias':
        this.anchorsOrAliases = true;
        if (this.flowDepth === 0 && (this.atLineStart || this.nodeExpected)) this.blockNode(column);
        this.nodeExpected = false;
        this.atLineStart = false;
        break;
      default:
        if (this.flowDepth === 0 && (this.atLineStart || this.nodeExpected)) this.blockNode(column);
        this.nodeExpected = false;
        this.atLineStart = false;
    }
    if (this.columns.length + this.flowDepth > MAX_NESTING) {
      return {
        message: `the file nests collections more than ${MAX_NESTING} levels deep`,
        expected: `collections nested at most ${MAX_NESTING} levels deep`,
        found: `deeper nesting (refused before parsing, to protect memory)`,
        offset: this.offset,
      };
    }
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline >= 0) {
      this.lineStart = this.offset + lastNewline + 1;
      this.atLineStart = true;
      this.nodeExpected = false;
    }
    this.offset += token.length;
    return null;
  }
}

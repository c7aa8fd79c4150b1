import { CST } from 'yaml';

/**
 * Measures YAML text on the yaml package's own lexer tokens, as they stream to the
 * parser (yaml-loader.ts), so that no document is built past a limit: the parser and
 * composer spend memory and stack in proportion to nesting and to the number of tokens
 * (~100,000 levels of `[` run Node out of memory; a million tokens, or half a million
 * `]` each making an error, cost about a GB), and the composer's alias handling grows
 * with anchors times aliases. The lexer makes
 * its tokens in one pass with constant memory, and reads quotes, comments and block
 * scalars exactly as the parser will.
 */

/** What the meter holds a text to; the first limit crossed stops it. */
export interface TokenLimits {
  nesting: number;
  tokens: number;
  anchorsAndAliases: number;
}

/** Which limit a text crossed, and at which character offset. */
export interface Breach {
  limit: keyof TokenLimits;
  offset: number;
}

// Tokens the lexer makes up that stand for no source characters.
const SCALAR_MARK = '\x1f';
const DOC_MODE = '\x02';
const FLOW_ERROR_END = '\x18';

/**
 * Block nesting is tracked as a stack of the columns where nodes start: a node at a
 * column no deeper than the top closes the levels above it. Compact forms (`- - x`,
 * `? ? x`, `a: b`) start nodes further right on the same line, so they count too.
 * Flow collections add their own depth on top.
 *
 * Every token counts except white space, line breaks and comments: scalars, aliases,
 * anchors, tags, and the `- ? : , [ ] { }` marks, so `a: b` counts 3 and `[1, 2]`
 * counts 5. Each becomes a node, part of one, or an error in the document. (Lines are
 * counted on the text itself, yaml-loader.ts: a block scalar's are inside one token.)
 */
export class TokenMeter {
  private readonly columns: number[] = [];
  private flowDepth = 0;
  private offset = 0;
  private lineStart = 0;
  private atLineStart = true;
  private nodeExpected = true;
  private scalarNext = false;
  private tokens = 0;
  private anchorsAndAliases = 0;

  constructor(private readonly limits: TokenLimits) {}

  /** An anchor (&a) or an alias (*a) went by: only then are aliases worth resolving. */
  get sawAnchorsOrAliases(): boolean {
    return this.anchorsAndAliases > 0;
  }

  private blockNode(column: number): void {
    const { columns } = this;
    while (columns.length > 0 && (columns[columns.length - 1] as number) >= column) columns.pop();
    columns.push(column);
  }

  /** Takes the next token; the limit it crosses, at its offset, or null. */
  feed(token: string): Breach | null {
    if (token === SCALAR_MARK) {
      this.scalarNext = true;
      return null;
    }
    if (token === DOC_MODE || token === FLOW_ERROR_END) return null;
    const type = this.scalarNext ? 'scalar' : CST.tokenType(token);
    this.scalarNext = false;
    const column = this.offset - this.lineStart;
    if (type !== 'newline' && type !== 'space' && type !== 'comment') this.tokens++;
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
        this.anchorsAndAliases++;
        break;
      case 'tag':
        // Properties belong to the node that follows; it is counted where it starts.
        break;
      case 'alias':
        this.anchorsAndAliases++;
        if (this.flowDepth === 0 && (this.atLineStart || this.nodeExpected)) this.blockNode(column);
        this.nodeExpected = false;
        this.atLineStart = false;
        break;
      default:
        if (this.flowDepth === 0 && (this.atLineStart || this.nodeExpected)) this.blockNode(column);
        this.nodeExpected = false;
        this.atLineStart = false;
    }
    const crossed = this.crossed();
    if (crossed !== null) return { limit: crossed, offset: this.offset };
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline >= 0) {
      this.lineStart = this.offset + lastNewline + 1;
      this.atLineStart = true;
      this.nodeExpected = false;
    }
    this.offset += token.length;
    return null;
  }

  private crossed(): keyof TokenLimits | null {
    const { limits } = this;
    if (this.columns.length + this.flowDepth > limits.nesting) return 'nesting';
    if (this.tokens > limits.tokens) return 'tokens';
    if (this.anchorsAndAliases > limits.anchorsAndAliases) return 'anchorsAndAliases';
    return null;
  }
}

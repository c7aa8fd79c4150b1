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
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) {
    return {
      message: `the file is ${bytes} bytes; the limit is ${MAX_CONFIG_BYTES} bytes (1 MiB)`,
      expected: `a file of at most ${MAX_CONFIG_BYTES} bytes (1 MiB)`,
      found: `${bytes} bytes`,
      offset: null,
    };
  }
  return nestingBreach(text);
}

/** The same checks, as the message alone. */
export function guardText(text: string): string | null {
  return guardLimits(text)?.message ?? null;
}

/**
 * Block nesting is tracked as a stack of the columns where nodes start: a node at a
 * column no deeper than the top closes the levels above it. Compact forms (`- - x`,
 * `? ? x`, `a: b`) start nodes further right on the same line, so they count too.
 * Flow collections add their own depth on top.
 */
function nestingBreach(text: string): GuardFailure | null {
  const columns: number[] = [];
  let flowDepth = 0;
  let offset = 0;
  let lineStart = 0;
  let atLineStart = true;
  let nodeExpected = true;
  let scalarNext = false;

  const tooDeep = () => columns.length + flowDepth > MAX_NESTING;
  const blockNode = (column: number) => {
    while (columns.length > 0 && (columns[columns.length - 1] as number) >= column) columns.pop();
    columns.push(column);
  };

  for (const token of new Lexer().lex(text)) {
    if (token === SCALAR_MARK) { scalarNext = true; continue; }
    if (token === DOC_MODE || token === FLOW_ERROR_END) continue;
    const type = scalarNext ? 'scalar' : CST.tokenType(token);
    scalarNext = false;
    const column = offset - lineStart;
    switch (type) {
      case 'newline':
      case 'space':
      case 'comment':
        break;
      case 'flow-seq-start':
      case 'flow-map-start':
        if (flowDepth === 0 && (atLineStart || nodeExpected)) blockNode(column);
        flowDepth++;
        nodeExpected = false;
        atLineStart = false;
        break;
      case 'flow-seq-end':
      case 'flow-map-end':
        flowDepth = Math.max(0, flowDepth - 1);
        atLineStart = false;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
      case 'map-value-ind':
        if (flowDepth === 0 && type !== 'map-value-ind') blockNode(column);
        nodeExpected = true;
        atLineStart = false;
        break;
      case 'anchor':
      case 'tag':
        // Properties belong to the node that follows; it is counted where it starts.
        break;
      default:
        if (flowDepth === 0 && (atLineStart || nodeExpected)) blockNode(column);
        nodeExpected = false;
        atLineStart = false;
    }
    if (tooDeep()) {
      return {
        message: `the file nests collections more than ${MAX_NESTING} levels deep`,
        expected: `collections nested at most ${MAX_NESTING} levels deep`,
        found: `deeper nesting (refused before parsing, to protect memory)`,
        offset,
      };
    }
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline >= 0) {
      lineStart = offset + lastNewline + 1;
      atLineStart = true;
      nodeExpected = false;
    }
    offset += token.length;
  }
  return null;
}

import { isAlias, isMap, isScalar, isSeq, visit, type Document, type LineCounter, type Node } from 'yaml';
import type { ConfigProblem } from './types.js';

/**
 * The parsed document as the validators read it: nodes with their positions, aliases
 * resolved to the node they stand for, and the problems found so far. Validators
 * only ever read from it and add problems; nothing here throws for a bad file.
 */
export class Tree {
  readonly errors: ConfigProblem[] = [];
  readonly warnings: ConfigProblem[] = [];
  readonly #lines: LineCounter;
  readonly #aliases = new Map<unknown, Node | undefined>();

  /**
   * `props` false: the lexer saw no anchor and no alias in the text (guard.ts), so the
   * walk that maps aliases to their anchors is skipped (5 ms at 1000 tunnels).
   */
  constructor(readonly doc: Document, lines: LineCounter, props = true) {
    this.#lines = lines;
    if (!props) return;
    // An alias means the last anchor of its name before it. One pass in document
    // order finds them all; Alias.resolve() would walk the whole document per alias.
    const anchors = new Map<string, Node>();
    visit(doc, {
      Node: (_key, node) => {
        if (isAlias(node)) this.#aliases.set(node, anchors.get(node.source));
        else if (node.anchor) anchors.set(node.anchor, node);
      },
    });
  }

  /** Every alias of the document, in document order, with the node it stands for (undefined when none comes before it). */
  aliasTargets(): ReadonlyMap<unknown, Node | undefined> {
    return this.#aliases;
  }

  /** The node an alias stands for; any other value unchanged. */
  deref(node: unknown): unknown {
    return isAlias(node) ? this.#aliases.get(node) : node;
  }

  /** 1-based line and column where `node` starts; 0, 0 when it has no position. */
  at(node: unknown): { line: number; column: number } {
    const range = (node as Node | null | undefined)?.range;
    if (!range) return { line: 0, column: 0 };
    return this.position(range[0]);
  }

  position(offset: number): { line: number; column: number } {
    const { line, col } = this.#lines.linePos(offset);
    return line === 0 ? { line: 1, column: offset + 1 } : { line, column: col };
  }

  error(node: unknown, field: string, expected: string, found: string): void {
    this.errors.push({ ...this.at(node), field, expected, found });
  }

  warn(node: unknown, field: string, expected: string, found: string): void {
    this.warnings.push({ ...this.at(node), field, expected, found });
  }
}

const MAX_SHOWN = 80;

/** A value quoted for a message, cut short and with control characters escaped. */
export function quote(text: string): string {
  const cut = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  return JSON.stringify(cut);
}

/**
 * A node described for a message: scalars as written (quoted), collections by kind.
 * `secret` hides the value itself (an API key must not end up in a log or a response).
 */
export function describe(node: unknown, opts: { secret?: boolean } = {}): string {
  if (node === undefined || node === null) return 'nothing';
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isAlias(node)) return `an alias to an unknown anchor (*${node.source})`;
  if (!isScalar(node)) return 'something that is not a value';
  const v = node.value;
  if (v === null || v === undefined) return 'nothing (null)';
  if (typeof v === 'boolean') return `${v} (a boolean)`;
  if (opts.secret) return typeof v === 'string' ? 'a string (not shown)' : `a ${typeof v} (not shown)`;
  if (typeof v === 'number') return quote(node.source ?? String(v));
  if (typeof v === 'string') return quote(v);
  return `a ${typeof v}`;
}

/**
 * A scalar's text as written, quotes removed: `5432` → "5432", `'a'` → "a". Numbers
 * keep their source text (`05432` stays "05432"), which is what the tunnel hash is
 * taken from. Null for anything that is not a string or a number.
 */
export function scalarText(node: unknown): string | null {
  if (!isScalar(node)) return null;
  const v = node.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return node.source ?? String(v);
  return null;
}

/** A map key as a plain string (`"name"`, `name`, `5`), or null for a key that is not a scalar. */
export function keyText(key: unknown): string | null {
  if (!isScalar(key)) return null;
  const v = key.value;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return key.source ?? String(v);
  return null;
}

/** A field path segment: `a.b` for names that read well, `a["odd key"]` for others. */
export function child(path: string, key: string): string {
  const seg = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : `[${quote(key)}]`;
  if (path === '') return seg;
  return seg.startsWith('[') ? `${path}${seg}` : `${path}.${seg}`;
}

const ENTRY = /^tunnels\[(\d+)\]/;

/** The index of the entry a field path (`tunnels[3].remote_port`) is about, or null for one outside `tunnels:` entries. */
export function entryIndexOf(field: string): number | null {
  const m = ENTRY.exec(field);
  return m ? Number(m[1]) : null;
}

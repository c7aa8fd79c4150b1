import { Document, isScalar, parseDocument, visit, type ScalarTag, type ToStringOptions } from 'yaml';
import { guardText } from '../config/guard.js';
import { err, ok, type Result } from '../result.js';

/**
 * A non-string plain scalar as it was written (`05432`, `1e3`, `0o17`). The yaml
 * package would print such values in its own canonical form, which changes the text
 * the tunnel hash is taken from; nodes the panel did not edit must come out verbatim.
 */
class Verbatim {
  constructor(readonly source: string) {}
}

const verbatimTag: ScalarTag = {
  tag: 'tag:tunnel-manager.local,2025:verbatim',
  default: true,
  identify: (v) => v instanceof Verbatim,
  resolve: (s) => s,
  stringify: (node) => ((node as { value: Verbatim }).value).source,
};

/** How the file is laid out, so that a re-printed document looks like the original. */
function inferFormat(text: string): ToStringOptions {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const indents = lines.map((l) => l.length - l.trimStart().length).filter((n) => n > 0);
  const indent = Math.min(8, Math.max(2, indents.length > 0 ? Math.min(...indents) : 2));
  // A block sequence written at the same column as its parent key ("key:\n- item").
  let indentSeq = true;
  for (let i = 0; i + 1 < lines.length; i++) {
    const here = lines[i] as string;
    const next = lines[i + 1] as string;
    if (/:\s*(#.*)?$/.test(here) && next.trimStart().startsWith('- ')) {
      indentSeq = next.length - next.trimStart().length > here.length - here.trimStart().length;
      break;
    }
  }
  const flowCollectionPadding = !/[{[][^\s\]}]/.test(text) || /[{[] /.test(text);
  return { indent, indentSeq, flowCollectionPadding, lineWidth: 0, minContentWidth: 0 };
}

/** A YAML document of the config file, ready to be edited in place and printed back. */
export interface EditableDoc {
  doc: Document;
  format: ToStringOptions;
}

/**
 * Parses the file for editing. A file the YAML parser rejects (or the size and nesting
 * guard refuses) cannot be edited without losing something, so it is refused: the
 * user fixes it by hand, and the message says where.
 */
export function parseEditable(text: string): Result<EditableDoc, string> {
  const guard = guardText(text);
  if (guard !== null) return err(guard);
  const doc = parseDocument(text, { customTags: [verbatimTag], uniqueKeys: true, prettyErrors: true });
  const first = doc.errors[0];
  if (first) return err(`the file is not valid YAML, fix it by hand first: ${first.message.split('\n')[0]}`);
  visit(doc, {
    Scalar(_key, node) {
      const kind = typeof node.value;
      if (node.type === 'PLAIN' && node.tag === undefined && (kind === 'number' || kind === 'boolean' || kind === 'bigint') && node.source !== undefined) {
        node.value = new Verbatim(node.source);
      }
    },
  });
  return ok({ doc, format: inferFormat(text) });
}

function hasBlockScalar(doc: Document): boolean {
  let found = false;
  visit(doc, {
    Scalar(_key, node) {
      if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') found = true;
    },
  });
  return found;
}

/** The document as text, laid out like the file it came from. */
export function printEditable(e: EditableDoc): string {
  if (e.doc.contents === null) {
    const comment = e.doc.commentBefore;
    return comment ? `${comment.split('\n').map((l) => `#${l}`).join('\n')}\n` : '';
  }
  const text = e.doc.toString(e.format);
  // The printer indents blank lines between comments; outside block scalars they carry nothing.
  return hasBlockScalar(e.doc) ? text : text.replace(/^[ \t]+$/gm, '');
}

/** A scalar's text as written: plain scalars their source, quoted ones their value. */
export function scalarText(node: unknown): string | null {
  if (!isScalar(node)) return null;
  const v = node.value;
  if (v instanceof Verbatim) return v.source;
  if (node.type === 'PLAIN' && node.source !== undefined) return node.source;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? null : String(v);
}

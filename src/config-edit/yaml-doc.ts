import { isScalar, visit, type Document, type ScalarTag, type ToStringOptions } from 'yaml';
import { loadYaml, refusalText } from '../config/yaml-loader.js';
import { err, ok, type Result } from '../kernel/result.js';

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
  // A loop, not Math.min(...): a spread of one argument per line overflows the stack on a large file.
  let least = Infinity;
  for (const l of lines) {
    const n = l.length - l.trimStart().length;
    if (n > 0 && n < least) least = n;
  }
  const indent = Math.min(8, Math.max(2, least === Infinity ? 2 : least));
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
 * Parses the file for editing. A file the YAML parser rejects (or the loader's limits
 * refuse) cannot be edited without losing something, so it is refused: the
 * user fixes it by hand, and the message says where.
 */
export function parseEditable(text: string): Result<EditableDoc, string> {
  const loaded = loadYaml(text, { customTags: [verbatimTag], logLevel: 'warn', positions: true });
  if (!loaded.ok) return err(`the file is refused, fix it by hand first: ${refusalText(loaded.error)}`);
  const { doc } = loaded.value;
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

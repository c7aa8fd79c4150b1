import { isMap, isSeq, Scalar, type Document, type YAMLSeq } from 'yaml';
import { flattenMerges } from '../config/merge.js';
import { aliasExpansion } from '../config/yaml-loader.js';
import { err, ok, type Result } from '../kernel/result.js';
import { releaseAnchors } from './anchors.js';

/**
 * "Never loses an edit" for the entries an edit is not about: what each of them means
 * (aliases and merge keys applied) is taken before the edit and compared after it. An
 * entry that changed through something it shared with the edited one (an anchored map
 * it merges, an alias into it) gets the changed keys written out with their old
 * values (null for a key it never had); the rest of its merge or aliases stays. What cannot be kept so is an error,
 * and the caller writes nothing.
 */

/** One entry as the daemon reads it: plain data, aliases expanded, merge keys applied. */
type Meaning = unknown;

/** Plain data with keys sorted, so that two meanings compare as text. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x) && x.constructor === Object
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

function tunnelsOf(doc: Document): unknown[] {
  const root = doc.contents;
  const seq = isMap(root) ? root.get('tunnels', true) : undefined;
  return isSeq(seq) ? seq.items : [];
}

/** What every entry means now, by its node; an error when an alias has no anchor before it. */
export function meanings(doc: Document): Result<Map<unknown, Meaning>, string> {
  // The document may have been edited since the loader measured it: what its aliases
  // expand to is measured again, as canonical() would write every expansion out.
  const expansion = aliasExpansion(doc);
  if (expansion !== null) return err(`the file's aliases cannot be read: *${expansion.alias} ${expansion.kind === 'loop' ? 'is inside the node it names' : 'expands the data too far'}`);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: -1 });
  } catch (e) {
    // The yaml package throws ReferenceError for an alias with no anchor before it.
    if (!(e instanceof ReferenceError)) throw e;
    return err(`the file's aliases cannot be read: ${e.message.split('\n')[0]}`);
  }
  const list = (data as { tunnels?: unknown } | null)?.tunnels;
  const values = Array.isArray(list) ? list : [];
  return ok(new Map(tunnelsOf(doc).map((item, i) => [item, withoutNulls(flattenMerges(values[i]))])));
}

/** A tunnel field that is null means what an absent one means (the default, or none). */
function withoutNulls(entry: unknown): Meaning {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== null));
}

const sameMeaning = (a: Meaning, b: Meaning) => canonical(a) === canonical(b);

const asRecord = (v: Meaning): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * Brings back what every entry other than `edited` meant before the edit. `seq` is
 * the list after the edit; entries are matched by node, so a deleted or moved entry
 * does not shift the others.
 */
export function keepOthers(doc: Document, seq: YAMLSeq, before: ReadonlyMap<unknown, Meaning>, edited: ReadonlySet<unknown>): Result<void, string> {
  const now = meanings(doc);
  if (!now.ok) return now;
  for (const [i, item] of seq.items.entries()) {
    if (edited.has(item) || !before.has(item)) continue;
    const old = before.get(item);
    const current = now.value.get(item);
    if (sameMeaning(old, current)) continue;
    if (!isMap(item)) {
      // A whole entry that was an alias (`- *x`) becomes the value it stood for.
      seq.items[i] = doc.createNode(old);
      continue;
    }
    const was = asRecord(old);
    const is = asRecord(current);
    for (const key of new Set([...Object.keys(was), ...Object.keys(is)])) {
      if (sameMeaning(was[key], is[key])) continue;
      releaseAnchors(doc, item.get(key, true));
      // A key it would gain from a map it merges is set to an empty value here: absent, as
      // before. Empty, not the word `null`: a null written as a word is text to the hash.
      const value = key in was ? was[key] : null;
      item.set(key, value === null ? emptyValue() : doc.createNode(value));
    }
  }
  return check(doc, seq, before, edited);
}

function emptyValue(): Scalar {
  const node = new Scalar(null);
  node.source = '';
  return node;
}

function check(doc: Document, seq: YAMLSeq, before: ReadonlyMap<unknown, Meaning>, edited: ReadonlySet<unknown>): Result<void, string> {
  const now = meanings(doc);
  if (!now.ok) return now;
  for (const [i, item] of seq.items.entries()) {
    if (edited.has(item) || !before.has(item)) continue;
    if (!sameMeaning(before.get(item), now.value.get(item))) {
      return err(`tunnel number ${i + 1} shares anchors or merge keys with the edited one in a way this edit cannot keep; edit the file by hand`);
    }
  }
  return ok(undefined);
}

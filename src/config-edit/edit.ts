import { isAlias, isMap, isScalar, isSeq, type Document, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { err, ok, type Result } from '../kernel/result.js';
import { aliasTargets, derefIn, keepAliasTargets, materialize, releaseAnchors } from './anchors.js';
import { keepOthers, meanings } from './keep-values.js';
import { linesOf, readEntries, tunnelsNode, viewOf, type EditFailure } from './read-entries.js';
import { FORM_FIELDS, inputHash, type Edit, type TunnelInput } from './tunnel-input.js';
import { writtenEntriesHold, type Written } from './verify.js';
import { newEntry, setField, setHealthCheck, setInteractive } from './write-entry.js';
import { parseEditable, printEditable, type EditableDoc } from './yaml-doc.js';
import { unreachable } from '../kernel/unreachable.js';

/**
 * Editing the `tunnels:` list of the config file through the yaml Document API: nodes
 * are changed in place, so comments, key order, quoting and keys the form does not
 * know (ssh_options, anything else) survive every save. The panel and the daemon's
 * `/config` API both edit through this module. Only `tunnels:` entries are touched:
 * `${VAR}` references elsewhere (provider keys) are never expanded or rewritten.
 */

/**
 * Replaces the whole list: an entry with an incoming hash is kept as it is; one at the
 * same place is edited in place; the rest are new. Returns the entries it wrote.
 */
function replaceAll(doc: Document, seq: YAMLSeq, tunnels: readonly TunnelInput[], text: string): { edited: Set<unknown>; written: Written[] } {
  const deref = derefIn(doc);
  const lines = linesOf(text);
  const old = seq.items.map((item, i) => ({ item, view: viewOf(lines, item, i, deref) }));
  const incoming = tunnels.map((t) => inputHash({ ...t, interactive: t.interactive ?? false }));
  const used = new Set<number>();
  const keptByHash = incoming.map((h) => {
    const j = old.findIndex((o, k) => !used.has(k) && o.view.hash === h);
    if (j >= 0) used.add(j);
    return j;
  });
  const edited = new Set<unknown>();
  const items = tunnels.map((t, i) => {
    const kept = keptByHash[i] ?? -1;
    if (kept >= 0) return old[kept]?.item;
    const here = old[i];
    const entry = here !== undefined && !used.has(i) && isMap(here.item) ? here.item : newEntry(doc, t.fields, seq.items);
    if (entry === here?.item) {
      used.add(i);
      for (const f of FORM_FIELDS) setField(doc, entry, f, t.fields[f]);
    }
    setInteractive(doc, entry, t.interactive);
    setHealthCheck(doc, entry, t.health_check);
    edited.add(entry);
    return entry;
  });
  // Entries that go: anchors in them that others use move first, in file order.
  for (const [k, o] of old.entries()) if (!used.has(k)) releaseAnchors(doc, o.item);
  const targets = aliasTargets(doc);
  seq.items = items;
  keepAliasTargets(doc, targets);
  return { edited, written: tunnels.map((input, index) => ({ index, input, checkHealth: (keptByHash[index] ?? -1) < 0 })) };
}

function ensureTunnels(e: EditableDoc): YAMLSeq {
  const { doc } = e;
  const root = doc.contents;
  if (!isMap(root)) {
    const comment = isScalar(root) ? root.commentBefore ?? root.comment : undefined;
    doc.contents = doc.createNode({}) as YAMLMap;
    if (comment) doc.commentBefore = doc.commentBefore ? `${doc.commentBefore}\n${comment}` : comment;
  }
  const map = doc.contents as YAMLMap;
  const existing = map.get('tunnels', true);
  if (isSeq(existing)) return existing;
  const seq = doc.createNode([]) as YAMLSeq;
  const comment = isScalar(existing) ? existing.comment : undefined;
  if (comment) seq.comment = comment;
  if (existing !== undefined) map.set('tunnels', seq);
  else map.items.unshift(doc.createPair('tunnels', seq) as Pair);
  return seq;
}

/** What an edit did: the list after it, the entries it wrote (matched by node) and what they must read back as. */
interface Change {
  seq: YAMLSeq;
  edited: Set<unknown>;
  written: Written[];
}

function change(e: EditableDoc, found: YAMLSeq | null, edit: Edit, text: string): Result<Change, EditFailure> {
  switch (edit.kind) {
    case 'add': {
      const seq = ensureTunnels(e);
      const entry = newEntry(e.doc, edit.fields, seq.items);
      setInteractive(e.doc, entry, edit.interactive);
      setHealthCheck(e.doc, entry, edit.health_check);
      seq.items.push(entry);
      return ok({ seq, edited: new Set([entry]), written: [{ index: seq.items.length - 1, input: edit, checkHealth: true }] });
    }
    case 'replace': {
      const seq = ensureTunnels(e);
      return ok({ seq, ...replaceAll(e.doc, seq, edit.tunnels, text) });
    }
    case 'update': {
      let item = found?.items[edit.index];
      if (item === undefined || found === null) return err({ reason: 'not_found', message: `the file has no tunnel number ${edit.index + 1}` });
      const deref = derefIn(e.doc);
      const target = deref(item);
      const written: Written[] = [{ index: edit.index, input: edit, checkHealth: true }];
      if (isAlias(item) && isMap(target)) {
        // Only an edit that changes something turns the alias into an entry of its own.
        if (writtenEntriesHold([viewOf(() => 0, item, 0, deref)], [{ ...written[0]!, index: 0 }]).ok) return ok({ seq: found, edited: new Set([item]), written });
        item = materialize(target);
        found.items[edit.index] = item;
      }
      if (!isMap(item)) return err({ reason: 'shape', message: `tunnel number ${edit.index + 1} is not a map; fix it by hand first` });
      for (const f of FORM_FIELDS) setField(e.doc, item, f, edit.fields[f]);
      setInteractive(e.doc, item, edit.interactive);
      setHealthCheck(e.doc, item, edit.health_check);
      return ok({ seq: found, edited: new Set([item]), written });
    }
    case 'delete': {
      const seq = found;
      if (seq === null || edit.index >= seq.items.length) {
        return err({ reason: 'not_found', message: `the file has no tunnel number ${edit.index + 1}` });
      }
      // Anchors in the entry that others use move to the first of them before it goes.
      releaseAnchors(e.doc, seq.items[edit.index]);
      const [removed] = seq.items.splice(edit.index, 1);
      // The parser hangs the first entry's own comment on the list; a header above it, set
      // off by a blank line, stays.
      if (edit.index === 0 && seq.commentBefore) {
        const paragraphs = seq.commentBefore.split('\n\n');
        paragraphs.pop();
        seq.commentBefore = paragraphs.length > 0 ? paragraphs.join('\n\n') : null;
      }
      // A blank line that separated the removed entry from the one before stays with its successor.
      const next = seq.items[edit.index] as { spaceBefore?: boolean } | undefined;
      if ((removed as { spaceBefore?: boolean }).spaceBefore && next) next.spaceBefore = true;
      return ok({ seq, edited: new Set(), written: [] });
    }
    default:
      return unreachable(edit, 'edit');
  }
}

/**
 * Applies one edit to the file's text and returns the new text; everything else is
 * kept. Every other entry still means what it meant (aliases and merge keys applied),
 * the entries written read back as sent, and the result parses; when that cannot be
 * had, the edit is refused and nothing is written.
 */
export function applyEdit(text: string, edit: Edit): Result<string, EditFailure> {
  const parsed = parseEditable(text);
  if (!parsed.ok) return err({ reason: 'unparsable', message: parsed.error });
  const e = parsed.value;
  const found = tunnelsNode(e.doc);
  if (!found.ok) return found;
  const before = meanings(e.doc);
  if (!before.ok) return err({ reason: 'unparsable', message: `${before.error}; fix it by hand first` });
  const changed = change(e, found.value, edit, text);
  if (!changed.ok) return changed;
  const { seq, edited, written } = changed.value;
  const kept = keepOthers(e.doc, seq, before.value, edited);
  if (!kept.ok) return err({ reason: 'shape', message: `nothing was saved: ${kept.error}` });
  const out = printEditable(e);
  const views = readEntries(out);
  if (!views.ok) return err({ reason: 'shape', message: `nothing was saved: the edit would leave a file that does not parse (${views.error.message})` });
  const holds = writtenEntriesHold(views.value, written);
  return holds.ok ? ok(out) : err({ reason: 'shape', message: holds.error });
}

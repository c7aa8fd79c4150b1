import { isAlias, isMap, isScalar, isSeq, LineCounter, Scalar, type Document, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { err, ok, type Result } from '../result.js';
import { DEFAULT_DIRECTION, DEFAULT_NAME, entryHash, fieldsOf, readInteractive } from '../config/identity.js';
import { fieldPair } from '../config/merge.js';
import { aliasTargets, derefIn, keepAliasTargets, materialize, releaseAnchors, type Deref } from './anchors.js';
import { keepOthers, meanings } from './keep-values.js';
import { writtenEntriesHold, type Written } from './verify.js';
import { parseEditable, printEditable, scalarText, type EditableDoc } from './yaml-doc.js';
import { unreachable } from '../unreachable.js';

/**
 * Editing the `tunnels:` list of the config file through the yaml Document API: nodes
 * are changed in place, so comments, key order, quoting and keys the form does not
 * know (ssh_options, anything else) survive every save. The panel and the daemon's
 * `/config` API both edit through this module. Only `tunnels:` entries are touched:
 * `${VAR}` references elsewhere (provider keys) are never expanded or rewritten.
 */

/** The fields the panel's form edits, in the order a new entry is written. */
export const FORM_FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'] as const;
export type FormField = (typeof FORM_FIELDS)[number];
export type TunnelFields = Record<FormField, string>;

/** A `health_check:` as the form edits it: the text of each field, '' when absent (the daemon's validation judges it). */
export interface HealthCheckInput {
  type: string;
  interval: string;
  failures: string;
  path: string;
}
const HEALTH_CHECK_KEYS = ['type', 'interval', 'failures', 'path'] as const;

/** One entry of `tunnels:` as written in the file. */
export interface EntryView {
  index: number;
  /** 1-based line of the entry. */
  line: number;
  /** The form's fields as written; '' when absent. */
  fields: TunnelFields;
  interactive: boolean;
  /** The entry's `health_check:` when it is a map (then the form edits it), else null. */
  health_check: HealthCheckInput | null;
  /** Other keys of the entry (ssh_options, unknown ones, a health_check that is not a map), kept untouched by edits. */
  other_keys: string[];
  /** The tunnel's hash from the values as written (SPEC §5), null when the entry is not a map. */
  hash: string | null;
}

/** One tunnel as a client sends it: the form's fields, and `interactive` when the client sets it. */
export interface TunnelInput {
  fields: TunnelFields;
  /** Undefined leaves the entry's `interactive` as written (the panel's form does not show it). */
  interactive?: boolean;
  /** Undefined leaves `health_check` as written; null (or an empty type) removes it. */
  health_check?: HealthCheckInput | null;
}

export type Edit =
  | ({ kind: 'add' } & TunnelInput)
  | ({ kind: 'update'; index: number } & TunnelInput)
  | { kind: 'delete'; index: number }
  /** The whole list replaced (the reference's `POST /config`); entries that keep their hash keep their node. */
  | { kind: 'replace'; tunnels: TunnelInput[] };

/** The hash a tunnel sent by a client gets once written (SPEC §5), read by the one identity rule of the config. */
export function inputHash(t: TunnelInput): string {
  return entryHash((key) => {
    if (key === 'interactive') return t.interactive === undefined ? undefined : new Scalar(String(t.interactive));
    return new Scalar(t.fields[key]);
  });
}

export type EditFailure =
  | { reason: 'unparsable'; message: string }
  | { reason: 'not_found'; message: string }
  | { reason: 'shape'; message: string };

/** 1-based line of an offset in `text` (0 for none); the line starts are found once per text. */
type LineOf = (offset: number | undefined) => number;

function linesOf(text: string): LineOf {
  const lines = new LineCounter();
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  return (offset) => (offset === undefined ? 0 : lines.linePos(offset).line);
}

function tunnelsNode(doc: Document): Result<YAMLSeq | null, EditFailure> {
  const root = doc.contents;
  if (root === null || (isScalar(root) && (root.value === null || root.value === undefined))) return ok(null);
  if (!isMap(root)) return err({ reason: 'shape', message: 'the file is not a YAML map with a "tunnels:" key; fix it by hand first' });
  const t = root.get('tunnels', true);
  if (t === undefined || (isScalar(t) && (t.value === null || t.value === undefined))) return ok(null);
  if (!isSeq(t)) return err({ reason: 'shape', message: '"tunnels:" is not a list; fix it by hand first' });
  return ok(t);
}

/** What a form value means: an empty name or direction is the default, written or not. */
export function fieldMeaning(field: FormField, text: string): string {
  if (text !== '') return text;
  if (field === 'name') return DEFAULT_NAME;
  return field === 'direction' ? DEFAULT_DIRECTION : '';
}

/** A key's value as the daemon reads it: aliases resolved, merge keys (`<<: *defaults`) applied. */
function fieldValue(map: YAMLMap, key: string, deref: Deref): unknown {
  return deref(fieldPair(deref, map, key)?.pair.value);
}

function fieldText(map: YAMLMap, key: string, deref: Deref): string {
  return scalarText(fieldValue(map, key, deref)) ?? '';
}

function viewOf(lineOf: LineOf, written: unknown, index: number, deref: Deref): EntryView {
  const item = deref(written);
  const range = (item as { range?: [number, number, number] }).range;
  const empty: TunnelFields = { name: '', remote_host: '', remote_port: '', local_port: '', direction: '' };
  if (!isMap(item)) return { index, line: lineOf(range?.[0]), fields: empty, interactive: false, health_check: null, other_keys: [], hash: null };
  const fields = { ...empty };
  for (const f of FORM_FIELDS) fields[f] = fieldText(item, f, deref);
  const reading = readInteractive(fieldValue(item, 'interactive', deref));
  const interactive = reading.ok && reading.value;
  const keys = item.items.map((p) => scalarText(p.key) ?? '?');
  const health_check = healthCheckOf(item, deref);
  const other_keys = keys.filter((k) => !(FORM_FIELDS as readonly string[]).includes(k) && !(k === 'health_check' && health_check !== null));
  const hash = entryHash(fieldsOf(deref, item));
  return { index, line: lineOf(range?.[0]), fields, interactive, health_check, other_keys, hash };
}

function healthCheckOf(entry: YAMLMap, deref: Deref): HealthCheckInput | null {
  const node = fieldValue(entry, 'health_check', deref);
  if (!isMap(node)) return null;
  const out: HealthCheckInput = { type: '', interval: '', failures: '', path: '' };
  for (const k of HEALTH_CHECK_KEYS) out[k] = fieldText(node, k, deref);
  return out;
}

/**
 * Sets `health_check` from the form: a changed one is written anew (a block map with
 * the fields given; digits as numbers), an unchanged one is left as written.
 */
function setHealthCheck(doc: Document, map: YAMLMap, value: HealthCheckInput | null | undefined): void {
  if (value === undefined) return;
  const current = healthCheckOf(map, derefIn(doc));
  const own = map.get('health_check', true);
  if (value === null || value.type === '') {
    if (own === undefined && current === null) return;
    releaseAnchors(doc, own);
    if (own !== undefined) map.delete('health_check');
    // One a merge key brings would still apply: this entry says it has none.
    if (fieldValue(map, 'health_check', derefIn(doc)) !== undefined) map.set('health_check', null);
    return;
  }
  if (current !== null && HEALTH_CHECK_KEYS.every((k) => current[k] === value[k])) return;
  releaseAnchors(doc, own);
  const out: Record<string, string | number> = {};
  for (const k of HEALTH_CHECK_KEYS) {
    const v = value[k];
    if (v !== '') out[k] = (k === 'interval' || k === 'failures') && /^\d{1,6}$/.test(v) ? Number(v) : v;
  }
  map.set('health_check', doc.createNode(out));
}

/** Every entry of `tunnels:` as written. A file with no tunnels (or none at all) has none. */
export function readEntries(text: string): Result<EntryView[], EditFailure> {
  const parsed = parseEditable(text);
  if (!parsed.ok) return err({ reason: 'unparsable', message: parsed.error });
  const seq = tunnelsNode(parsed.value.doc);
  if (!seq.ok) return seq;
  const deref = derefIn(parsed.value.doc);
  const lines = linesOf(text);
  return ok((seq.value?.items ?? []).map((item, i) => viewOf(lines, item, i, deref)));
}

/** What a form value becomes in YAML: ports that are only digits are numbers, the rest strings. */
function typedValue(field: FormField, value: string): string | number {
  if ((field === 'remote_port' || field === 'local_port') && /^[1-9]\d{0,4}$/.test(value)) return Number(value);
  return value;
}

/**
 * Sets one field. A value that already reads as wanted is left as written: its quoting,
 * an alias (`*x`) or a merge key that brings it. A changed one keeps its node (quote
 * style, comment) and is changed on this entry only: an anchor on it moves to the
 * first place that aliased it first (releaseAnchors); a merged field is overridden by
 * a key written in the entry, the merge itself stays.
 */
function setField(doc: Document, map: YAMLMap, field: FormField, value: string): void {
  const now = fieldText(map, field, derefIn(doc));
  // A client that sends back the default of a field the entry leaves out (the reference's
  // records fill direction in) changes nothing.
  if (now === value || (now === '' && fieldMeaning(field, '') === value)) return;
  const own = map.get(field, true);
  // An empty name or direction means the default (`unnamed`, remote_to_local): no key is
  // written for it, and an existing one is removed, as the reference's files leave them out.
  if (value === '' && (field === 'name' || field === 'direction')) {
    if (own !== undefined) {
      releaseAnchors(doc, own);
      removePair(map, field);
    }
    // A merged value would show through: the default is written out instead.
    if (fieldText(map, field, derefIn(doc)) !== '') insertPair(doc, map, field, field === 'name' ? DEFAULT_NAME : DEFAULT_DIRECTION);
    return;
  }
  const typed = typedValue(field, value);
  releaseAnchors(doc, own);
  if (isScalar(own)) {
    const quoted = own.type === 'QUOTE_DOUBLE' || own.type === 'QUOTE_SINGLE';
    own.value = quoted ? value : typed;
    own.format = undefined;
  } else if (own !== undefined) {
    map.set(field, doc.createNode(typed));
  } else {
    insertPair(doc, map, field, typed);
  }
}

/** Removes a key; a comment above it stays, above the key that follows. */
function removePair(map: YAMLMap, field: string): void {
  const idx = map.items.findIndex((p) => scalarText(p.key) === field);
  const [removed] = map.items.splice(idx, 1);
  const comment = (removed?.key as { commentBefore?: string } | undefined)?.commentBefore;
  const next = map.items[idx]?.key as { commentBefore?: string } | undefined;
  if (comment && next) next.commentBefore = next.commentBefore ? `${comment}\n${next.commentBefore}` : comment;
}

/** A missing key goes where a new entry would have it, before the first field that follows it. */
function insertPair(doc: Document, map: YAMLMap, field: FormField, typed: string | number): void {
  const order = FORM_FIELDS.indexOf(field);
  const at = map.items.findIndex((p) => {
    const i = FORM_FIELDS.indexOf(scalarText(p.key) as FormField);
    return i > order;
  });
  const pair = doc.createPair(field, typed) as Pair;
  if (at < 0) map.items.push(pair);
  else map.items.splice(at, 0, pair);
}

/**
 * Sets `interactive` when the client said something and it differs from what the entry
 * means: written as a plain `true`/`false` (an absent key already means false).
 */
function setInteractive(doc: Document, map: YAMLMap, value: boolean | undefined): void {
  if (value === undefined) return;
  // Any spelling that already means the value stays as written: its text is part of the hash.
  const current = readInteractive(fieldValue(map, 'interactive', derefIn(doc)));
  if (current.ok && current.value === value) return;
  const node = map.get('interactive', true);
  releaseAnchors(doc, node);
  if (isScalar(node)) {
    node.value = value;
    node.type = 'PLAIN';
    node.format = undefined;
    return;
  }
  map.set('interactive', doc.createNode(value));
}

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

/** A new entry, quoted the way the last entry quotes the same keys; flow style only if every entry is. */
function newEntry(doc: Document, fields: TunnelFields, siblings: readonly unknown[]): YAMLMap {
  const like = siblings[siblings.length - 1];
  const map = doc.createNode({}) as YAMLMap;
  for (const f of FORM_FIELDS) {
    const value = fields[f];
    if (value === '' && (f === 'name' || f === 'direction')) continue;
    const typed = typedValue(f, value);
    const node = doc.createNode(typed) as Scalar;
    const sibling = isMap(like) ? like.get(f, true) : undefined;
    if (typeof typed === 'string' && isScalar(sibling) && (sibling.type === 'QUOTE_DOUBLE' || sibling.type === 'QUOTE_SINGLE')) {
      node.type = sibling.type;
    }
    map.items.push(doc.createPair(f, node) as Pair);
  }
  if (siblings.length > 0 && siblings.every((s) => isMap(s) && s.flow)) map.flow = true;
  return map;
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

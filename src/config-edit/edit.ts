import { isAlias, isMap, isScalar, isSeq, LineCounter, Scalar, type Document, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { err, ok, type Result } from '../result.js';
import { entryHash, fieldsOf, readInteractive } from '../config/identity.js';
import { Tree } from '../config/tree.js';
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

function lineOf(text: string, offset: number | undefined): number {
  if (offset === undefined) return 0;
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
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

type Deref = (node: unknown) => unknown;

/** Aliases (`*x`) resolved as the daemon resolves them, so that views and hashes match its reading. */
function derefIn(doc: Document): Deref {
  const tree = new Tree(doc, new LineCounter());
  return (node) => tree.deref(node);
}

function fieldText(map: YAMLMap, key: string, deref: Deref = (n) => n): string {
  return scalarText(deref(map.get(key, true))) ?? '';
}

function viewOf(text: string, written: unknown, index: number, deref: Deref): EntryView {
  const item = deref(written);
  const range = (item as { range?: [number, number, number] }).range;
  const empty: TunnelFields = { name: '', remote_host: '', remote_port: '', local_port: '', direction: '' };
  if (!isMap(item)) return { index, line: lineOf(text, range?.[0]), fields: empty, interactive: false, health_check: null, other_keys: [], hash: null };
  const fields = { ...empty };
  for (const f of FORM_FIELDS) fields[f] = fieldText(item, f, deref);
  const reading = readInteractive(deref(item.get('interactive', true)));
  const interactive = reading.ok && reading.value;
  const keys = item.items.map((p) => scalarText(p.key) ?? '?');
  const health_check = healthCheckOf(item);
  const other_keys = keys.filter((k) => !(FORM_FIELDS as readonly string[]).includes(k) && !(k === 'health_check' && health_check !== null));
  const hash = entryHash(fieldsOf(deref, item));
  return { index, line: lineOf(text, range?.[0]), fields, interactive, health_check, other_keys, hash };
}

function healthCheckOf(entry: YAMLMap): HealthCheckInput | null {
  const node = entry.get('health_check', true);
  if (!isMap(node)) return null;
  const out: HealthCheckInput = { type: '', interval: '', failures: '', path: '' };
  for (const k of HEALTH_CHECK_KEYS) out[k] = fieldText(node, k);
  return out;
}

/**
 * Sets `health_check` from the form: a changed one is written anew (a block map with
 * the fields given; digits as numbers), an unchanged one is left as written.
 */
function setHealthCheck(doc: Document, map: YAMLMap, value: HealthCheckInput | null | undefined): void {
  if (value === undefined) return;
  const current = healthCheckOf(map);
  if (value === null || value.type === '') {
    if (map.has('health_check')) map.delete('health_check');
    return;
  }
  if (current !== null && HEALTH_CHECK_KEYS.every((k) => current[k] === value[k])) return;
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
  return ok((seq.value?.items ?? []).map((item, i) => viewOf(text, item, i, deref)));
}

/** What a form value becomes in YAML: ports that are only digits are numbers, the rest strings. */
function typedValue(field: FormField, value: string): string | number {
  if ((field === 'remote_port' || field === 'local_port') && /^[1-9]\d{0,4}$/.test(value)) return Number(value);
  return value;
}

/**
 * Sets one field in place. An unchanged value is left alone (its quoting and format
 * too); a changed one keeps the node, so its quote style and comment stay.
 */
function setField(doc: Document, map: YAMLMap, field: FormField, value: string, deref: Deref): void {
  const node = map.get(field, true);
  // An alias that already stands for the value stays an alias.
  if (isAlias(node) && scalarText(deref(node)) === value) return;
  if (value === '' && field === 'name') {
    if (node === undefined) return;
    const idx = map.items.findIndex((p) => scalarText(p.key) === field);
    const [removed] = map.items.splice(idx, 1);
    const comment = (removed?.key as { commentBefore?: string } | undefined)?.commentBefore;
    const next = map.items[idx]?.key as { commentBefore?: string } | undefined;
    if (comment && next) next.commentBefore = next.commentBefore ? `${comment}\n${next.commentBefore}` : comment;
    return;
  }
  if (isScalar(node) && scalarText(node) === value) return;
  const typed = typedValue(field, value);
  if (isScalar(node)) {
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    node.value = quoted ? value : typed;
    node.format = undefined;
    return;
  }
  if (node !== undefined) {
    map.set(field, doc.createNode(typed));
    return;
  }
  // A missing key goes where a new entry would have it, before the first field that follows it.
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
  const node = map.get('interactive', true);
  // Any spelling that already means the value stays as written: its text is part of the hash.
  const current = readInteractive(node);
  if (current.ok && current.value === value) return;
  if (isScalar(node)) {
    node.value = value;
    node.type = 'PLAIN';
    node.format = undefined;
    return;
  }
  map.set('interactive', doc.createNode(value));
}

/** Replaces the whole list: an entry with an incoming hash is kept as it is; one at the same place is edited in place; the rest are new. */
function replaceAll(doc: Document, seq: YAMLSeq, tunnels: readonly TunnelInput[], text: string): void {
  const deref = derefIn(doc);
  const old = seq.items.map((item, i) => ({ item, view: viewOf(text, item, i, deref) }));
  const incoming = tunnels.map((t) => inputHash({ ...t, interactive: t.interactive ?? false }));
  const used = new Set<number>();
  const keptByHash = incoming.map((h) => {
    const j = old.findIndex((o, k) => !used.has(k) && o.view.hash === h);
    if (j >= 0) used.add(j);
    return j;
  });
  const items = tunnels.map((t, i) => {
    const kept = keptByHash[i] ?? -1;
    if (kept >= 0) return old[kept]?.item;
    const here = old[i];
    if (here !== undefined && !used.has(i) && isMap(here.item)) {
      used.add(i);
      for (const f of FORM_FIELDS) setField(doc, here.item, f, t.fields[f], deref);
      setInteractive(doc, here.item, t.interactive);
      setHealthCheck(doc, here.item, t.health_check);
      return here.item;
    }
    const entry = newEntry(doc, t.fields, seq.items);
    setInteractive(doc, entry, t.interactive);
    setHealthCheck(doc, entry, t.health_check);
    return entry;
  });
  seq.items = items;
}

/** A new entry, quoted the way the last entry quotes the same keys; flow style only if every entry is. */
function newEntry(doc: Document, fields: TunnelFields, siblings: readonly unknown[]): YAMLMap {
  const like = siblings[siblings.length - 1];
  const map = doc.createNode({}) as YAMLMap;
  for (const f of FORM_FIELDS) {
    const value = fields[f];
    if (value === '' && f === 'name') continue;
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

/** Applies one edit to the file's text and returns the new text; everything else is kept. */
export function applyEdit(text: string, edit: Edit): Result<string, EditFailure> {
  const parsed = parseEditable(text);
  if (!parsed.ok) return err({ reason: 'unparsable', message: parsed.error });
  const e = parsed.value;
  const found = tunnelsNode(e.doc);
  if (!found.ok) return found;
  switch (edit.kind) {
    case 'add': {
      const seq = ensureTunnels(e);
      const entry = newEntry(e.doc, edit.fields, seq.items);
      setInteractive(e.doc, entry, edit.interactive);
      setHealthCheck(e.doc, entry, edit.health_check);
      seq.items.push(entry);
      return ok(printEditable(e));
    }
    case 'replace': {
      replaceAll(e.doc, ensureTunnels(e), edit.tunnels, text);
      return ok(printEditable(e));
    }
    case 'update': {
      const item = found.value?.items[edit.index];
      if (item === undefined) return err({ reason: 'not_found', message: `the file has no tunnel number ${edit.index + 1}` });
      if (!isMap(item)) return err({ reason: 'shape', message: `tunnel number ${edit.index + 1} is not a map; fix it by hand first` });
      const deref = derefIn(e.doc);
      for (const f of FORM_FIELDS) setField(e.doc, item, f, edit.fields[f], deref);
      setInteractive(e.doc, item, edit.interactive);
      setHealthCheck(e.doc, item, edit.health_check);
      return ok(printEditable(e));
    }
    case 'delete': {
      const seq = found.value;
      if (seq === null || edit.index >= seq.items.length) {
        return err({ reason: 'not_found', message: `the file has no tunnel number ${edit.index + 1}` });
      }
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
      return ok(printEditable(e));
    }
    default:
      return unreachable(edit, 'edit');
  }
}

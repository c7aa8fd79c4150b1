import { isMap, isScalar, isSeq, LineCounter, type Document, type YAMLMap, type YAMLSeq } from 'yaml';
import { err, ok, type Result } from '../kernel/result.js';
import { entryHash, fieldsOf, readInteractive } from '../config/identity.js';
import { fieldPair } from '../config/merge.js';
import { derefIn, type Deref } from './anchors.js';
import { FORM_FIELDS, HEALTH_CHECK_KEYS, type HealthCheckInput, type TunnelFields } from './tunnel-input.js';
import { parseEditable, scalarText } from './yaml-doc.js';

/**
 * The entries of `tunnels:` as written, read the way the daemon reads them (aliases
 * resolved, merge keys applied): what the panel's form shows and what an edit is
 * checked against once written.
 */

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

export type EditFailure =
  | { reason: 'unparsable'; message: string }
  | { reason: 'not_found'; message: string }
  | { reason: 'shape'; message: string };

/** 1-based line of an offset in `text` (0 for none); the line starts are found once per text. */
export type LineOf = (offset: number | undefined) => number;

export function linesOf(text: string): LineOf {
  const lines = new LineCounter();
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  return (offset) => (offset === undefined ? 0 : lines.linePos(offset).line);
}

export function tunnelsNode(doc: Document): Result<YAMLSeq | null, EditFailure> {
  const root = doc.contents;
  if (root === null || (isScalar(root) && (root.value === null || root.value === undefined))) return ok(null);
  if (!isMap(root)) return err({ reason: 'shape', message: 'the file is not a YAML map with a "tunnels:" key; fix it by hand first' });
  const t = root.get('tunnels', true);
  if (t === undefined || (isScalar(t) && (t.value === null || t.value === undefined))) return ok(null);
  if (!isSeq(t)) return err({ reason: 'shape', message: '"tunnels:" is not a list; fix it by hand first' });
  return ok(t);
}

/** A key's value as the daemon reads it: aliases resolved, merge keys (`<<: *defaults`) applied. */
export function fieldValue(map: YAMLMap, key: string, deref: Deref): unknown {
  return deref(fieldPair(deref, map, key)?.pair.value);
}

export function fieldText(map: YAMLMap, key: string, deref: Deref): string {
  return scalarText(fieldValue(map, key, deref)) ?? '';
}

export function viewOf(lineOf: LineOf, written: unknown, index: number, deref: Deref): EntryView {
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

export function healthCheckOf(entry: YAMLMap, deref: Deref): HealthCheckInput | null {
  const node = fieldValue(entry, 'health_check', deref);
  if (!isMap(node)) return null;
  const out: HealthCheckInput = { type: '', interval: '', failures: '', path: '' };
  for (const k of HEALTH_CHECK_KEYS) out[k] = fieldText(node, k, deref);
  return out;
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

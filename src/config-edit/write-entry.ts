import { isMap, isScalar, type Document, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { DEFAULT_DIRECTION, DEFAULT_NAME, readInteractive } from '../config/identity.js';
import { derefIn, releaseAnchors } from './anchors.js';
import { fieldText, fieldValue, healthCheckOf } from './read-entries.js';
import { fieldMeaning, FORM_FIELDS, HEALTH_CHECK_KEYS, type FormField, type HealthCheckInput, type TunnelFields } from './tunnel-input.js';
import { scalarText } from './yaml-doc.js';

/**
 * Writing what a client sent into one entry of `tunnels:`: into its map in place, so a
 * value that already reads as wanted keeps how it is written, or as a new map that
 * looks like its siblings.
 */

/**
 * Sets `health_check` from the form: a changed one is written anew (a block map with
 * the fields given; digits as numbers), an unchanged one is left as written.
 */
export function setHealthCheck(doc: Document, map: YAMLMap, value: HealthCheckInput | null | undefined): void {
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
export function setField(doc: Document, map: YAMLMap, field: FormField, value: string): void {
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
export function setInteractive(doc: Document, map: YAMLMap, value: boolean | undefined): void {
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

/** A new entry, quoted the way the last entry quotes the same keys; flow style only if every entry is. */
export function newEntry(doc: Document, fields: TunnelFields, siblings: readonly unknown[]): YAMLMap {
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

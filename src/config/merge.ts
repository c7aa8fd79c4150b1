import { isMap, isSeq, type Pair, type YAMLMap } from 'yaml';
import { keyText } from './tree.js';

/**
 * YAML merge keys in a tunnel entry (`<<: *defaults`, `<<: [*a, *b]`), read as YAML 1.1
 * and the reference's tooling read them: a key written in the entry wins over a merged
 * one, and among several maps merged the first that has a key wins. The daemon, the
 * tunnel hash and both writers of the file read entries through here, so a merged
 * field means the same thing everywhere.
 */

export const MERGE_KEY = '<<';

type Deref = (node: unknown) => unknown;

/** The maps a `<<` value brings, in order, and the parts of it that are not maps. */
export function mergeSources(deref: Deref, value: unknown): { maps: YAMLMap[]; bad: unknown[] } {
  const node = deref(value);
  if (isMap(node)) return { maps: [node], bad: [] };
  if (!isSeq(node)) return { maps: [], bad: [node ?? value] };
  const maps: YAMLMap[] = [];
  const bad: unknown[] = [];
  for (const item of node.items) {
    const m = deref(item);
    if (isMap(m)) maps.push(m);
    else bad.push(m ?? item);
  }
  return { maps, bad };
}

const isMergePair = (deref: Deref, p: Pair) => keyText(deref(p.key)) === MERGE_KEY;

/** The pair a map writes for `key` itself (the first one; a repeated key is a YAML error already). */
export function ownPair(deref: Deref, map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => keyText(deref(p.key)) === key);
}

/** Every key of a map as read: its own pairs, then what its merges bring. */
function effective(deref: Deref, map: YAMLMap, seen: Set<YAMLMap>): Map<string, Pair> {
  const out = new Map<string, Pair>();
  for (const p of map.items) {
    const k = keyText(deref(p.key));
    if (k !== null && k !== MERGE_KEY && !out.has(k)) out.set(k, p);
  }
  for (const [k, p] of inherited(deref, map, seen)) if (!out.has(k)) out.set(k, p);
  return out;
}

function inherited(deref: Deref, map: YAMLMap, seen: Set<YAMLMap>): Map<string, Pair> {
  const out = new Map<string, Pair>();
  if (seen.has(map)) return out;
  seen.add(map);
  for (const m of map.items.filter((p) => isMergePair(deref, p))) {
    for (const source of mergeSources(deref, m.value).maps) {
      for (const [k, p] of effective(deref, source, seen)) if (!out.has(k)) out.set(k, p);
    }
  }
  seen.delete(map);
  return out;
}

/** The pairs a map gets through its merge keys and does not write itself, by key. */
export function mergedPairs(deref: Deref, map: YAMLMap): Map<string, Pair> {
  const out = inherited(deref, map, new Set());
  for (const p of map.items) {
    const k = keyText(deref(p.key));
    if (k !== null) out.delete(k);
  }
  return out;
}

/** The pair that gives `key` its value in `map`: its own, else a merged one. */
export function fieldPair(deref: Deref, map: YAMLMap, key: string): { pair: Pair; inherited: boolean } | undefined {
  const own = ownPair(deref, map, key);
  if (own !== undefined) return { pair: own, inherited: false };
  const merged = mergedPairs(deref, map).get(key);
  return merged === undefined ? undefined : { pair: merged, inherited: true };
}

/** Every key of a map with the pair that gives its value, own keys first. */
export function effectivePairs(deref: Deref, map: YAMLMap): Map<string, Pair> {
  return effective(deref, map, new Set());
}

/** Plain data (from `toJS`) with merge keys applied as `effectivePairs` applies them. */
export function flattenMerges(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !(MERGE_KEY in data)) return data;
  const own = { ...(data as Record<string, unknown>) };
  const sources = own[MERGE_KEY];
  delete own[MERGE_KEY];
  const out: Record<string, unknown> = {};
  for (const s of [...(Array.isArray(sources) ? sources : [sources])].reverse()) {
    const flat = flattenMerges(s);
    if (typeof flat === 'object' && flat !== null && !Array.isArray(flat)) Object.assign(out, flat);
  }
  return Object.assign(out, own);
}

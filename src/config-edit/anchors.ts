import { isAlias, isMap, isNode, LineCounter, visit, type Document, type Node } from 'yaml';
import { effectivePairs, MERGE_KEY } from '../config/merge.js';
import { keyText } from '../config/tree.js';
import { Tree } from '../config/tree.js';

/**
 * Anchors (`&x`) and the aliases (`*x`, `<<: *x`) that use them, kept working across an
 * edit. An alias means the last anchor of its name before it (Tree's rule), so an
 * anchor can only move forward, to a place that aliased it.
 */

export type Deref = (node: unknown) => unknown;

/**
 * Aliases resolved as the daemon resolves them, in the document as it is now. The
 * document is walked only when an alias is met: most files have none.
 */
export function derefIn(doc: Document): Deref {
  let tree: Tree | null = null;
  return (node) => {
    if (!isAlias(node)) return node;
    tree ??= new Tree(doc, new LineCounter());
    return tree.deref(node);
  };
}

/** Every alias with the node it stands for now, in document order. */
export function aliasTargets(doc: Document): ReadonlyMap<unknown, Node | undefined> {
  return new Map(new Tree(doc, new LineCounter()).aliasTargets());
}

function nodesIn(node: Node): Node[] {
  const out: Node[] = [node];
  visit(node, { Node: (_k, n) => { if (n !== node) out.push(n); } });
  return out;
}

/**
 * Call before `node` leaves the document or is changed in place. Every anchor in it
 * that an alias outside it still uses moves to the first of those aliases: that alias
 * becomes a copy of the anchored value (anchor included) and the later ones keep
 * aliasing it, so every other place keeps its value and the user's anchor lives on.
 * `node` itself loses those anchors and may then be changed or dropped freely.
 */
export function releaseAnchors(doc: Document, node: unknown): void {
  if (!isNode(node)) return;
  const inside = new Set<unknown>(nodesIn(node));
  const copies: Node[] = [];
  for (const anchored of nodesIn(node)) {
    if (isAlias(anchored) || !anchored.anchor) continue;
    const targets = aliasTargets(doc);
    const first = [...targets].find(([alias, target]) => target === anchored && !inside.has(alias))?.[0];
    if (first === undefined) continue;
    const users = [...targets].filter(([alias, target]) => target === anchored && !inside.has(alias)).length;
    if (users === 1 && inlineMerge(doc, first, anchored)) continue;
    const copy = copyOf(anchored);
    visit(doc, { Alias: (_k, a) => (a === first ? copy : undefined) });
    anchored.anchor = undefined;
    copies.push(copy);
  }
  dropUnusedCopiedAnchors(doc, copies);
}

/**
 * `<<: *x` as the only use of a map that goes: the merging map gets the fields it took
 * from it written out where the merge key was, which reads better than `<<: &x {…}`.
 * False when `alias` is not a whole merge value.
 */
function inlineMerge(doc: Document, alias: unknown, source: Node): boolean {
  if (!isMap(source)) return false;
  let done = false;
  visit(doc, {
    Map: (_k, map) => {
      const at = map.items.findIndex((p) => p.value === alias && keyText(p.key) === MERGE_KEY);
      if (at < 0) return undefined;
      const deref = derefIn(doc);
      const own = new Set(map.items.map((p) => keyText(deref(p.key))));
      const brought = [...effectivePairs(deref, source)].filter(([k]) => !own.has(k)).map(([, p]) => {
        const pair = p.clone();
        if (isNode(pair.key)) pair.key = copyOf(pair.key);
        if (isNode(pair.value)) pair.value = copyOf(pair.value);
        return pair;
      });
      map.items.splice(at, 1, ...brought);
      done = true;
      return visit.BREAK;
    },
  });
  return done;
}

/** A copy carries the anchors nested in what it copied; those no alias uses are dropped, not left as doubles. */
function dropUnusedCopiedAnchors(doc: Document, copies: readonly Node[]): void {
  if (copies.length === 0) return;
  const used = new Set(aliasTargets(doc).values());
  for (const copy of copies) {
    for (const n of nodesIn(copy)) if (n !== copy && !isAlias(n) && n.anchor && !used.has(n)) n.anchor = undefined;
  }
}

function copyOf(node: Node): Node {
  const copy = node.clone() as Node;
  // The comments stay where the user wrote them, on the original.
  copy.comment = undefined;
  copy.commentBefore = undefined;
  copy.spaceBefore = undefined;
  return copy;
}

/**
 * After entries moved (a whole list saved in another order), makes every alias stand
 * for the node it stood for before (`before`, from Tree.aliasTargets()). An alias that
 * now comes before its anchor, or after another anchor of its name, becomes a copy of
 * its value that takes the anchor; later aliases then use that copy.
 */
export function keepAliasTargets(doc: Document, before: ReadonlyMap<unknown, Node | undefined>): void {
  const moved = new Map<Node, Node>();
  for (;;) {
    const now = aliasTargets(doc);
    const wrong = [...now].find(([alias, target]) => {
      const wanted = before.get(alias);
      return wanted !== undefined && target !== (moved.get(wanted) ?? wanted);
    });
    if (wrong === undefined) {
      dropUnusedCopiedAnchors(doc, [...moved.values()]);
      return;
    }
    const wanted = before.get(wrong[0]) as Node;
    const source = moved.get(wanted) ?? wanted;
    const copy = copyOf(source);
    visit(doc, { Alias: (_k, a) => (a === wrong[0] ? copy : undefined) });
    source.anchor = undefined;
    moved.set(wanted, copy);
  }
}

/**
 * A whole entry written as an alias (`- *spare`) that is about to be edited becomes a
 * copy of what it stood for, without anchors: the anchored original stays as it is for
 * everything else that uses it.
 */
export function materialize(node: Node): Node {
  const copy = copyOf(node);
  for (const n of nodesIn(copy)) if (!isAlias(n)) n.anchor = undefined;
  return copy;
}

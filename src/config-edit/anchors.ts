import { isAlias, isNode, LineCounter, visit, type Document, type Node } from 'yaml';
import { Tree } from '../config/tree.js';

/**
 * Anchors (`&x`) and the aliases (`*x`, `<<: *x`) that use them, kept working across an
 * edit. An alias means the last anchor of its name before it (Tree's rule), so an
 * anchor can only move forward, to a place that aliased it.
 */

export type Deref = (node: unknown) => unknown;

/** Aliases resolved as the daemon resolves them, in the document as it is now. */
export function derefIn(doc: Document): Deref {
  const tree = new Tree(doc, new LineCounter());
  return (node) => tree.deref(node);
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
  for (const anchored of nodesIn(node)) {
    if (isAlias(anchored) || !anchored.anchor) continue;
    const targets = new Tree(doc, new LineCounter()).aliasTargets();
    const first = [...targets].find(([alias, target]) => target === anchored && !inside.has(alias))?.[0];
    if (first === undefined) continue;
    const copy = anchored.clone() as Node;
    // The comments stay where the user wrote them, on the original.
    copy.comment = undefined;
    copy.commentBefore = undefined;
    copy.spaceBefore = undefined;
    visit(doc, { Alias: (_k, a) => (a === first ? copy : undefined) });
    anchored.anchor = undefined;
  }
}

import { isMap } from 'yaml';
import { fieldsOf, identityOf } from './identity.js';
import type { ReadDocument } from './schema.js';
import { entryIndexOf, type Tree } from './tree.js';
import type { ConfigProblem, LoadResult, RejectedEntry } from './types.js';

/**
 * One bad entry never takes the others down (SPEC §3). A problem belongs to one entry
 * (`tunnels[2].local_port`), to the proxy section, or to the whole file (the YAML
 * itself, the top level, the shared ssh_options); only the last kind leaves nothing
 * usable. Which of the usable parts run is the daemon's decision, not the loader's.
 */

const isProxyField = (field: string) => field === 'proxy' || field.startsWith('proxy.') || field.startsWith('proxy[');

const byPosition = (a: ConfigProblem, b: ConfigProblem) => a.line - b.line || a.column - b.column;

/** The load result of a document the schema could read: ok, partial (entries or proxy left out) or invalid. */
export function isolate(tree: Tree, read: ReadDocument): LoadResult {
  const problems = [...tree.errors].sort(byPosition);
  const warnings = [...tree.warnings].sort(byPosition);
  const config = { tunnels: read.entries.map((e) => e.spec), proxy: read.proxy };
  if (problems.length === 0) return { kind: 'ok', config, warnings };

  const byEntry = new Map<number, ConfigProblem[]>();
  let proxyValid = true;
  for (const p of problems) {
    const index = entryIndexOf(p.field);
    if (index !== null) byEntry.set(index, [...(byEntry.get(index) ?? []), p]);
    else if (isProxyField(p.field)) proxyValid = false;
    else return { kind: 'invalid', problems };
  }
  const rejected = [...byEntry.entries()].sort(([a], [b]) => a - b).map(([index, ps]) => rejectedEntry(tree, read.items[index], index, ps));
  const positions = read.entries.map((e) => ({ hash: e.spec.hash, index: e.index, ...tree.at(e.node) }));
  return { kind: 'partial', config: { ...config, proxy: proxyValid ? read.proxy : null }, proxyValid, rejected, positions, problems, warnings };
}

function rejectedEntry(tree: Tree, node: unknown, index: number, problems: ConfigProblem[]): RejectedEntry {
  const at = tree.at(node);
  if (!isMap(node)) return { index, ...at, name: null, problems };
  const identity = identityOf(fieldsOf((n) => tree.deref(n), node));
  return { index, ...at, name: identity.name, problems };
}

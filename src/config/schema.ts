import { isMap, isScalar, isSeq } from 'yaml';
import type { DirectionMode } from '../tunnel/spec.js';
import { checkConflicts } from './conflicts.js';
import { readProxy } from './proxy-section.js';
import { readSshOptions } from './ssh-options-map.js';
import { describe, entryIndexOf, keyText, quote, type Tree } from './tree.js';
import { readTunnel, type TunnelEntry } from './tunnel-entry.js';
import type { ProxyConfig } from './proxy-schema.js';

/** What the schema read: every entry that is valid on its own, and the nodes of all entries. */
export interface ReadDocument {
  entries: TunnelEntry[];
  /** Every item of `tunnels:`, valid or not, for reports about the ones left out. */
  items: unknown[];
  proxy: ProxyConfig | null;
}

export const TOP_LEVEL_KEYS = ['tunnels', 'ssh_options', 'proxy'] as const;
type TopLevelKey = (typeof TOP_LEVEL_KEYS)[number];

const ROOT_EXPECTED = 'a map with tunnels: (and optionally ssh_options: and proxy:)';

/**
 * Validates a parsed config document (SPEC §3). `js` is the same document as plain
 * data (aliases expanded), which `written` records and the proxy schema are taken
 * from. Every problem goes into `tree`, with a field path that says whether it is about
 * one entry (`tunnels[2]…`), the proxy section or the whole file; the caller decides
 * what runs. Null when the document is not a map at all.
 */
export function readConfig(tree: Tree, js: unknown, mode: DirectionMode): ReadDocument | null {
  const root = tree.deref(tree.doc.contents);
  if (root === null || root === undefined || (isScalar(root) && root.value === null)) return { entries: [], items: [], proxy: null };
  if (!isMap(root)) {
    tree.error(root, '(file)', ROOT_EXPECTED, describe(root));
    return null;
  }
  const data = (typeof js === 'object' && js !== null ? js : {}) as Record<string, unknown>;

  const sections = new Map<TopLevelKey, unknown>();
  for (const pair of root.items) {
    const key = keyText(tree.deref(pair.key));
    if (key === null) {
      tree.error(pair.key, '(file)', 'a section name as the key (tunnels, ssh_options, proxy)', describe(tree.deref(pair.key)));
    } else if ((TOP_LEVEL_KEYS as readonly string[]).includes(key)) {
      if (!sections.has(key as TopLevelKey)) sections.set(key as TopLevelKey, pair.value);
    } else {
      tree.warn(pair.key, key, `one of ${TOP_LEVEL_KEYS.join(', ')}`, `${quote(key)}, an unknown key (kept as written, not used)`);
    }
  }

  const fileSshOptions = readSshOptions(tree, sections.get('ssh_options'), 'ssh_options');

  const entries: TunnelEntry[] = [];
  const list = tree.deref(sections.get('tunnels'));
  const items = isSeq(list) ? list.items.map((item) => tree.deref(item) ?? item) : [];
  const writtenList = Array.isArray(data.tunnels) ? (data.tunnels as unknown[]) : [];
  if (isSeq(list)) {
    list.items.forEach((item, i) => {
      const entry = readTunnel(tree, item, i, fileSshOptions, writtenList[i]);
      if (entry) entries.push(entry);
    });
  } else if (!(list === undefined || list === null || (isScalar(list) && list.value === null))) {
    tree.error(list, 'tunnels', 'a list of tunnels (tunnels: [] for none)', describe(list));
  }
  // An entry with a problem of its own (a duplicate key, found by the parser) is out already.
  const whole = entries.filter((e) => !tree.errors.some((p) => entryIndexOf(p.field) === e.index));
  const accepted = checkConflicts(tree, whole, mode);

  const proxy = readProxy(tree, sections.get('proxy'), data.proxy, entries.map((e) => e.spec.name));

  return { entries: accepted, items, proxy };
}

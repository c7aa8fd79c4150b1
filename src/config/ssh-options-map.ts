import { isMap, isScalar } from 'yaml';
import { checkSshOption } from './ssh-options.js';
import { child, describe, keyText, quote, type Tree } from './tree.js';

const MAP_EXPECTED = 'a map of ssh options, e.g. { ServerAliveInterval: 15, Compression: yes }';

/**
 * Reads an `ssh_options:` map (top level or per tunnel) through the allow-list.
 * Keys come back in their canonical spelling, so a tunnel's `serveraliveinterval`
 * overrides the file's `ServerAliveInterval` when the two are merged.
 */
export function readSshOptions(tree: Tree, raw: unknown, path: string): Record<string, string> {
  const node = tree.deref(raw);
  const out: Record<string, string> = {};
  if (node === undefined || node === null || (isScalar(node) && node.value === null)) return out;
  if (!isMap(node)) {
    tree.error(node, path, MAP_EXPECTED, describe(node));
    return out;
  }
  const seenAt = new Map<string, unknown>();
  for (const pair of node.items) {
    const key = keyText(tree.deref(pair.key));
    if (key === null) {
      tree.error(pair.key, path, 'an ssh option name as the key', describe(tree.deref(pair.key)));
      continue;
    }
    const field = child(path, key);
    const value = tree.deref(pair.value);
    if (value !== null && value !== undefined && !isScalar(value)) {
      tree.error(value, field, 'a single value (a word, a number, yes or no)', describe(value));
      continue;
    }
    const checked = checkSshOption(key, isScalar(value) ? value.value : null);
    if (!checked.ok) {
      // A refused option is about the key; a bad value is about the value.
      tree.error(checked.error.reason === 'option' ? pair.key : value, field, checked.error.expected, checked.error.found);
      continue;
    }
    const [canonical, text] = checked.value;
    const earlier = seenAt.get(canonical);
    if (earlier !== undefined) {
      const { line, column } = tree.at(earlier);
      tree.error(pair.key, field, `each option at most once (ssh option names ignore case)`, `${quote(key)} again (first set at line ${line}, column ${column})`);
      continue;
    }
    seenAt.set(canonical, pair.key);
    out[canonical] = text;
  }
  return out;
}

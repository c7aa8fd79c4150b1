/**
 * Config files of at most MAX_CONFIG_BYTES written to cost the YAML parser as much as a
 * file of that size can: deep nesting, a million tokens, aliases by the hundred
 * thousand, errors on every line. Before the loader's limits, the worst of them took
 * the daemon past 1.5 GB or kept it busy for minutes. Shared by the loader's unit tests
 * and the e2e test that runs `tunnel-manager check` on them.
 */
import { MAX_CONFIG_BYTES } from '../../../src/config/yaml-loader.js';

/** `unit` repeated to fill the limit after `head` and before `tail`. */
function fill(unit: string, head = '', tail = ''): string {
  const n = Math.floor((MAX_CONFIG_BYTES - head.length - tail.length) / unit.length);
  return head + unit.repeat(n) + tail;
}

function keys(prefix: string, each: (i: number) => string, tail = ''): string {
  const out: string[] = [prefix];
  let bytes = prefix.length + tail.length;
  for (let i = 0; ; i++) {
    const piece = each(i);
    if (bytes + piece.length > MAX_CONFIG_BYTES) break;
    out.push(piece);
    bytes += piece.length;
  }
  out.push(tail);
  return out.join('');
}

export const HOSTILE_FILES: readonly (readonly [name: string, text: string])[] = [
  ['half a MiB of [ then of ]', '['.repeat(MAX_CONFIG_BYTES / 2) + ']'.repeat(MAX_CONFIG_BYTES / 2)],
  ['valid 60-deep empty lists', fill(`- ${'['.repeat(60)}${']'.repeat(60)}\n`, 'x:\n')],
  ['valid 60-deep empty lists in one flow list', fill(`${'['.repeat(60)}${']'.repeat(60)},`, 'x: [', ']\n')],
  ['350,000 aliases of one anchor', fill('*a,', 'a: &a x\nb: [', '*a]\n')],
  ['anchors and aliases in pairs', fill('- &a x\n- *a\n', 'x:\n')],
  ['half a million scalars in a flow list', fill('1,', 'x: [', '1]\n')],
  ['a quarter million list items', fill('- a\n', 'x:\n')],
  ['150,000 distinct keys in one map', keys('', (i) => `k${i}: 1\n`)],
  ['100,000 distinct keys in one flow map', keys('x: {', (i) => `k${i}: 1,`, '}\n')],
  ['the same key 200,000 times', fill('a: 1\n')],
  ['a million line breaks', '\n'.repeat(MAX_CONFIG_BYTES)],
  ['half a million comment lines', fill('#\n')],
  ['half a million stray ] (one error each)', fill(']\n')],
  ['a quarter million tags', fill('- !t x\n', 'x:\n')],
  ['a quarter million documents', fill('---\n')],
  ['one scalar of 1 MiB', fill('x', 'a: ', '\n')],
  ['one double-quoted scalar of escapes', fill('\\t', 'a: "', '"\n')],
  ['one block scalar of 260,000 lines', fill('  x\n', 'a: |\n')],
  ['11,000 tunnels', keys('tunnels:\n', (i) => `  - name: t${i}\n    remote_host: user@h${i % 4}\n    remote_port: ${10000 + (i % 50000)}\n    local_port: ${20000 + (i % 40000)}\n`)],
];

// Reads a V8 heap snapshot (node --heapsnapshot-signal) and sums the objects' own
// sizes per constructor (objects) or per kind (strings, closures, code, arrays), so a
// benchmark can say where the daemon's heap goes.
import { readFileSync } from 'node:fs';

/** Every group, heaviest first: `rows` by constructor or kind, `strings` by their first characters. */
export function summarizeHeap(path) {
  const snap = JSON.parse(readFileSync(path, 'utf8'));
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const stride = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const nodes = snap.nodes;
  const strings = snap.strings;
  const groups = new Map();
  const texts = new Map();
  let total = 0;
  for (let i = 0; i < nodes.length; i += stride) {
    const type = types[nodes[i + iType]];
    const size = nodes[i + iSize];
    total += size;
    const key = type === 'object' || type === 'native' ? `${strings[nodes[i + iName]]} (${type})` : `(${type})`;
    const g = groups.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += size;
    groups.set(key, g);
    if (type === 'string' || type === 'sliced string' || type === 'concatenated string') {
      // What the strings are: grouped by their first words (ssh's lines, argv, JSON…).
      const text = strings[nodes[i + iName]] ?? '';
      const head = text.replace(/\d+/g, 'N').slice(0, 24);
      const t = texts.get(head) ?? { count: 0, bytes: 0 };
      t.count++;
      t.bytes += size;
      texts.set(head, t);
    }
  }
  const strTop = [...texts].sort((a, b) => b[1].bytes - a[1].bytes).map(([name, g]) => ({ name, ...g }));
  const rows = [...groups].sort((a, b) => b[1].bytes - a[1].bytes).map(([name, g]) => ({ name, ...g }));
  return { totalBytes: total, rows, strings: strTop };
}

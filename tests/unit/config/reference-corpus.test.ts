import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseConfigText } from '../../../src/config/load.js';
import { migrate } from '../../../src/config/migrate.js';
import { formatHashChange } from '../../../src/config/reference-compare.js';
import { readLikeReference } from '../../../src/config/reference-reader.js';

/**
 * Configs in the reference implementation's styles: every sample it shipped (from its
 * history), files its panel wrote, and every form it accepted. Each NAME.reference.tsv
 * is the output of the reference's own parse_config on NAME.yaml (recorded by
 * scripts/reference-hashes.sh), so the hashes below are the reference's, not ours.
 */
const DIR = join(import.meta.dirname, '../../fixtures/reference-configs');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

interface Row {
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
  name: string;
  hash: string;
  interactive: string;
}

function referenceRows(file: string): Row[] {
  const tsv = readFileSync(join(DIR, file.replace(/\.yaml$/, '.reference.tsv')), 'utf8');
  return tsv
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [remote_host = '', remote_port = '', local_port = '', direction = '', name = '', hash = '', interactive = ''] = l.split('\t');
      return { remote_host, remote_port, local_port, direction, name, hash, interactive };
    });
}

/** What each file is expected to show beyond "same tunnels, same hashes". */
const EXPECT: Record<string, { migrated?: number[]; changes?: [number, RegExp][]; rejected?: number[] }> = {
  'panel-written-names.yaml': { migrated: [1, 7, 11, 15, 19] },
  'tab-indentation.yaml': { migrated: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
  'misread-by-reference.yaml': {
    changes: [
      [2, /name: the reference read "db # the main database", YAML reads "db": the reference took the comment/],
      [6, /name: the reference read "'single'", YAML reads "single": the reference kept the single quotes/],
      [10, /name: the reference read "\\"quoted\\" # with a comment", YAML reads "quoted"/],
      [18, /the reference ran no tunnel from this entry/],
      [19, /direction: the reference read "remote_to_local {3}# spelled out", YAML reads "remote_to_local": the reference took the comment/],
    ],
  },
  // The reference's own parser (name-forms.reference.tsv) read each of these names as
  // text: null words, numbers, padding and booleans hash the same here; what YAML reads
  // otherwise is either repaired by migrate (an alias with no anchor, a tag, `: `) or
  // explained with the quoted form that keeps the reference's hash.
  'name-forms.yaml': {
    // *star, !!str, `: `, !!null, then {x}, [x], db:, @x, `x`, x: y: z, "a"b, ? x, % x.
    migrated: [36, 72, 88, 104, 118, 122, 126, 130, 134, 146, 150, 198, 202],
    changes: [
      [25, /name: the reference read "#1 primary", YAML reads nothing: YAML reads a value that starts with "#" as a comment.*write name: "#1 primary" to keep the reference's value and hash/],
      [29, /name: the reference read "&x", YAML reads nothing: YAML reads "&…" as an anchor.*write name: "&x"/],
      [33, /name: the reference read "&y anchored", YAML reads "anchored": YAML reads "&…" as an anchor/],
      [41, /name: the reference read "''", YAML reads nothing: the reference kept the single quotes/],
      [81, /the reference kept the single quotes/],
      [85, /the reference took the comment at the end of the line into the value/],
      [93, /name: the reference read "\|", YAML reads nothing: YAML reads "\|" as the start of a block of text/],
      [97, /name: the reference read "~ # none", YAML reads "~": the reference took the comment/],
      [139, /name: the reference read "'it''s'", YAML reads "it's": the reference kept the single quotes/],
      [143, /name: the reference read "a #b", YAML reads "a": the reference took the comment/],
      [155, /name: the reference read ">", YAML reads nothing: YAML reads ">" as the start of a block/],
      [159, /name: the reference read "\|-", YAML reads nothing: YAML reads "\|" as the start of a block/],
    ],
  },
  'no-final-newline.yaml': { changes: [[2, /the reference ran no tunnel from this entry/]] },
  'entries-with-problems.yaml': { rejected: [1, 2, 3] },
};

test('the corpus holds every sample the reference shipped and every form it accepted', () => {
  expect(FILES.filter((f) => f.startsWith('sample-'))).toHaveLength(4);
  expect(FILES.length).toBeGreaterThanOrEqual(12);
});

describe.each(FILES)('%s', (file) => {
  const text = readFileSync(join(DIR, file), 'utf8');
  const rows = referenceRows(file);
  const expected = EXPECT[file] ?? {};

  test("our reading of the reference's format gives exactly its tunnels and hashes", () => {
    const ours = readLikeReference(text).map((e) => ({
      remote_host: e.remote_host,
      remote_port: e.remote_port,
      local_port: e.local_port,
      direction: e.direction,
      name: e.name,
      hash: e.hash,
      interactive: e.interactive,
    }));
    expect(ours).toEqual(rows);
  });

  test('read as YAML (after migrate where YAML refuses it): the same tunnels and hashes, every difference explained', () => {
    const m = migrate(text);
    if (!m.ok) throw new Error(m.error);
    expect(m.value.changedLines).toEqual(expected.migrated ?? []);
    expect(m.value.changes.map((c) => c.line)).toEqual((expected.changes ?? []).map(([line]) => line));
    for (const [i, [, reason]] of (expected.changes ?? []).entries()) expect(formatHashChange(m.value.changes[i]!)).toMatch(reason);

    const loaded = parseConfigText(m.value.text);
    expect(loaded.kind).toBe(expected.rejected ? 'partial' : 'ok');
    if (loaded.kind !== 'ok' && loaded.kind !== 'partial') return;
    if (loaded.kind === 'partial') expect(loaded.rejected.map((r) => r.index)).toEqual(expected.rejected);
    const hashes = loaded.config.tunnels.map((t) => t.hash);
    const changedFrom = new Set(m.value.changes.map((c) => c.reference_hash));
    const changedTo = new Set(m.value.changes.map((c) => c.hash));
    // Every tunnel the reference ran runs here with its hash, unless a change says why not
    // (an entry left out here for a problem is reported as such, not silently dropped).
    for (const row of rows) {
      if (changedFrom.has(row.hash)) continue;
      expect(hashes.includes(row.hash) || loaded.kind === 'partial', `${row.name} ${row.hash}`).toBe(true);
    }
    for (const t of loaded.config.tunnels) expect(rows.some((r) => r.hash === t.hash) || changedTo.has(t.hash), t.name).toBe(true);
    // The YAML values themselves, not only the hashes, are the reference's.
    for (const t of loaded.config.tunnels) {
      const row = rows.find((r) => r.hash === t.hash);
      if (!row) continue;
      // The reference ran `-R` only for the exact text local_to_remote, `-L` for anything else (`direction: null` too).
      const meant = row.direction === 'local_to_remote' ? 'local_to_remote' : 'remote_to_local';
      expect([t.name, t.remote_host, t.remote_port.text, t.local_port.text, t.direction]).toEqual([row.name, row.remote_host, row.remote_port, row.local_port, meant]);
    }
  });
});

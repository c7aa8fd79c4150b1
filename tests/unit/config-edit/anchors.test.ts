// Edits of files that use YAML anchors (&x), aliases (*x) and merge keys (<<: *x): every
// edit kind on every entry of every fixture, read back with the daemon's own loader.
import { describe, expect, it } from 'vitest';
import { applyEdit } from '../../../src/config-edit/edit.js';
import { readEntries, type EntryView } from '../../../src/config-edit/read-entries.js';
import type { Edit, TunnelInput } from '../../../src/config-edit/tunnel-input.js';
import { parseEditable, printEditable } from '../../../src/config-edit/yaml-doc.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';
import { tunnelHash } from '../../../src/tunnel/hash.js';
import { FIXTURES } from '../config/anchor-fixtures.js';

function reprinted(text: string): string {
  const e = parseEditable(text);
  if (!e.ok) throw new Error(e.error);
  return printEditable(e.value);
}

type Spec = Omit<TunnelSpec, 'line'>;

function specs(text: string): Spec[] {
  const r = parseConfigText(text);
  if (r.kind !== 'ok') throw new Error(`the daemon refuses:\n${text}\n${JSON.stringify(r)}`);
  // A field written as null means what an absent one means, to the daemon and to /list's readers.
  return r.config.tunnels.map(({ line: _line, written, ...rest }) => ({ ...rest, written: Object.fromEntries(Object.entries(written).filter(([, v]) => v !== null)) }));
}

function views(text: string): EntryView[] {
  const r = readEntries(text);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

const inputOf = (v: EntryView): TunnelInput => ({ fields: { ...v.fields }, interactive: v.interactive, health_check: v.health_check });

/** Each way a client changes one entry: one field at a time, then the rest. */
function changes(v: EntryView, i: number): { what: string; input: TunnelInput }[] {
  const base = inputOf(v);
  const withField = (f: keyof TunnelInput['fields'], value: string) => ({ ...base, fields: { ...base.fields, [f]: value } });
  return [
    { what: 'nothing', input: base },
    { what: 'name', input: withField('name', `${v.fields.name || 'unnamed'}-renamed`) },
    { what: 'name emptied', input: withField('name', '') },
    { what: 'remote_host', input: withField('remote_host', 'user@elsewhere') },
    { what: 'remote_port', input: withField('remote_port', '7777') },
    { what: 'local_port', input: withField('local_port', String(20000 + i)) },
    { what: 'direction', input: withField('direction', v.fields.direction === 'local_to_remote' ? 'remote_to_local' : 'local_to_remote') },
    { what: 'interactive', input: { ...base, interactive: !v.interactive } },
    { what: 'health_check set', input: { ...base, health_check: { type: 'tcp', interval: '9', failures: '3', path: '' } } },
    { what: 'health_check removed', input: { ...base, health_check: null } },
  ];
}

/** What the daemon must read for an entry the client sent. */
function expectWritten(spec: Spec | undefined, input: TunnelInput, before: Spec | undefined) {
  const f = input.fields;
  const interactive = input.interactive ?? before?.interactive ?? false;
  const hash = tunnelHash({
    name: f.name || 'unnamed', remote_host: f.remote_host, remote_port: f.remote_port, local_port: f.local_port,
    direction: f.direction || 'remote_to_local', interactive: String(interactive),
  });
  expect(spec?.hash).toBe(hash);
  expect(spec?.interactive).toBe(interactive);
  const hc = input.health_check;
  if (hc === null) expect(spec?.health_check).toBeUndefined();
  else if (hc !== undefined) expect(spec?.health_check).toMatchObject({ type: hc.type, interval: Number(hc.interval) });
  // Keys the form does not edit keep what they meant.
  if (before !== undefined) expect(spec?.ssh_options).toEqual(before.ssh_options);
}

interface Case {
  name: string;
  edit: Edit;
  /** Entry of the result → the original entry it must still equal. */
  same: Map<number, number>;
  written: { index: number; input: TunnelInput; was?: number }[];
}

function cases(text: string): Case[] {
  const vs = views(text);
  const n = vs.length;
  const all = (skip: (i: number) => boolean, shift = (i: number) => i) =>
    new Map(vs.map((_, i) => i).filter((i) => !skip(i)).map((i) => [shift(i), i]));
  const out: Case[] = [];
  const added: TunnelInput = { fields: { name: 'new', remote_host: 'user@host2', remote_port: '7000', local_port: '17000', direction: '' } };
  out.push({ name: 'add', edit: { kind: 'add', ...added }, same: all(() => false), written: [{ index: n, input: added }] });
  out.push({ name: 'replace, the same list in reverse order', edit: { kind: 'replace', tunnels: [...vs].reverse().map(inputOf) }, same: all(() => false, (j) => n - 1 - j), written: [] });
  vs.forEach((v, i) => {
    for (const c of changes(v, i)) {
      out.push({ name: `update #${i} ${c.what}`, edit: { kind: 'update', index: i, ...c.input }, same: all((j) => j === i), written: [{ index: i, input: c.input, was: i }] });
    }
    out.push({ name: `delete #${i}`, edit: { kind: 'delete', index: i }, same: all((j) => j === i, (j) => (j > i ? j - 1 : j)), written: [] });
    const host = { ...inputOf(v), fields: { ...v.fields, remote_host: 'user@replaced' } };
    const list = vs.map((w, j) => (j === i ? host : inputOf(w)));
    out.push({ name: `replace, #${i} changed`, edit: { kind: 'replace', tunnels: list }, same: all((j) => j === i), written: [{ index: i, input: host, was: i }] });
    const without = vs.filter((_, j) => j !== i).map(inputOf);
    out.push({ name: `replace, #${i} left out`, edit: { kind: 'replace', tunnels: without }, same: all((j) => j === i, (j) => (j > i ? j - 1 : j)), written: [] });
  });
  return out;
}

describe('edits keep every other entry and write exactly what was sent, with anchors, aliases and merge keys', () => {
  for (const [fixture, text] of Object.entries(FIXTURES)) {
    describe(fixture, () => {
      for (const c of cases(text)) {
        it(c.name, () => {
          const before = specs(text);
          const r = applyEdit(text, c.edit);
          if (!r.ok) throw new Error(`refused: ${r.error.message}`);
          // The result parses, and the daemon takes every entry of it.
          const after = specs(r.value);
          expect(after.length).toBe(before.length - (c.edit.kind === 'delete' ? 1 : 0) + (c.edit.kind === 'add' ? 1 : 0) - (c.name.endsWith('left out') ? 1 : 0));
          for (const [now, was] of c.same) expect(after[now], `entry ${now} (was ${was})`).toEqual(before[was]);
          for (const w of c.written) expectWritten(after[w.index], w.input, w.was === undefined ? undefined : before[w.was]);
          // The form reads back what it sent.
          const vs = views(r.value);
          for (const w of c.written) {
            for (const [k, v] of Object.entries(w.input.fields)) {
              const read = vs[w.index]!.fields[k as keyof TunnelInput['fields']];
              if (v === '') expect(['', k === 'name' ? 'unnamed' : 'remote_to_local']).toContain(read);
              else expect(read).toBe(v);
            }
          }
          // Saving what was read changes nothing (the store then leaves the file alone).
          if (c.name.endsWith('nothing')) expect(r.value).toBe(reprinted(text));
        });
      }
    });
  }
});

describe('where anchors go: what an experienced user expects', () => {
  const edit = (text: string, e: Edit) => {
    const r = applyEdit(text, e);
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  };
  const input = (text: string, i: number, over: Partial<TunnelInput['fields']> = {}): TunnelInput => {
    const v = views(text)[i]!;
    return { fields: { ...v.fields, ...over } };
  };

  it('deleting a tunnel that one other merges writes the fields it took into it, without a merge left', () => {
    const text = edit(FIXTURES['an entry anchored whole, merged by the next']!, { kind: 'delete', index: 0 });
    expect(text).toBe('tunnels:\n  - remote_host: user@bastion\n    remote_port: 5432\n    direction: remote_to_local\n    name: db-replica\n    local_port: 15433\n');
  });

  it('deleting a tunnel that two others merge moves the anchor onto the first merge', () => {
    const text = edit(FIXTURES['an entry anchored whole, merged by two']!, { kind: 'delete', index: 0 });
    expect(text).toMatch(/^tunnels:\n {2}- <<: &base\n {6}name: db\n/);
    expect(text).toContain('  - <<: *base\n    name: db-third\n');
  });

  it('a field a merged tunnel would newly gain is pinned there as empty (not the word null, which hashes as text), the merge stays', () => {
    const fixture = FIXTURES['an entry anchored whole, merged by the next']!;
    const text = edit(fixture, { kind: 'update', index: 0, ...input(fixture, 0), interactive: true });
    expect(text).toContain('  - <<: *base\n    name: db-replica\n    local_port: 15433\n    interactive:\n');
  });

  it('editing a tunnel written as an alias gives it its own map; the anchored original stays for the rest', () => {
    const fixture = FIXTURES['a whole entry that is an alias of a map outside the list']!;
    const text = edit(fixture, { kind: 'update', index: 0, ...input(fixture, 0, { local_port: '29' }) });
    expect(text).toContain('spare: &spare\n  name: spare\n  remote_host: h9\n  remote_port: 9\n  local_port: 19\n');
    expect(text).toContain('tunnels:\n  - name: spare\n    remote_host: h9\n    remote_port: 9\n    local_port: 29\n');
  });

  it('an anchored interactive or health_check changed on its holder moves to the first alias', () => {
    const fixture = FIXTURES['a list of merges, an inline one, anchored interactive and health_check']!;
    const text = edit(fixture, { kind: 'update', index: 0, ...input(fixture, 0), interactive: true, health_check: null });
    expect(text).toContain('    interactive: &int false\n    health_check: &hc { type: tcp, interval: 5 }\n  - { <<: *b');
  });
});

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { applyEdit } from '../../../src/config-edit/edit.js';
import { readEntries } from '../../../src/config-edit/read-entries.js';
import type { Edit, TunnelFields } from '../../../src/config-edit/tunnel-input.js';
import { parseConfigText } from '../../../src/config/load.js';

const FILE = `# Tunnels for the lab
# (second header line)
tunnels:
  # the database, reached through the bastion
  - name: db                      # optional, default "unnamed"
    remote_host: "user@bastion"   # required
    remote_port: 5432
    local_port: '127.0.0.1:15432' # single quotes on purpose
    direction: remote_to_local
    colour: blue                  # a key the daemon does not know
    ssh_options:
      ServerAliveInterval: 10

  # the web app, flow style
  - {name: web, remote_host: bastion, remote_port: 080, local_port: 8080, direction: remote_to_local}

  - name: "metrics"
    remote_host: monitor
    remote_port: 9100
    local_port: 19100
    direction: remote_to_local
    interactive: true

# providers for the chat proxy
proxy:
  default_timeout: 600   # seconds
  providers: {}
top_level_unknown: [1, 2, 3]
`;

const fields = (over: Partial<TunnelFields> = {}): TunnelFields => ({
  name: 'new',
  remote_host: 'user@host2',
  remote_port: '7000',
  local_port: '17000',
  direction: 'remote_to_local',
  ...over,
});

function apply(text: string, edit: Edit): string {
  const r = applyEdit(text, edit);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

const COMMENTS = [
  '# Tunnels for the lab',
  '# (second header line)',
  '# the database, reached through the bastion',
  '# optional, default "unnamed"',
  '# required',
  '# single quotes on purpose',
  '# a key the daemon does not know',
  '# the web app, flow style',
  '# providers for the chat proxy',
  '# seconds',
];

describe('reading entries', () => {
  it('gives every entry as written, with hashes from the written text', () => {
    const r = readEntries(FILE);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toHaveLength(3);
    const [db, web, metrics] = r.value;
    expect(db?.fields).toEqual({ name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local' });
    expect(db?.other_keys).toEqual(['colour', 'ssh_options']);
    expect(db?.line).toBe(5);
    // Ports are hashed as written: 080 stays 080.
    expect(web?.fields.remote_port).toBe('080');
    expect(metrics?.interactive).toBe(true);
    expect(db?.hash).toMatch(/^[0-9a-f]{32}$/);
  });

  it('an empty file, a comment-only file and "tunnels:" with nothing have no entries', () => {
    for (const t of ['', '# nothing yet\n', 'tunnels:\n', 'tunnels: []\n']) {
      const r = readEntries(t);
      expect(r.ok && r.value).toEqual([]);
    }
  });

  it('refuses files it cannot edit safely, saying why', () => {
    const bad = readEntries('tunnels: [\n');
    expect(!bad.ok && bad.error.reason).toBe('unparsable');
    const notMap = readEntries('- a\n- b\n');
    expect(!notMap.ok && notMap.error.message).toMatch(/not a YAML map/);
    const notSeq = readEntries('tunnels: 3\n');
    expect(!notSeq.ok && notSeq.error.message).toMatch(/not a list/);
  });
});

describe('editing keeps the file', () => {
  it('an unchanged update gives back exactly the same data, comments and quoting', () => {
    const out = apply(FILE, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432' }) });
    for (const c of COMMENTS) expect(out).toContain(c);
    expect(out).toContain('remote_host: "user@bastion"');
    expect(out).toContain("local_port: '127.0.0.1:15432'");
    expect(out).toContain('remote_port: 080');
    expect(out).toContain('name: "metrics"');
    expect(parse(out)).toEqual(parse(FILE));
  });

  it('updating a field keeps its quote style, comment and position', () => {
    const out = apply(FILE, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'admin@bastion2', remote_port: '5433', local_port: '127.0.0.1:15433' }) });
    expect(out).toMatch(/remote_host: "admin@bastion2" # required/);
    expect(out).toMatch(/local_port: '127\.0\.0\.1:15433' # single quotes on purpose/);
    expect(out).toMatch(/remote_port: 5433\n/);
    const keys = Object.keys(parse(out).tunnels[0]);
    expect(keys).toEqual(['name', 'remote_host', 'remote_port', 'local_port', 'direction', 'colour', 'ssh_options']);
    expect(parse(out).tunnels[0].colour).toBe('blue');
    expect(parse(out).tunnels[0].ssh_options).toEqual({ ServerAliveInterval: 10 });
  });

  it('a quoted port stays a quoted string; a plain one becomes a number', () => {
    const quoted = apply(FILE, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'user@bastion', local_port: '15432' }) });
    expect(quoted).toContain("local_port: '15432'");
    expect(quoted).toMatch(/remote_port: 7000\n/);
  });

  it('a value that needs quotes gets them', () => {
    const out = apply(FILE, { kind: 'update', index: 2, fields: fields({ name: '123', remote_host: 'monitor', remote_port: '9100', local_port: '19100' }) });
    expect(parse(out).tunnels[2].name).toBe('123');
  });

  it('adding writes a new entry at the end in the canonical key order, quoted like its predecessor', () => {
    const out = apply(FILE, { kind: 'add', fields: fields({ local_port: '127.0.0.1:17000' }) });
    for (const c of COMMENTS) expect(out).toContain(c);
    const data = parse(out);
    expect(data.tunnels).toHaveLength(4);
    expect(data.tunnels[3]).toEqual({ name: 'new', remote_host: 'user@host2', remote_port: 7000, local_port: '127.0.0.1:17000', direction: 'remote_to_local' });
    expect(out).toContain('name: "new"');
    expect(data.proxy).toEqual({ default_timeout: 600, providers: {} });
    expect(data.top_level_unknown).toEqual([1, 2, 3]);
  });

  it('adding to an empty, comment-only or tunnel-less file creates the list', () => {
    expect(parse(apply('', { kind: 'add', fields: fields() })).tunnels).toHaveLength(1);
    const commented = apply('# my tunnels\n', { kind: 'add', fields: fields() });
    expect(commented).toContain('# my tunnels');
    expect(parse(commented).tunnels).toHaveLength(1);
    const withProxy = apply('# header\nproxy:\n  default_timeout: 5 # s\n', { kind: 'add', fields: fields() });
    expect(withProxy).toContain('# header');
    expect(withProxy).toContain('# s');
    expect(parse(withProxy).tunnels).toHaveLength(1);
    const nullList = apply('tunnels: # none yet\n', { kind: 'add', fields: fields() });
    expect(parse(nullList).tunnels).toHaveLength(1);
    expect(nullList).toContain('# none yet');
  });

  it('an empty name removes the key; a new name is put first', () => {
    const cleared = apply(FILE, { kind: 'update', index: 0, fields: fields({ name: '', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432' }) });
    expect(parse(cleared).tunnels[0].name).toBeUndefined();
    expect(cleared).toContain('# the database, reached through the bastion');
    const named = apply(cleared, { kind: 'update', index: 0, fields: fields({ name: 'db2', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432' }) });
    expect(Object.keys(parse(named).tunnels[0])[0]).toBe('name');
  });

  it('deleting removes only that entry', () => {
    const out = apply(FILE, { kind: 'delete', index: 1 });
    const data = parse(out);
    expect(data.tunnels.map((t: { name: string }) => t.name)).toEqual(['db', 'metrics']);
    for (const c of COMMENTS.filter((c) => c !== '# the web app, flow style')) expect(out).toContain(c);
    expect(data.proxy.default_timeout).toBe(600);
  });

  it('deleting the first entry takes its own comment along and keeps a header set off by a blank line', () => {
    const t = 'tunnels:\n  # header\n\n  # the database\n  - name: db\n    remote_port: 1\n\n  # second\n  - name: b\n    remote_port: 2\n';
    const out = apply(t, { kind: 'delete', index: 0 });
    expect(out).toContain('# header');
    expect(out).not.toContain('# the database');
    expect(out).toContain('# second');
    expect(out).not.toMatch(/^[ \t]+$/m);
    expect(parse(out).tunnels).toEqual([{ name: 'b', remote_port: 2 }]);
  });

  it('a new entry is block style unless every entry is flow style', () => {
    const out = apply(FILE, { kind: 'add', fields: fields() });
    expect(out).toMatch(/\n  - name: "new"\n    remote_host: user@host2\n/);
    const flow = apply('tunnels:\n  - {name: a, remote_port: 1}\n', { kind: 'add', fields: fields() });
    expect(flow).toContain('  - {name: new,');
  });

  it('an empty direction writes no key: the entry keeps meaning remote_to_local and its hash', () => {
    const bare = 'tunnels:\n  - name: db\n    remote_host: bastion\n    remote_port: 5432\n    local_port: 15432\n';
    const before = readEntries(bare);
    const updated = apply(bare, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'bastion', remote_port: '5433', local_port: '15432', direction: '' }) });
    expect(updated).not.toContain('direction');
    const added = apply(bare, { kind: 'add', fields: fields({ direction: '' }) });
    expect(added).not.toContain('direction');
    const withKey = apply(bare.replace('local_port: 15432\n', 'local_port: 15432\n    direction: remote_to_local\n'), { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'bastion', remote_port: '5432', local_port: '15432', direction: '' }) });
    expect(withKey).not.toContain('direction');
    const after = readEntries(withKey);
    expect(before.ok && after.ok && after.value[0]?.hash).toBe(before.ok && before.value[0]?.hash);
    const loaded = parseConfigText(updated);
    expect(loaded.kind).toBe('ok');
    expect(loaded.kind === 'ok' && loaded.config.tunnels[0]?.direction).toBe('remote_to_local');
  });

  it('edits of a missing entry are refused', () => {
    const r = applyEdit(FILE, { kind: 'update', index: 7, fields: fields() });
    expect(!r.ok && r.error.reason).toBe('not_found');
    const d = applyEdit('', { kind: 'delete', index: 0 });
    expect(!d.ok && d.error.reason).toBe('not_found');
  });

  it('keeps every comment, quoting and unknown key through many saves', () => {
    let text = FILE;
    for (let i = 0; i < 40; i++) {
      text = apply(text, { kind: 'add', fields: fields({ name: `t${i}`, local_port: String(20000 + i) }) });
      text = apply(text, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: String(5000 + i), local_port: '127.0.0.1:15432' }) });
      if (i % 3 === 0) text = apply(text, { kind: 'delete', index: 3 });
    }
    for (const c of COMMENTS.filter((c) => c !== '# the web app, flow style')) expect(text).toContain(c);
    expect(text).toContain('remote_host: "user@bastion"');
    expect(text).toContain("local_port: '127.0.0.1:15432'");
    expect(text).toContain('colour: blue');
    expect(text).toContain('top_level_unknown: [ 1, 2, 3 ]'.replace(' 1, 2, 3 ', '1, 2, 3'));
    const data = parse(text);
    expect(data.tunnels[0].remote_port).toBe(5039);
    expect(data.tunnels[1].name).toBe('web');
    expect(data.tunnels[2].interactive).toBe(true);
    // Saving the result again without a change gives the same text: no drift.
    const again = apply(text, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: '5039', local_port: '127.0.0.1:15432' }) });
    expect(again).toBe(text);
  });

  it('follows the file\'s own layout: sequences at the key\'s column, 4-space indent', () => {
    const flat = 'tunnels:\n- name: a\n  remote_host: h\n  remote_port: 1\n  local_port: 2\n  direction: remote_to_local\n';
    const out = apply(flat, { kind: 'add', fields: fields() });
    expect(out.startsWith('tunnels:\n- name: a\n')).toBe(true);
    expect(out).toContain('\n- name: new\n');
    const four = 'proxy:\n    default_timeout: 5\ntunnels: []\n';
    const out4 = apply(four, { kind: 'add', fields: fields() });
    expect(out4).toContain('proxy:\n    default_timeout: 5\n');
  });
});

describe('the panel and the daemon agree on every hash', () => {
  it.each([
    ['interactive: True', ''],
    ['interactive: "yes"', ''],
    ['interactive: no', ''],
    ['', 'name: ~'],
    ['', 'name: ""'],
    ['', 'name: true'],
    ['', 'name: 0x1F'],
    ['remote_port: 05432', ''],
  ])('%s %s', (extra, nameLine) => {
    const lines = [nameLine, 'remote_host: bastion', extra.startsWith('remote_port') ? extra : 'remote_port: 5432', 'local_port: 15432', extra.startsWith('remote_port') ? '' : extra]
      .filter((l) => l !== '')
      .map((l, i) => (i === 0 ? `  - ${l}` : `    ${l}`));
    const text = `tunnels:\n${lines.join('\n')}\n`;
    const loaded = parseConfigText(text);
    expect(loaded.kind).toBe('ok');
    const daemonHash = loaded.kind === 'ok' ? loaded.config.tunnels[0]!.hash : '';
    const entries = readEntries(text);
    expect(entries.ok && entries.value[0]!.hash).toBe(daemonHash);
  });

  it('with YAML aliases: the panel resolves them as the daemon does, shows the values, and an unchanged save keeps them', () => {
    const text = [
      'tunnels:',
      '  - name: &n db',
      '    remote_host: &h bastion',
      '    remote_port: &p 05432',
      '    local_port: 15432',
      '    direction: &d remote_to_local',
      '    interactive: &i yes',
      '  - name: db2',
      '    remote_host: *h',
      '    remote_port: *p',
      '    local_port: 15433',
      '    direction: *d',
      '    interactive: *i',
      '',
    ].join('\n');
    const loaded = parseConfigText(text);
    expect(loaded.kind).toBe('ok');
    const daemonHashes = loaded.kind === 'ok' ? loaded.config.tunnels.map((t) => t.hash) : [];
    expect(new Set(daemonHashes).size).toBe(2);
    const entries = readEntries(text);
    expect(entries.ok && entries.value.map((e) => e.hash)).toEqual(daemonHashes);
    const second = entries.ok ? entries.value[1]! : null;
    expect(second?.fields).toEqual({ name: 'db2', remote_host: 'bastion', remote_port: '05432', local_port: '15433', direction: 'remote_to_local' });
    expect(second?.interactive).toBe(true);
    // Saving the form unchanged leaves the aliases as written.
    expect(apply(text, { kind: 'update', index: 1, fields: second!.fields })).toBe(text);
  });
});

describe('the form edits health_check', () => {
  const hc = (over: Partial<Record<'type' | 'interval' | 'failures' | 'path', string>> = {}) => ({ type: 'http', interval: '5', failures: '2', path: '/ready', ...over });

  it('adds one the daemon reads, with numbers as numbers and an empty path left out', () => {
    const text = apply(FILE, { kind: 'add', fields: fields(), health_check: hc() });
    const r = parseConfigText(text);
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.config.tunnels[3]!.health_check).toEqual({ type: 'http', interval: 5, failures: 2, path: '/ready' });
    const tcp = apply(FILE, { kind: 'add', fields: fields(), health_check: hc({ type: 'tcp', path: '' }) });
    expect(parse(tcp).tunnels[3].health_check).toEqual({ type: 'tcp', interval: 5, failures: 2 });
  });

  it('reads it back for the form, and leaves an unchanged one (and everything else) as written', () => {
    const text = apply(FILE, { kind: 'update', index: 0, fields: fields({ name: 'db', remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432' }), health_check: hc() });
    const entries = readEntries(text);
    expect(entries.ok && entries.value[0]!.health_check).toEqual(hc());
    expect(entries.ok && entries.value[0]!.other_keys).toEqual(['colour', 'ssh_options']);
    const again = apply(text, { kind: 'update', index: 0, fields: entries.ok ? entries.value[0]!.fields : fields(), health_check: hc() });
    expect(again).toBe(text);
    for (const c of COMMENTS) expect(again).toContain(c);
  });

  it('null removes it; absent leaves it as written', () => {
    const withCheck = apply(FILE, { kind: 'update', index: 2, fields: fields({ name: 'metrics', remote_host: 'monitor', remote_port: '9100', local_port: '19100' }), health_check: hc() });
    const kept = apply(withCheck, { kind: 'update', index: 2, fields: fields({ name: 'metrics', remote_host: 'monitor', remote_port: '9100', local_port: '19100' }) });
    expect(parse(kept).tunnels[2].health_check).toBeDefined();
    const removed = apply(withCheck, { kind: 'update', index: 2, fields: fields({ name: 'metrics', remote_host: 'monitor', remote_port: '9100', local_port: '19100' }), health_check: null });
    expect(parse(removed).tunnels[2].health_check).toBeUndefined();
  });

  it('a bad value is refused by the daemon\'s own validation, next to the health check', async () => {
    const { blockingErrors } = await import('../../../src/config-edit/field-errors.js');
    const text = apply(FILE, { kind: 'add', fields: fields(), health_check: hc({ interval: '0' }) });
    const r = parseConfigText(text);
    const problems = r.kind === 'ok' ? [] : 'problems' in r ? r.problems : [];
    const errors = blockingErrors([], problems, { kind: 'add', fields: fields() }, 4);
    expect(errors?.fields.health_check).toBe('interval: expected a whole number from 1 to 3600, found "0"');
  });
});

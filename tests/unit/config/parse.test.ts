import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { formatProblem, parseConfigText } from '../../../src/config/load.js';
import { problems, valid } from './helpers.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const SPEC_SAMPLE = `tunnels:
  - name: db                      # optional, default "unnamed"
    remote_host: "user@bastion"   # required; \`user@alias\` or a bare alias, resolved by ssh
    remote_port: 5432             # required; port, or "ip:port"
    local_port: "127.0.0.1:15432" # required; port, or "ip:port"
    direction: remote_to_local    # required: local_to_remote | remote_to_local
proxy:                            # optional, §9
  default_timeout: 600
  providers: {}
`;

describe('empty files are a valid empty config', () => {
  test.each([
    ['nothing', ''],
    ['white space', '  \n\n\t\n'],
    ['comments only', '# tunnels will come later\n   # indented comment\n'],
    ['a null document', '~\n'],
    ['the word null', 'null'],
    ['a bare document marker', '---\n'],
    ['tunnels: with no value', 'tunnels:\n'],
    ['an empty list', 'tunnels: []\n'],
    ['tunnels: null', 'tunnels: null # none yet\n'],
  ])('%s', (_name, text) => {
    const r = parseConfigText(text);
    expect(r).toEqual({ kind: 'ok', config: { tunnels: [], proxy: null }, warnings: [] });
  });
});

describe('the SPEC §3 sample', () => {
  const { config, warnings } = valid(SPEC_SAMPLE);
  const t = config.tunnels[0]!;

  test('reads every field, with end-of-line comments ignored', () => {
    expect(config.tunnels).toHaveLength(1);
    expect(warnings).toEqual([]);
    expect(t).toMatchObject({
      name: 'db',
      remote_host: 'user@bastion',
      remote_port: { host: null, port: 5432, text: '5432' },
      local_port: { host: '127.0.0.1', port: 15432, text: '127.0.0.1:15432' },
      direction: 'remote_to_local',
      interactive: false,
      ssh_options: {},
      line: 2,
    });
  });

  test('hash is md5 of the fields as written, joined by |', () => {
    expect(t.hash).toBe(md5('db|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
    expect(t.hash).toBe('e0bf7ece779107669cd6206f94fbd9f2');
  });

  test('written keeps the entry as written: a number stays a number, a string a string', () => {
    expect(t.written).toEqual({
      name: 'db',
      remote_host: 'user@bastion',
      remote_port: 5432,
      local_port: '127.0.0.1:15432',
      direction: 'remote_to_local',
    });
  });

  test('proxy section parsed with its defaults', () => {
    expect(config.proxy).toEqual({ default_timeout: 600, providers: {} });
  });
});

describe('YAML forms', () => {
  const reference = valid(SPEC_SAMPLE).config.tunnels[0]!.hash;

  test('single quotes, double quotes and plain scalars give the same values and hash', () => {
    const text = `tunnels:
  - name: 'db'
    remote_host: user@bastion
    remote_port: "5432"
    local_port: '127.0.0.1:15432'
    direction: "remote_to_local"
`;
    const t = valid(text).config.tunnels[0]!;
    expect(t.hash).toBe(reference);
    // The written type is kept: "5432" was a string here.
    expect(t.written.remote_port).toBe('5432');
  });

  test('flow style, on one line and spread over lines', () => {
    const one = valid(`tunnels: [{name: db, remote_host: user@bastion, remote_port: 5432, local_port: "127.0.0.1:15432", direction: remote_to_local}]`);
    expect(one.config.tunnels[0]!.hash).toBe(reference);
    const spread = valid(`{
  tunnels: [
    { name: db, remote_host: "user@bastion",   # a comment inside flow
      remote_port: 5432, local_port: "127.0.0.1:15432",
      direction: remote_to_local },
  ],
}`);
    expect(spread.config.tunnels[0]!.hash).toBe(reference);
  });

  test('a # inside quotes is text, not a comment; escapes are decoded', () => {
    const t = valid(`tunnels:
  - name: "db # primary"   # this is the comment
    remote_host: 'user@bastion'
    remote_port: 5432
    local_port: 15432
    direction: remote_to_local
  - name: "caf\\u00e9 'quoted' it's"
    remote_host: bastion
    remote_port: 5433
    local_port: 15433
    direction: remote_to_local
`).config.tunnels;
    expect(t[0]!.name).toBe('db # primary');
    expect(t[1]!.name).toBe("café 'quoted' it's");
  });

  test('anchors and aliases may share ssh_options between tunnels', () => {
    const { config, warnings } = valid(`x-common: &common { ServerAliveInterval: 7, Compression: yes }
tunnels:
  - remote_host: a
    remote_port: 1
    local_port: 2
    direction: remote_to_local
    ssh_options: *common
  - remote_host: b
    remote_port: 3
    local_port: 4
    direction: remote_to_local
    ssh_options: *common
`);
    expect(config.tunnels.map((t) => t.ssh_options)).toEqual([
      { ServerAliveInterval: '7', Compression: 'yes' },
      { ServerAliveInterval: '7', Compression: 'yes' },
    ]);
    expect(warnings.map((w) => w.field)).toEqual(['x-common']);
  });

  test('a number keeps the text it was written as for the hash (05432 is not 5432)', () => {
    const a = valid(`tunnels: [{remote_host: h, remote_port: 05432, local_port: 1, direction: remote_to_local}]`).config.tunnels[0]!;
    const b = valid(`tunnels: [{remote_host: h, remote_port: 5432, local_port: 1, direction: remote_to_local}]`).config.tunnels[0]!;
    expect(a.remote_port).toEqual({ host: null, port: 5432, text: '05432' });
    expect(a.hash).toBe(md5('unnamed|h|05432|1|remote_to_local|false'));
    expect(a.hash).not.toBe(b.hash);
  });

  test('TunnelSpec.line is the line of the entry', () => {
    const { config } = valid(`# header

tunnels:
  # first
  - remote_host: a
    remote_port: 1
    local_port: 2
    direction: remote_to_local

  - remote_host: b
    remote_port: 3
    local_port: 4
    direction: remote_to_local
`);
    expect(config.tunnels.map((t) => t.line)).toEqual([5, 10]);
  });
});

describe('every problem at once, each with line, column, field, expected and found', () => {
  const text = `tunnels:
  - name: db
    remote_host: "host name"
    remote_port: 5432
    local_port: 70000
    direction: sideways
  - remote_host: ok
    remote_port: "1.2.3.4:"
    local_port: 2
    direction: local_to_remote
    interactive: "maybe"
ssh_options:
  ProxyCommand: nc %h %p
`;
  const ps = problems(text);

  test('all of them, sorted by position', () => {
    expect(ps.map((p) => [p.line, p.column, p.field])).toEqual([
      [3, 18, 'tunnels[0].remote_host'],
      [5, 17, 'tunnels[0].local_port'],
      [6, 16, 'tunnels[0].direction'],
      [8, 18, 'tunnels[1].remote_port'],
      [11, 18, 'tunnels[1].interactive'],
      [13, 3, 'ssh_options.ProxyCommand'],
    ]);
  });

  test('formatted as one line each', () => {
    expect(formatProblem(ps[1]!)).toBe(
      'line 5, column 17: tunnels[0].local_port: expected a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name), found "70000"',
    );
    expect(formatProblem(ps[0]!)).toContain('found "host name", which holds white space');
    expect(formatProblem(ps[2]!)).toBe('line 6, column 16: tunnels[0].direction: expected local_to_remote, remote_to_local or socks, found "sideways"');
    expect(formatProblem(ps[4]!)).toBe('line 11, column 18: tunnels[1].interactive: expected true or false (also "true", "false", yes, no in any case), found "maybe"');
  });

  test('a problem about the whole file has no position in its text', () => {
    expect(formatProblem({ line: 0, column: 0, field: '(file)', expected: 'a file', found: 'a directory' })).toBe('(file): expected a file, found a directory');
  });
});

describe('structure', () => {
  test('the document must be a map', () => {
    const [p] = problems('- name: db\n');
    expect(p).toMatchObject({ line: 1, column: 1, field: '(file)', found: 'a list' });
    expect(problems('just words\n')[0]).toMatchObject({ field: '(file)', found: '"just words"' });
  });

  test('tunnels must be a list, and each entry a map', () => {
    expect(problems('tunnels: {db: 1}\n')[0]).toMatchObject({ line: 1, column: 10, field: 'tunnels', found: 'a map' });
    const ps = problems('tunnels:\n  - 5\n  - [a, b]\n');
    expect(ps.map((p) => [p.line, p.field, p.found])).toEqual([
      [2, 'tunnels[0]', '"5"'],
      [3, 'tunnels[1]', 'a list'],
    ]);
  });

  test('a YAML syntax error is a problem with its position', () => {
    const ps = problems('tunnels:\n  - name: "unterminated\n');
    expect(ps.length).toBeGreaterThan(0);
    expect(ps[0]).toMatchObject({ field: '(file)', expected: 'valid YAML' });
    expect(ps[0]!.line).toBeGreaterThan(0);
    const flow = problems('tunnels: [\n');
    expect(flow[0]).toMatchObject({ field: '(file)', expected: 'valid YAML' });
  });

  test('more than one document is refused', () => {
    const ps = problems('tunnels: []\n---\ntunnels: []\n');
    expect(ps[0]).toMatchObject({ line: 2, field: '(file)', expected: 'valid YAML' });
  });

  test('an alias to an anchor that does not exist is refused', () => {
    const ps = problems('tunnels: *nowhere\n');
    expect(ps[0]!.field).toBe('(file)');
  });

  test('a YAML merge key (<<) brings its fields, as YAML 1.1 reads it: the entry\'s own keys win, then the first map merged', () => {
    const text = `defaults: &d { remote_host: h, direction: local_to_remote, ssh_options: { ServerAliveInterval: 7 } }
other: &o { remote_host: nope, remote_port: 9 }
tunnels:
  - <<: [*d, *o]
    name: merged
    remote_port: 1
    local_port: 2
    direction: remote_to_local
`;
    const r = parseConfigText(text);
    expect(r.kind).toBe('ok');
    const t = r.kind === 'ok' ? r.config.tunnels[0]! : null;
    expect(t).toMatchObject({ name: 'merged', remote_host: 'h', direction: 'remote_to_local', ssh_options: expect.objectContaining({ ServerAliveInterval: '7' }) });
    expect(t?.written).toEqual({ remote_host: 'h', direction: 'remote_to_local', ssh_options: { ServerAliveInterval: 7 }, remote_port: 1, name: 'merged', local_port: 2 });
    // The same entry written out has the same hash: a merged field is the field.
    const flat = parseConfigText('tunnels:\n  - {name: merged, remote_host: h, remote_port: 1, local_port: 2}\n');
    expect(flat.kind === 'ok' && flat.config.tunnels[0]!.hash).toBe(t?.hash);
  });

  test('a merge key that brings no map is refused by name, not reported as fields missing', () => {
    const ps = problems(`tunnels:
  - <<: [h, 1]
    remote_port: 1
    local_port: 2
`);
    const merge = ps.filter((p) => p.field === 'tunnels[0]["<<"]');
    expect(merge.map((p) => [p.line, p.column, p.found])).toEqual([[2, 10, '"h"'], [2, 13, '"1"']]);
    expect(merge[0]!.expected).toBe('a map, or a list of maps, to merge (<<: *defaults)');
    expect(ps.some((p) => p.field === 'tunnels[0].remote_host')).toBe(true);
  });

  test('keys that are not names are refused', () => {
    expect(problems('? [a, b]\n: 1\n')[0]).toMatchObject({ line: 1, field: '(file)', found: 'a list' });
  });
});

describe('duplicate keys are errors, named by field with both positions', () => {
  test('at the top level', () => {
    const ps = problems('tunnels: []\nproxy: {}\ntunnels: []\n');
    expect(ps).toEqual([
      { line: 3, column: 1, field: 'tunnels', expected: 'each key at most once in a map', found: '"tunnels" again (first at line 1, column 1)' },
    ]);
  });

  test('inside a tunnel, alongside the other problems of the file', () => {
    const ps = problems(`tunnels:
  - remote_host: a
    remote_port: 1
    local_port: 2
    direction: remote_to_local
    remote_port: 3
  - remote_host: -x
    remote_port: 1
    local_port: 3
    direction: remote_to_local
`);
    expect(ps.map((p) => [p.line, p.column, p.field])).toEqual([
      [6, 5, 'tunnels[0].remote_port'],
      [7, 18, 'tunnels[1].remote_host'],
    ]);
    expect(ps[0]!.found).toBe('"remote_port" again (first at line 3, column 5)');
  });

  test('in ssh_options and in flow maps', () => {
    const ps = problems('ssh_options: { Compression: yes, Compression: no }\n');
    expect(ps[0]).toMatchObject({ line: 1, column: 34, field: 'ssh_options.Compression' });
  });
});

describe('unknown keys are kept, with a warning naming them', () => {
  const { config, warnings } = valid(`version: 2
tunnels:
  - name: db
    remote_host: bastion
    remote_port: 5432
    local_port: 15432
    direction: remote_to_local
    comment: "primary database"
    tags: [prod, eu]
`);

  test('warnings with positions', () => {
    expect(warnings.map((w) => [w.line, w.column, w.field])).toEqual([
      [1, 1, 'version'],
      [8, 5, 'tunnels[0].comment'],
      [9, 5, 'tunnels[0].tags'],
    ]);
    expect(warnings[1]!.found).toContain('unknown key');
  });

  test('the written record holds them', () => {
    expect(config.tunnels[0]!.written).toMatchObject({ comment: 'primary database', tags: ['prod', 'eu'] });
  });

  test('unknown keys do not change the hash', () => {
    expect(config.tunnels[0]!.hash).toBe(md5('db|bastion|5432|15432|remote_to_local|false'));
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { oneTunnel, problems, valid } from './helpers.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** The single problem of a one-tunnel file whose `field` is set to `yaml`. */
function problemOf(field: string, yaml: string) {
  const ps = problems(oneTunnel({ [field]: yaml }));
  expect(ps.map((p) => p.field)).toEqual([`tunnels[0].${field}`]);
  return ps[0]!;
}

describe('remote_host', () => {
  test.each([
    ['"-oProxyCommand=touch /tmp/x"', 'starts with "-"'],
    ['-oProxyCommand=x', 'starts with "-"'],
    ['"host name"', 'white space'],
    ['"a\\nb"', 'control character'],
    ['"a\\tb"', 'control character'],
    ['"bastion\\u0000"', 'control character'],
    ['""', 'is empty'],
    [`"${'h'.repeat(300)}"`, 'characters long'],
    ['"user@"', 'host part'],
    ['"@bastion"', 'user name'],
    ['"us er@bastion"', 'white space'],
    ['"user@host:22"', 'host part'],
    ['"user@[zz]"', 'host part'],
    ['"bastion;rm -rf /"', 'white space'],
    ['"$(reboot)"', 'host part'],
  ])('%s is refused (%s)', (yaml, why) => {
    const p = problemOf('remote_host', yaml);
    expect(p.found).toContain(why);
    expect(p.expected).toContain('not starting with "-"');
    expect(p).toMatchObject({ line: 3, column: 18 });
  });

  test.each([
    ['a map', '{ host: x }', 'a map'],
    ['a list', '[a, b]', 'a list'],
    ['a number', '22', '"22"'],
    ['a boolean', 'true', 'true (a boolean)'],
  ])('%s is refused', (_name, yaml, found) => {
    expect(problemOf('remote_host', yaml).found).toBe(found);
  });

  test.each(['bastion', 'user@bastion', 'deploy.bot@db-1.example.com', '10.0.0.7', '::1', 'user@::1', 'fe80::1%eth0', '2001:db8::7', 'my_alias', 'alias.with.dots'])(
    '%s is accepted',
    (host) => {
      expect(valid(oneTunnel({ remote_host: `"${host}"` })).config.tunnels[0]!.remote_host).toBe(host);
    },
  );

  test.each([
    ['[::1]', '"::1"'],
    ['user@[fe80::1%eth0]', '"user@fe80::1%eth0"'],
  ])('IPv6 in brackets (%s), which ssh cannot resolve, is refused with the form ssh takes', (host, form) => {
    expect(problemOf('remote_host', `"${host}"`).found).toContain(`write ${form}`);
  });
});

describe('ports', () => {
  test.each([
    ['1', { host: null, port: 1, text: '1' }],
    ['65535', { host: null, port: 65535, text: '65535' }],
    ['"22"', { host: null, port: 22, text: '22' }],
    ["'127.0.0.1:8080'", { host: '127.0.0.1', port: 8080, text: '127.0.0.1:8080' }],
    ['"[::1]:8080"', { host: '::1', port: 8080, text: '[::1]:8080' }],
    ['"localhost:8080"', { host: 'localhost', port: 8080, text: 'localhost:8080' }],
    ['db.internal:5432', { host: 'db.internal', port: 5432, text: 'db.internal:5432' }],
    ['"0.0.0.0:80"', { host: '0.0.0.0', port: 80, text: '0.0.0.0:80' }],
  ])('%s is accepted on both sides', (yaml, endpoint) => {
    const t = valid(oneTunnel({ remote_port: yaml, local_port: '15432' })).config.tunnels[0]!;
    expect(t.remote_port).toEqual(endpoint);
    const u = valid(oneTunnel({ remote_port: '5432', local_port: yaml })).config.tunnels[0]!;
    expect(u.local_port).toEqual(endpoint);
  });

  test.each([
    ['-1', '"-1"'],
    ['0', '"0"'],
    ['65536', '"65536"'],
    ['70000', '"70000"'],
    ['"1.2.3.4:"', '"1.2.3.4:"'],
    ['"[::1]"', '"[::1]"'],
    ['"-L1"', '"-L1"'],
    ['"-L1:evil:22"', '"-L1:evil:22"'],
    ['22.5', '"22.5"'],
    ['0x16', '"0x16"'],
    ['1e3', '"1e3"'],
    ['""', '""'],
    ['"1.2.3:80"', '"1.2.3:80"'],
    ['"256.1.1.1:80"', '"256.1.1.1:80"'],
    ['"::1:80"', '"::1:80"'],
    ['"host name:80"', '"host name:80"'],
    ['"127.0.0.1:80:90"', '"127.0.0.1:80:90"'],
    ['true', 'true (a boolean)'],
    ['{ port: 1 }', 'a map'],
    ['[1, 2]', 'a list'],
    ['.inf', '".inf"'],
  ])('local_port and remote_port %s are refused', (yaml, found) => {
    for (const field of ['local_port', 'remote_port']) {
      const p = problemOf(field, yaml);
      expect(p.expected).toBe('a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name)');
      expect(p.found).toBe(found);
    }
  });

  test('a missing port is named, at the entry', () => {
    const ps = problems(oneTunnel({ local_port: null, remote_port: null }));
    expect(ps.map((p) => [p.line, p.column, p.field, p.found])).toEqual([
      [2, 5, 'tunnels[0].remote_port', 'nothing (the field is missing)'],
      [2, 5, 'tunnels[0].local_port', 'nothing (the field is missing)'],
    ]);
  });

  test('an empty value is reported where it is', () => {
    const p = problemOf('local_port', '');
    expect(p.line).toBe(5);
    expect(p.found).toBe('nothing (null)');
  });
});

describe('name', () => {
  test('defaults to "unnamed", which the hash uses', () => {
    const t = valid(oneTunnel({ name: null })).config.tunnels[0]!;
    expect(t.name).toBe('unnamed');
    expect(t.hash).toBe(md5('unnamed|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
    expect(t.written).not.toHaveProperty('name');
  });

  test('a number is taken as written', () => {
    const t = valid(oneTunnel({ name: '2024' })).config.tunnels[0]!;
    expect(t.name).toBe('2024');
  });

  test.each([
    ['true', 'true'],
    ['false', 'false'],
    ['123', '123'],
    ['0x1F', '0x1F'],
    ['1.50', '1.50'],
    ['"~"', '~'],
    // A null written as a word is that word to the reference's parser, which hashed it so.
    ['~', '~'],
    ['null', 'null'],
    ['NULL', 'NULL'],
  ])('%s is the name %s, in the hash too', (yaml, name) => {
    const t = valid(oneTunnel({ name: yaml })).config.tunnels[0]!;
    expect(t.name).toBe(name);
    expect(t.hash).toBe(md5(`${name}|user@bastion|5432|127.0.0.1:15432|remote_to_local|false`));
  });

  test('a name that starts with # is a comment to YAML: "unnamed", with a warning saying how to write it', () => {
    const { config, warnings } = valid(oneTunnel({ name: '#1 primary' }));
    expect(config.tunnels[0]!.name).toBe('unnamed');
    expect(warnings.map((w) => [w.field, w.found])).toEqual([
      ['tunnels[0].name', 'nothing: "#1 primary" after it is a comment to YAML, so the tunnel is "unnamed"; write name: "#1 primary" to make it the name'],
    ]);
    // A comment written as one (after a space) is taken as meant.
    expect(valid(oneTunnel({ name: '# to be named' })).warnings).toEqual([]);
  });

  test.each([['""'], ["''"], [''], ['!!null']])('%s is "unnamed"', (yaml) => {
    const t = valid(oneTunnel({ name: yaml })).config.tunnels[0]!;
    expect(t.name).toBe('unnamed');
    expect(t.hash).toBe(md5('unnamed|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
  });

  test.each([
    ['"a\\nb"', 'control character'],
    ['"tab\\there"', 'control character'],
    [`"${'n'.repeat(129)}"`, '129 characters'],
    ['{ a: 1 }', 'a map'],
    ['[a, b]', 'a list'],
  ])('%s is refused', (yaml, found) => {
    expect(problemOf('name', yaml).found).toContain(found);
  });

  test('128 characters and any printable text are fine', () => {
    expect(valid(oneTunnel({ name: `"${'n'.repeat(128)}"` })).config.tunnels[0]!.name).toHaveLength(128);
    expect(valid(oneTunnel({ name: '"Base de données — prod 🚀"' })).config.tunnels[0]!.name).toBe('Base de données — prod 🚀');
  });
});

describe('direction', () => {
  test.each([['sideways'], ['"L"'], ['1'], ['[remote_to_local]'], ['Remote_To_Local']])('%s is refused', (yaml) => {
    expect(problemOf('direction', yaml).expected).toBe('local_to_remote, remote_to_local or socks');
  });

  test('is optional: absent, null or empty means remote_to_local, as in the reference', () => {
    for (const direction of [null, '""']) {
      const t = valid(oneTunnel({ direction })).config.tunnels[0]!;
      expect(t.direction).toBe('remote_to_local');
      expect(t.hash).toBe(md5('db|user@bastion|5432|127.0.0.1:15432|remote_to_local|false'));
    }
    // A null written as a word: remote_to_local (the reference ran -L for anything but
    // local_to_remote), hashed with the word, as the reference's parser did.
    for (const direction of ['~', 'null']) {
      const t = valid(oneTunnel({ direction })).config.tunnels[0]!;
      expect(t.direction).toBe('remote_to_local');
      expect(t.hash).toBe(md5(`db|user@bastion|5432|127.0.0.1:15432|${direction}|false`));
    }
  });

  test('both values are accepted', () => {
    expect(valid(oneTunnel({ direction: 'local_to_remote' })).config.tunnels[0]!.direction).toBe('local_to_remote');
    expect(valid(oneTunnel({ direction: '"remote_to_local"' })).config.tunnels[0]!.direction).toBe('remote_to_local');
  });
});

describe('interactive', () => {
  test('defaults to false; true is kept and changes the hash', () => {
    const off = valid(oneTunnel({})).config.tunnels[0]!;
    const on = valid(oneTunnel({ interactive: 'true' })).config.tunnels[0]!;
    const explicitOff = valid(oneTunnel({ interactive: 'false' })).config.tunnels[0]!;
    expect(off.interactive).toBe(false);
    expect(on.interactive).toBe(true);
    expect(on.hash).toBe(md5('db|user@bastion|5432|127.0.0.1:15432|remote_to_local|true'));
    expect(explicitOff.hash).toBe(off.hash);
  });

  test.each([
    ['"true"', true],
    ['"False"', false],
    ['yes', true],
    ['YES', true],
    ["'No'", false],
    ['True', true],
    ['FALSE', false],
  ])('%s is accepted as %s, with a warning naming the canonical form', (yaml, meaning) => {
    const { config, warnings } = valid(oneTunnel({ interactive: yaml }));
    expect(config.tunnels[0]!.interactive).toBe(meaning);
    expect(warnings.map((w) => w.field)).toEqual(['tunnels[0].interactive']);
    expect(warnings[0]!.found).toContain(`write ${String(meaning)}`);
    expect(warnings[0]!.line).toBe(7);
  });

  test('plain true and false earn no warning', () => {
    expect(valid(oneTunnel({ interactive: 'true' })).warnings).toEqual([]);
    expect(valid(oneTunnel({ interactive: 'false' })).warnings).toEqual([]);
  });

  test.each([['1'], ['{}'], ['"on"'], ['maybe']])('%s is refused', (yaml) => {
    expect(problemOf('interactive', yaml).expected).toContain('true or false');
  });
});

test('a tunnel missing everything lists every required field', () => {
  const ps = problems('tunnels:\n  - name: x\n');
  expect(ps.map((p) => p.field)).toEqual(['tunnels[0].remote_host', 'tunnels[0].remote_port', 'tunnels[0].local_port']);
  expect(ps.every((p) => p.line === 2 && p.column === 5)).toBe(true);
});

test('problems of several tunnels are all reported', () => {
  const text = `tunnels:
  - { remote_host: -a, remote_port: 1, local_port: 2, direction: remote_to_local }
  - { remote_host: b, remote_port: 0, local_port: 3, direction: remote_to_local }
  - { remote_host: c, remote_port: 1, local_port: 4, direction: up }
`;
  expect(problems(text).map((p) => [p.line, p.field])).toEqual([
    [2, 'tunnels[0].remote_host'],
    [3, 'tunnels[1].remote_port'],
    [4, 'tunnels[2].direction'],
  ]);
});

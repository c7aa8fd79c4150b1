import { describe, expect, test } from 'vitest';
import type { DirectionMode } from '../../../src/tunnel/spec.js';
import { problems, valid } from './helpers.js';

interface T { name?: string; host?: string; remote: string | number; local: string | number; direction: 'local_to_remote' | 'remote_to_local' }

const file = (...ts: T[]) =>
  `tunnels:\n${ts
    .map(
      (t) =>
        `  - name: ${t.name ?? 'x'}\n    remote_host: ${t.host ?? 'bastion'}\n    remote_port: ${JSON.stringify(t.remote)}\n    local_port: ${JSON.stringify(t.local)}\n    direction: ${t.direction}\n`,
    )
    .join('')}`;

describe('duplicate tunnels', () => {
  test('two identical entries: the later one is refused, naming the earlier one and its position', () => {
    const t: T = { name: 'db', remote: 5432, local: 15432, direction: 'remote_to_local' };
    const ps = problems(file(t, { ...t, name: 'other', local: 1 }, t));
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ line: 12, column: 5, field: 'tunnels[2]' });
    expect(ps[0]!.found).toMatch(/^the same tunnel as tunnels\[0\] at line 2, column 5 \(hash [0-9a-f]{32}\)$/);
  });

  test('the same fields written differently (5432 and "5432") are the same tunnel', () => {
    const text = `tunnels:
  - { remote_host: h, remote_port: 5432, local_port: 1, direction: remote_to_local }
  - { remote_host: h, remote_port: "5432", local_port: '1', direction: remote_to_local }
`;
    expect(problems(text)[0]!.field).toBe('tunnels[1]');
  });

  test('ssh_options are not part of the identity', () => {
    const text = `tunnels:
  - { remote_host: h, remote_port: 1, local_port: 2, direction: remote_to_local }
  - { remote_host: h, remote_port: 1, local_port: 2, direction: remote_to_local, ssh_options: { Compression: yes } }
`;
    expect(problems(text)[0]!.found).toContain('the same tunnel as tunnels[0]');
  });
});

describe.each<[DirectionMode, 'local_to_remote' | 'remote_to_local', 'local_to_remote' | 'remote_to_local']>([
  // [mode, the direction that listens here (-L), the direction that listens on the server (-R)]
  ['default', 'remote_to_local', 'local_to_remote'],
  ['ssh-standard', 'local_to_remote', 'remote_to_local'],
])('listen conflicts in mode %s', (mode, listensHere, listensThere) => {
  const opts = { mode };

  test.each<[string | number, string | number]>([
    [15432, 15432],
    [15432, '127.0.0.1:15432'],
    [15432, 'localhost:15432'],
    ['localhost:15432', '127.0.0.1:15432'],
    ['0.0.0.0:15432', '10.0.0.5:15432'],
    ['10.0.0.5:15432', '0.0.0.0:15432'],
    ['[::]:15432', 15432],
    ['[::1]:15432', 'localhost:15432'],
    ['10.0.0.5:15432', '10.0.0.5:15432'],
  ])('here: %s and %s clash', (a, b) => {
    const ps = problems(file({ name: 'a', remote: 1, local: a, direction: listensHere }, { name: 'b', remote: 2, local: b, direction: listensHere }), opts);
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ line: 10, column: 17, field: 'tunnels[1].local_port' });
    expect(ps[0]!.found).toBe(`${JSON.stringify(String(b))}, where tunnels[0] (line 5, column 17) already listens`);
    expect(ps[0]!.expected).toContain('on this machine');
  });

  test.each<[string | number, string | number]>([
    [15432, 15433],
    ['10.0.0.5:15432', '10.0.0.6:15432'],
    ['[::1]:15432', 15432],
  ])('here: %s and %s do not clash', (a, b) => {
    valid(file({ name: 'a', remote: 1, local: a, direction: listensHere }, { name: 'b', remote: 2, local: b, direction: listensHere }), opts);
  });

  test('the side that does not listen may repeat: many tunnels can connect to one local service', () => {
    valid(file({ name: 'a', remote: 8080, local: 3000, direction: listensThere }, { name: 'b', remote: 8081, local: 3000, direction: listensThere }), opts);
    valid(file({ name: 'a', remote: 5432, local: 1, direction: listensHere }, { name: 'b', remote: 5432, local: 2, direction: listensHere }), opts);
  });

  test('on the server: the same port on the same server clashes, even for another user', () => {
    const ps = problems(
      file({ name: 'a', host: 'alice@bastion', remote: 8080, local: 1, direction: listensThere }, { name: 'b', host: 'bob@Bastion', remote: '127.0.0.1:8080', local: 2, direction: listensThere }),
      opts,
    );
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ line: 9, column: 18, field: 'tunnels[1].remote_port' });
    expect(ps[0]!.expected).toContain('on bastion');
  });

  test('on the server: the same port on different servers is fine', () => {
    valid(file({ name: 'a', host: 'one', remote: 8080, local: 1, direction: listensThere }, { name: 'b', host: 'two', remote: 8080, local: 2, direction: listensThere }), opts);
  });

  test('a port listened on here and the same port listened on the server do not clash', () => {
    valid(file({ name: 'a', remote: 9000, local: 9000, direction: listensHere }, { name: 'b', remote: 9000, local: 9000, direction: listensThere }), opts);
  });
});

test('the same file can be valid in one mode and not in the other', () => {
  const text = file({ name: 'a', remote: 1, local: 7000, direction: 'remote_to_local' }, { name: 'b', remote: 2, local: 7000, direction: 'remote_to_local' });
  expect(problems(text, { mode: 'default' })[0]!.field).toBe('tunnels[1].local_port');
  valid(text, { mode: 'ssh-standard' });
  // The mode defaults to `default`.
  expect(problems(text)[0]!.field).toBe('tunnels[1].local_port');
});

test('three tunnels on one port give two problems, each naming the first', () => {
  const t = (name: string): T => ({ name, remote: name === 'a' ? 1 : name === 'b' ? 2 : 3, local: 7000, direction: 'remote_to_local' });
  const ps = problems(file(t('a'), t('b'), t('c')));
  expect(ps.map((p) => [p.field, p.found])).toEqual([
    ['tunnels[1].local_port', '"7000", where tunnels[0] (line 5, column 17) already listens'],
    ['tunnels[2].local_port', '"7000", where tunnels[0] (line 5, column 17) already listens'],
  ]);
});

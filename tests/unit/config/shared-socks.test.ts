// The config fields of SPEC §14: `shared` (a connection of its own when false) and
// `direction: socks` (ssh -D on local_port, no remote_port, hashed with an empty one).
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { diffTunnels } from '../../../src/config/diff.js';
import { forwardSpec, sshArgs } from '../../../src/tunnel/ssh-args.js';
import { applyEdit } from '../../../src/config-edit/edit.js';
import { inputHash } from '../../../src/config-edit/tunnel-input.js';
import { oneTunnel, problems, valid } from './helpers.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('shared', () => {
  test('absent: shared; false: a connection of its own; true: shared', () => {
    expect(valid(oneTunnel({})).config.tunnels[0]!.shared).toBeUndefined();
    expect(valid(oneTunnel({ shared: 'false' })).config.tunnels[0]!.shared).toBe(false);
    expect(valid(oneTunnel({ shared: 'true' })).config.tunnels[0]!.shared).toBeUndefined();
  });

  test.each([['"false"'], ['no'], ['0'], ['[false]'], ['{ a: 1 }']])('%s is refused with line, column and what is expected', (yaml) => {
    const ps = problems(oneTunnel({ shared: yaml }));
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ field: 'tunnels[0].shared', line: 7 });
    expect(ps[0]!.expected).toMatch(/^true or false/);
  });

  test('the hash does not change with shared, but a change of shared restarts the tunnel', () => {
    const a = valid(oneTunnel({})).config.tunnels[0]!;
    const b = valid(oneTunnel({ shared: 'false' })).config.tunnels[0]!;
    expect(b.hash).toBe(a.hash);
    expect(diffTunnels([a], [b]).changed.map((c) => c.after.hash)).toEqual([a.hash]);
    expect(diffTunnels([a], [a]).unchanged).toHaveLength(1);
  });
});

describe('direction: socks', () => {
  test('needs no remote_port; hashed with an empty one; ssh -D on the local port, bound to 127.0.0.1 by default', () => {
    const t = valid(oneTunnel({ remote_port: null, direction: 'socks', local_port: '1080' })).config.tunnels[0]!;
    expect(t.direction).toBe('socks');
    expect(t.remote_port.text).toBe('');
    expect(t.hash).toBe(md5('db|user@bastion||1080|socks|false'));
    expect(forwardSpec(t, 'default')).toEqual({ flag: '-D', value: '127.0.0.1:1080' });
    expect(forwardSpec(t, 'ssh-standard')).toEqual({ flag: '-D', value: '127.0.0.1:1080' });
    const args = sshArgs({ spec: t, mode: 'default', sshConfigPath: null, knownHostsFiles: [] });
    expect(args.slice(-4)).toEqual(['-D', '127.0.0.1:1080', '--', 'user@bastion']);
  });

  test('an address on local_port is the bind address', () => {
    const t = valid(oneTunnel({ remote_port: null, direction: 'socks', local_port: '"[::1]:1080"' })).config.tunnels[0]!;
    expect(forwardSpec(t, 'default').value).toBe('[::1]:1080');
  });

  test('a remote_port with it is refused, saying why', () => {
    const ps = problems(oneTunnel({ direction: 'socks' }));
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ field: 'tunnels[0].remote_port' });
    expect(ps[0]!.expected).toMatch(/no remote_port for direction socks/);
  });

  test('two SOCKS tunnels on one local port clash; a SOCKS and an -L on one local port clash', () => {
    const text = `tunnels:\n  - {name: a, remote_host: h, local_port: 1080, direction: socks}\n  - {name: b, remote_host: h2, local_port: 1080, direction: socks}\n  - {name: c, remote_host: h, remote_port: 22, local_port: 1080}\n`;
    const ps = problems(text);
    expect(ps.map((p) => p.field)).toEqual(['tunnels[1].local_port', 'tunnels[2].local_port']);
  });
});

describe('a SOCKS tunnel written by the panel form or the /config API', () => {
  test('an empty remote_port field is written as given and read as none; the hash is the one the client was told', () => {
    const fields = { name: 'proxy', remote_host: 'user@bastion', remote_port: '', local_port: '1080', direction: 'socks' };
    const out = applyEdit('tunnels: []\n', { kind: 'add', fields });
    if (!out.ok) throw new Error(out.error.message);
    const t = valid(out.value).config.tunnels[0]!;
    expect(t).toMatchObject({ name: 'proxy', direction: 'socks', remote_port: { text: '' } });
    expect(t.hash).toBe(inputHash({ fields }));
    expect(t.hash).toBe(md5('proxy|user@bastion||1080|socks|false'));
  });
});

test('a SOCKS tunnel takes a tcp health_check, and refuses an http one, saying why', () => {
  const base = { remote_port: null, direction: 'socks', local_port: '1080' };
  expect(valid(oneTunnel({ ...base, health_check: '{ type: tcp }' })).config.tunnels[0]!.health_check?.type).toBe('tcp');
  const ps = problems(oneTunnel({ ...base, health_check: '{ type: http }' }));
  expect(ps).toHaveLength(1);
  expect(ps[0]).toMatchObject({ field: 'tunnels[0].health_check.type', found: 'http' });
  expect(ps[0]!.expected).toMatch(/^tcp for a SOCKS tunnel/);
});

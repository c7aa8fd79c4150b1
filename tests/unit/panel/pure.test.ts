import { describe, expect, it } from 'vitest';
import type { ConfigProblem } from '../../../src/config/types.js';
import { describeTunnel, directionChoices } from '../../../src/panel/describe.js';
import { blockingErrors } from '../../../src/config-edit/field-errors.js';
import { hostAliases } from '../../../src/panel/ssh-hosts.js';

describe('direction in words', () => {
  const t = (direction: string, remote_port: string, local_port: string, remote_host = 'user@bastion') => ({ direction, remote_port, local_port, remote_host });
  it('default mode: local_to_remote exposes, remote_to_local brings', () => {
    expect(describeTunnel(t('local_to_remote', '22323', '18120'), 'default')).toBe('expose local :18120 on bastion:22323');
    expect(describeTunnel(t('remote_to_local', '8000', '8001', 'bastion'), 'default')).toBe('bring bastion:8000 to local :8001');
  });
  it('ssh-standard mode swaps them', () => {
    expect(describeTunnel(t('local_to_remote', '8000', '8001', 'bastion'), 'ssh-standard')).toBe('bring bastion:8000 to local :8001');
    expect(describeTunnel(t('remote_to_local', '22323', '18120'), 'ssh-standard')).toBe('expose local :18120 on bastion:22323');
  });
  it('names addresses on either side', () => {
    expect(describeTunnel(t('remote_to_local', '10.0.0.5:5432', '127.0.0.1:15432'), 'default')).toBe('bring 10.0.0.5:5432 via bastion to local 127.0.0.1:15432');
    expect(describeTunnel(t('local_to_remote', '0.0.0.0:8080', '3000'), 'default')).toBe('expose local :3000 on bastion:8080 (bound to 0.0.0.0)');
    expect(describeTunnel(t('remote_to_local', '[::1]:80', '8080'), 'default')).toBe('bring [::1]:80 via bastion to local :8080');
  });
  it('a SOCKS proxy, in either mode', () => {
    for (const mode of ['default', 'ssh-standard'] as const) expect(describeTunnel(t('socks', '', '1080', 'user@bastion'), mode)).toBe('SOCKS proxy on local :1080 through bastion');
  });
  it('says nothing for an unknown direction', () => {
    expect(describeTunnel(t('sideways', '1', '2'), 'default')).toBeNull();
  });
  it('labels the choices by the flag they mean', () => {
    expect(directionChoices('default').map((c) => [c.value, c.label.slice(-7)])).toEqual([['remote_to_local', 'ssh -L)'], ['local_to_remote', 'ssh -R)'], ['socks', 'ssh -D)']]);
    expect(directionChoices('ssh-standard').map((c) => c.label.slice(-7))).toEqual(['ssh -R)', 'ssh -L)', 'ssh -D)']);
  });
});

describe('validation problems mapped to the form', () => {
  const p = (field: string, found = 'x', line = 3): ConfigProblem => ({ line, column: 5, field, expected: 'a port 1-65535', found });
  it('puts problems of the edited entry next to its fields', () => {
    const r = blockingErrors([], [p('tunnels[2].local_port', '"abc"')], { kind: 'add', fields: {} as never }, 3);
    expect(r).toMatchObject({ fields: { local_port: 'expected a port 1-65535, found "abc"' }, general: [] });
    expect(r?.problems).toEqual([{ field: 'local_port', problem: p('tunnels[2].local_port', '"abc"') }]);
  });
  it('lists new problems elsewhere above the form, with line and column', () => {
    const r = blockingErrors([], [p('tunnels[0].local_port', '15432')], { kind: 'add', fields: {} as never }, 2);
    expect(r?.general).toEqual(['line 3, column 5: tunnels[0].local_port: expected a port 1-65535, found 15432']);
  });
  it('does not block an edit over problems the file already had elsewhere', () => {
    const before = [p('tunnels[3].remote_port')];
    expect(blockingErrors(before, [p('tunnels[3].remote_port', 'x', 9)], { kind: 'update', index: 0, fields: {} as never }, 4)).toBeNull();
    // After deleting entry 1, entry 3 is entry 2.
    expect(blockingErrors(before, [p('tunnels[2].remote_port')], { kind: 'delete', index: 1 }, 3)).toBeNull();
    // Deleting the broken entry clears it.
    expect(blockingErrors(before, [], { kind: 'delete', index: 3 }, 3)).toBeNull();
  });
  it('blocks on the edited entry\'s own field even when it was already wrong', () => {
    const before = [p('tunnels[0].remote_port')];
    expect(blockingErrors(before, before, { kind: 'update', index: 0, fields: {} as never }, 1)?.fields.remote_port).toBeDefined();
  });
  it('a problem of the edited entry outside the form is shown above it only when new', () => {
    const ssh = p('tunnels[0].ssh_options.ProxyCommand');
    expect(blockingErrors([ssh], [ssh], { kind: 'update', index: 0, fields: {} as never }, 1)).toBeNull();
    expect(blockingErrors([], [ssh], { kind: 'update', index: 0, fields: {} as never }, 1)?.general).toHaveLength(1);
  });
});

describe('SSH config Host entries', () => {
  it('offers aliases, not patterns or negations', () => {
    const r = hostAliases('Host bastion db1 db2\n  HostName 10.0.0.1\nHost *.internal !x\nHost web?\nHost *\n  User me\nMatch host foo\n  User x\nInclude conf.d/*\n');
    expect(r.hosts).toEqual(['bastion', 'db1', 'db2']);
    expect(r.includes).toEqual(['conf.d/*']);
  });
});

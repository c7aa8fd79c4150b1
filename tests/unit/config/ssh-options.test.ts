import { describe, expect, test } from 'vitest';
import { problems, valid } from './helpers.js';

const tunnel = (extra = '') => `  - remote_host: bastion
    remote_port: 5432
    local_port: 15432
    direction: remote_to_local
${extra}`;

describe('ssh_options', () => {
  test('top-level options apply to every tunnel; a tunnel\'s own override them', () => {
    const { config } = valid(`ssh_options:
  ServerAliveInterval: 15
  Compression: yes
tunnels:
${tunnel(`    ssh_options:
      serveraliveinterval: 30   # any case; canonical spelling in the result
      IdentitiesOnly: true
`)}  - remote_host: other
    remote_port: 1
    local_port: 2
    direction: remote_to_local
`);
    expect(config.tunnels[0]!.ssh_options).toEqual({ ServerAliveInterval: '30', Compression: 'yes', IdentitiesOnly: 'yes' });
    expect(config.tunnels[1]!.ssh_options).toEqual({ ServerAliveInterval: '15', Compression: 'yes' });
  });

  test('the written record keeps the tunnel\'s own options as written', () => {
    const { config } = valid(`ssh_options: { Compression: yes }\ntunnels:\n${tunnel('    ssh_options: { ConnectTimeout: 5 }\n')}`);
    expect(config.tunnels[0]!.written.ssh_options).toEqual({ ConnectTimeout: 5 });
  });

  test('ssh_options do not change the hash', () => {
    const a = valid(`tunnels:\n${tunnel()}`).config.tunnels[0]!;
    const b = valid(`tunnels:\n${tunnel('    ssh_options: { ConnectTimeout: 5 }\n')}`).config.tunnels[0]!;
    expect(a.hash).toBe(b.hash);
  });

  test.each([
    ['ProxyCommand', 'nc %h %p'],
    ['LocalCommand', 'touch /tmp/x'],
    ['PermitLocalCommand', 'yes'],
    ['KnownHostsCommand', '/bin/sh -c x'],
    ['Match', 'exec "touch /tmp/x"'],
    ['proxycommand', 'x'],
    ['UserKnownHostsFile', '/dev/null'],
    ['LocalForward', '1 x:2'],
  ])('%s is refused, with the reason, at the key', (key, value) => {
    const ps = problems(`ssh_options:\n  ${key}: ${value}\ntunnels: []\n`);
    expect(ps).toHaveLength(1);
    expect(ps[0]).toMatchObject({ line: 2, column: 3, field: `ssh_options.${key}` });
    expect(ps[0]!.found).toContain('is refused here (it can run commands or defeats supervision); set it in your own SSH config');
  });

  test('an option that is simply unknown says so', () => {
    const [p] = problems(`ssh_options:\n  Colour: blue\n`);
    expect(p!.found).toBe('"Colour", which is not an allowed option');
    expect(p!.expected).toContain('ServerAliveInterval');
  });

  test.each([
    ['no', '"no"'],
    ['"no"', '"no"'],
    ['false', 'false'],
    ['off', '"off"'],
  ])('StrictHostKeyChecking %s is refused: host key checking is never turned off', (value, found) => {
    const [p] = problems(`tunnels:\n${tunnel(`    ssh_options:\n      StrictHostKeyChecking: ${value}\n`)}`);
    expect(p).toMatchObject({ line: 7, column: 30, field: 'tunnels[0].ssh_options.StrictHostKeyChecking', found });
    expect(p!.expected).toContain('host key checking is never turned off');
  });

  test('StrictHostKeyChecking yes and accept-new are fine', () => {
    expect(valid(`ssh_options: { StrictHostKeyChecking: yes }\ntunnels:\n${tunnel()}`).config.tunnels[0]!.ssh_options).toEqual({ StrictHostKeyChecking: 'yes' });
    valid(`ssh_options: { StrictHostKeyChecking: accept-new }\n`);
  });

  test('values are checked: bad ones are reported at the value', () => {
    const ps = problems(`ssh_options:
  ServerAliveInterval: soon
  ExitOnForwardFailure: no
  IdentityFile: "/path with spaces"
  ConnectTimeout: [1, 2]
  Port: 70000
`);
    expect(ps.map((p) => [p.line, p.column, p.field, p.found])).toEqual([
      [2, 24, 'ssh_options.ServerAliveInterval', '"soon"'],
      [3, 25, 'ssh_options.ExitOnForwardFailure', '"no"'],
      [4, 17, 'ssh_options.IdentityFile', '"/path with spaces"'],
      [5, 19, 'ssh_options.ConnectTimeout', 'a list'],
      [6, 9, 'ssh_options.Port', '70000'],
    ]);
  });

  test('ssh_options must be a map', () => {
    expect(problems('ssh_options: [ServerAliveInterval=5]\n')[0]).toMatchObject({ line: 1, column: 14, field: 'ssh_options', found: 'a list' });
    expect(problems(`tunnels:\n${tunnel('    ssh_options: "-oProxyCommand=x"\n')}`)[0]).toMatchObject({
      field: 'tunnels[0].ssh_options',
      found: '"-oProxyCommand=x"',
    });
  });

  test('the same option twice in different case is refused', () => {
    const [p] = problems('ssh_options:\n  ConnectTimeout: 5\n  connecttimeout: 6\n');
    expect(p).toMatchObject({ line: 3, column: 3, field: 'ssh_options.connecttimeout', found: '"connecttimeout" again (first set at line 2, column 3)' });
  });

  test('an empty ssh_options is no options', () => {
    expect(valid(`ssh_options:\ntunnels:\n${tunnel('    ssh_options: {}\n')}`).config.tunnels[0]!.ssh_options).toEqual({});
  });
});

import { describe, expect, test } from 'vitest';
import { forwardFlag, SSH_DEFAULTS, sshArgs } from '../../../src/tunnel/ssh-args.js';
import type { Direction, DirectionMode, TunnelSpec } from '../../../src/tunnel/spec.js';
import { valid } from '../config/helpers.js';

/** A spec exactly as the loader makes it from these fields. */
function spec(remote_port: string, local_port: string, direction: Direction, extra = ''): TunnelSpec {
  const { config } = valid(
    `tunnels:\n  - remote_host: user@bastion\n    remote_port: ${JSON.stringify(remote_port)}\n    local_port: ${JSON.stringify(local_port)}\n    direction: ${direction}\n${extra}`,
  );
  return config.tunnels[0]!;
}

// SPEC §4: which forward each direction means in each mode.
const FLAGS: [Direction, DirectionMode, '-L' | '-R'][] = [
  ['local_to_remote', 'default', '-R'],
  ['remote_to_local', 'default', '-L'],
  ['local_to_remote', 'ssh-standard', '-L'],
  ['remote_to_local', 'ssh-standard', '-R'],
];

// [local_port, remote_port, the -L value, the -R value]. With -L the local side
// listens (a bare port binds 127.0.0.1) and the remote side is the target (a bare
// port means localhost there); with -R the remote side listens (a bare port binds
// 127.0.0.1 too, named: SPEC §4) and the local side is the target.
const FORWARDS: [string, string, string, string][] = [
  ['15432', '5432', '127.0.0.1:15432:localhost:5432', '127.0.0.1:5432:localhost:15432'],
  ['15432', '10.9.8.7:5432', '127.0.0.1:15432:10.9.8.7:5432', '10.9.8.7:5432:localhost:15432'],
  ['15432', '[fd00::7]:5432', '127.0.0.1:15432:[fd00::7]:5432', '[fd00::7]:5432:localhost:15432'],
  ['15432', 'db.internal:5432', '127.0.0.1:15432:db.internal:5432', 'db.internal:5432:localhost:15432'],
  ['10.1.2.3:15432', '5432', '10.1.2.3:15432:localhost:5432', '127.0.0.1:5432:10.1.2.3:15432'],
  ['10.1.2.3:15432', '10.9.8.7:5432', '10.1.2.3:15432:10.9.8.7:5432', '10.9.8.7:5432:10.1.2.3:15432'],
  ['10.1.2.3:15432', '[fd00::7]:5432', '10.1.2.3:15432:[fd00::7]:5432', '[fd00::7]:5432:10.1.2.3:15432'],
  ['10.1.2.3:15432', 'db.internal:5432', '10.1.2.3:15432:db.internal:5432', 'db.internal:5432:10.1.2.3:15432'],
  ['[::1]:15432', '5432', '[::1]:15432:localhost:5432', '127.0.0.1:5432:[::1]:15432'],
  ['[::1]:15432', '10.9.8.7:5432', '[::1]:15432:10.9.8.7:5432', '10.9.8.7:5432:[::1]:15432'],
  ['[::1]:15432', '[fd00::7]:5432', '[::1]:15432:[fd00::7]:5432', '[fd00::7]:5432:[::1]:15432'],
  ['[::1]:15432', 'db.internal:5432', '[::1]:15432:db.internal:5432', 'db.internal:5432:[::1]:15432'],
  ['app.local:15432', '5432', 'app.local:15432:localhost:5432', '127.0.0.1:5432:app.local:15432'],
  ['app.local:15432', '10.9.8.7:5432', 'app.local:15432:10.9.8.7:5432', '10.9.8.7:5432:app.local:15432'],
  ['app.local:15432', '[fd00::7]:5432', 'app.local:15432:[fd00::7]:5432', '[fd00::7]:5432:app.local:15432'],
  ['app.local:15432', 'db.internal:5432', 'app.local:15432:db.internal:5432', 'db.internal:5432:app.local:15432'],
];

const ROWS = FLAGS.flatMap(([direction, mode, flag]) =>
  FORWARDS.map(([local, remote, l, r]) => ({ direction, mode, flag, local, remote, value: flag === '-L' ? l : r })),
);

/** The values of every `-o`, in order. */
const options = (args: readonly string[]) => args.flatMap((a, i) => (args[i - 1] === '-o' ? [a] : []));

describe('sshArgs: every direction × mode × bind form', () => {
  test.each(ROWS)('$direction in mode $mode, local $local, remote $remote → $flag $value', ({ direction, mode, flag, local, remote, value }) => {
    const args = sshArgs({ spec: spec(remote, local, direction), mode, sshConfigPath: '/home/u/.ssh/config', knownHostsFiles: ['/state/known_hosts'] });
    expect(forwardFlag(direction, mode)).toBe(flag);
    // Exactly one forward, the destination last, after `--`.
    expect(args.filter((a) => a === '-L' || a === '-R')).toEqual([flag]);
    expect(args[args.indexOf(flag) + 1]).toBe(value);
    expect(args.slice(-2)).toEqual(['--', 'user@bastion']);
    expect(args.indexOf('--')).toBe(args.length - 2);
    // Defaults are present and host key checking is never off.
    const opts = options(args);
    for (const [k, v] of Object.entries(SSH_DEFAULTS)) expect(opts).toContain(`${k}=${v}`);
    expect(opts.some((o) => /^stricthostkeychecking=no$/i.test(o))).toBe(false);
    expect(args[0]).toBe('-N');
  });
});

describe('sshArgs', () => {
  test('known_hosts paths are literal: a % is doubled (ssh expands tokens in this option), a space quoted', () => {
    const args = sshArgs({ spec: spec('5432', '15432', 'remote_to_local'), mode: 'default', sshConfigPath: null, knownHostsFiles: ['/state 100%/known_hosts', '/home/u%h/kh'] });
    expect(options(args)).toContain('UserKnownHostsFile="/state 100%%/known_hosts" /home/u%%h/kh');
  });

  test('the whole argv for the SPEC sample', () => {
    const args = sshArgs({ spec: spec('5432', '127.0.0.1:15432', 'remote_to_local'), mode: 'default', sshConfigPath: '/cfg/ssh_config', knownHostsFiles: ['/state/known_hosts', '/home/u/.ssh/known_hosts'] });
    expect(args).toEqual([
      '-N',
      '-F', '/cfg/ssh_config',
      '-o', 'LogLevel=DEBUG1',
      '-o', 'ControlMaster=no',
      '-o', 'ControlPath=none',
      '-o', 'RequestTTY=no',
      '-o', 'ExitOnForwardFailure=yes',
      '-o', 'BatchMode=yes',
      '-o', 'ServerAliveInterval=5',
      '-o', 'ServerAliveCountMax=3',
      '-o', 'ConnectTimeout=10',
      '-o', 'StrictHostKeyChecking=accept-new',
      '-o', 'UserKnownHostsFile=/state/known_hosts /home/u/.ssh/known_hosts',
      '-L', '127.0.0.1:15432:localhost:5432',
      '--', 'user@bastion',
    ]);
  });

  test('config ssh_options come before the defaults, so ssh keeps them', () => {
    const s = spec('5432', '15432', 'remote_to_local', '    ssh_options: { ServerAliveInterval: 30, StrictHostKeyChecking: yes, Compression: yes }\n');
    const opts = options(sshArgs({ spec: s, mode: 'default', sshConfigPath: null, knownHostsFiles: [] }));
    expect(opts.indexOf('ServerAliveInterval=30')).toBeLessThan(opts.indexOf('ServerAliveInterval=5'));
    expect(opts.indexOf('StrictHostKeyChecking=yes')).toBeLessThan(opts.indexOf('StrictHostKeyChecking=accept-new'));
    expect(opts).toContain('Compression=yes');
  });

  test('file-wide ssh_options reach the argv through the merged spec', () => {
    const { config } = valid(`ssh_options: { ConnectTimeout: 3 }
tunnels:
  - { remote_host: h, remote_port: 1, local_port: 2, direction: remote_to_local, ssh_options: { Compression: yes } }
`);
    const opts = options(sshArgs({ spec: config.tunnels[0]!, mode: 'default', sshConfigPath: null, knownHostsFiles: [] }));
    expect(opts.indexOf('ConnectTimeout=3')).toBeLessThan(opts.indexOf('ConnectTimeout=10'));
    expect(opts).toContain('Compression=yes');
  });

  test('without an ssh config there is no -F, without known_hosts files no UserKnownHostsFile', () => {
    const args = sshArgs({ spec: spec('5432', '15432', 'remote_to_local'), mode: 'default', sshConfigPath: null, knownHostsFiles: [] });
    expect(args).not.toContain('-F');
    expect(options(args).some((o) => o.startsWith('UserKnownHostsFile='))).toBe(false);
  });

  test('a known_hosts path with a space is quoted for ssh', () => {
    const args = sshArgs({ spec: spec('5432', '15432', 'remote_to_local'), mode: 'default', sshConfigPath: null, knownHostsFiles: ['/state dir/known_hosts', '/k2'] });
    expect(options(args)).toContain('UserKnownHostsFile="/state dir/known_hosts" /k2');
  });

  test('a hostile-looking destination cannot become an option: it always follows --', () => {
    // The loader refuses such a host; were one to slip through, `--` still keeps it a destination.
    const s = { ...spec('5432', '15432', 'remote_to_local'), remote_host: '-oProxyCommand=x' };
    expect(sshArgs({ spec: s, mode: 'default', sshConfigPath: null, knownHostsFiles: [] }).slice(-2)).toEqual(['--', '-oProxyCommand=x']);
  });
});

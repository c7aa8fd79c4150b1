// The one ssh -G reader, the daemon's ssh config for jump hops, and the bare -R bind.
import { describe, expect, it } from 'vitest';
import { daemonSshConfigText, hopOptions, isShellSafePath, userConfigFiles } from '../../../src/ssh-config/daemon-config.js';
import { sshGArgs } from '../../../src/ssh-config/read.js';
import { configSources, hostInfo, parseSshG, pathList } from '../../../src/ssh-config/settings.js';
import { SSH_DEFAULTS } from '../../../src/tunnel/ssh-args.js';
import { hopHost, jumpChain } from '../../../src/ssh-config/jump-hops.js';

describe('ssh -G settings', () => {
  it('reads host name, port, user and known_hosts files', () => {
    const info = hostInfo(parseSshG('user root\nhostname 127.0.0.1\nport 23759\nuserknownhostsfile /tmp/a/known_hosts /tmp/b/kh2\nconnecttimeout none\n'));
    expect(info).toMatchObject({ endpoint: { host: '127.0.0.1', port: 23759 }, hostname: '127.0.0.1', port: '23759', user: 'root', knownHostsFiles: ['/tmp/a/known_hosts', '/tmp/b/kh2'], proxyJump: null });
  });

  it('does not probe a host reached through ProxyJump or ProxyCommand, and keeps the chain', () => {
    expect(hostInfo(parseSshG('hostname 10.0.0.5\nport 22\nproxyjump u@b1:2222,b2\n'))).toMatchObject({ endpoint: null, proxyJump: 'u@b1:2222,b2' });
    expect(hostInfo(parseSshG('hostname 10.0.0.5\nport 22\nproxycommand nc %h %p\n')).endpoint).toBeNull();
    expect(hostInfo(parseSshG('hostname 10.0.0.5\nport 22\nproxycommand none\n')).endpoint).toEqual({ host: '10.0.0.5', port: 22 });
  });

  it('an IPv6 host name is an endpoint like any other', () => {
    expect(hostInfo(parseSshG('hostname ::1\nport 2222\n')).endpoint).toEqual({ host: '::1', port: 2222 });
  });

  it('splits path lists that ssh prints unquoted, keeping spaces inside a path', () => {
    expect(pathList('/tmp/sp ace/kh /tmp/kh2 ~/.ssh/known_hosts')).toEqual(['/tmp/sp ace/kh', '/tmp/kh2', '~/.ssh/known_hosts']);
    expect(pathList('/a b c/x')).toEqual(['/a b c/x']);
    expect(pathList('none')).toEqual([]);
    expect(hostInfo(parseSshG('userknownhostsfile /home/me/my keys/kh %d/.ssh/kh2\n')).knownHostsFiles).toEqual(['/home/me/my keys/kh', '%d/.ssh/kh2']);
  });

  it('learns the files read and the Includes that matched nothing from ssh -v', () => {
    const stderr = [
      'OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19 27 Jan 2026',
      'debug1: Reading configuration data /tmp/x/main.cfg',
      'debug1: Reading configuration data /tmp/x/inc/a.conf',
      'debug1: /tmp/x/inc/a.conf line 1: Applying options for foo',
      'debug1: /tmp/x/main.cfg line 2: include /tmp/x/nope/*.conf matched no files',
      'debug1: Reading configuration data /tmp/x/main.cfg',
    ].join('\n');
    expect(configSources(stderr)).toEqual({ files: ['/tmp/x/main.cfg', '/tmp/x/inc/a.conf'], emptyIncludes: ['/tmp/x/nope/*.conf'] });
  });

  it('runs ssh -G with the tunnel\'s own options, the destination after --', () => {
    expect(sshGArgs('/c/ssh config', { host: 'db', options: { Port: '2222', User: 'app' } })).toEqual(['-v', '-G', '-F', '/c/ssh config', '-o', 'Port=2222', '-o', 'User=app', '--', 'db']);
    expect(sshGArgs(null, { host: '::1', options: {} })).toEqual(['-v', '-G', '--', '::1']);
  });
});

describe('the daemon\'s ssh config (what jump hops get)', () => {
  const text = daemonSshConfigText({
    options: hopOptions(SSH_DEFAULTS),
    knownHostsFiles: ['/state/known_hosts', '~/.ssh/known_hosts', '/odd 100%/kh'],
    includes: userConfigFiles(null),
  });

  it('puts the safety options for every host before the user\'s config (ssh keeps the first value)', () => {
    const lines = text.split('\n');
    const hostAll = lines.indexOf('Host *');
    const include = lines.findIndex((l) => l.startsWith('Include'));
    expect(hostAll).toBeGreaterThanOrEqual(0);
    expect(include).toBeGreaterThan(hostAll);
    for (const l of ['  BatchMode yes', '  StrictHostKeyChecking accept-new', '  ControlMaster no', '  ControlPath none', '  ControlPersist no', '  ServerAliveInterval 5', '  ServerAliveCountMax 3', '  LogLevel ERROR']) {
      expect(lines.slice(hostAll, include)).toContain(l);
    }
    expect(lines).toContain('  UserKnownHostsFile "/state/known_hosts" "~/.ssh/known_hosts" "/odd 100%%/kh"');
  });

  it('includes ~/.ssh/config then the system file when no -F was given, else that file alone', () => {
    expect(text).toContain('Include ~/.ssh/config\nInclude "/etc/ssh/ssh_config"\n');
    expect(userConfigFiles('/etc/tm/ssh config')).toEqual(['/etc/tm/ssh config']);
    expect(daemonSshConfigText({ options: {}, knownHostsFiles: ['/k'], includes: ['/etc/tm/ssh config'] })).toContain('Include "/etc/tm/ssh config"');
  });

  it('refuses a path that would break out of its quotes', () => {
    expect(() => daemonSshConfigText({ options: {}, knownHostsFiles: ['/a"b'], includes: [] })).toThrow(/quote or line break/);
  });

  it('knows which paths ssh can pass to a jump hop unquoted', () => {
    expect(isShellSafePath('/var/lib/tunnel-manager/ssh_config')).toBe(true);
    for (const p of ['/state dir/ssh_config', '/x;rm -rf ~/ssh_config', '/$(id)/c', "/a'b"]) expect(isShellSafePath(p)).toBe(false);
  });
});

describe('jump hosts in the daemon\'s ssh config', () => {
  it('names a hop by the host part ssh matches Host against', () => {
    expect(jumpChain('u@b1:2222,b2')).toEqual(['u@b1:2222', 'b2']);
    expect(jumpChain('none')).toEqual([]);
    expect(jumpChain(null)).toEqual([]);
    expect(hopHost('bastion')).toEqual({ ok: true, value: 'bastion' });
    expect(hopHost('ops@bastion.example.com:2222')).toEqual({ ok: true, value: 'bastion.example.com' });
    expect(hopHost('a@b@jump_1')).toEqual({ ok: true, value: 'jump_1' });
    expect(hopHost('me@[fe80::1]:22')).toEqual({ ok: true, value: 'fe80::1' });
    expect(hopHost('ssh://me@jump:2200')).toEqual({ ok: true, value: 'jump' });
    expect(hopHost('SSH://jump/')).toEqual({ ok: true, value: 'jump' });
    expect(hopHost('ssh://me%40x@jump')).toEqual({ ok: true, value: 'jump' });
  });

  it('refuses a hop name that is not a plain host name, saying why', () => {
    for (const [hop, reason] of [
      ['bast*', /characters other than/],
      ['!bastion', /characters other than/],
      ['b"x', /characters other than/],
      ['b%h', /characters other than/],
      ['-oProxyCommand=id', /starting with "-"/],
      ['u@:22', /no host name/],
      ['[fe80::1', /without its "]"/],
      ['bäst', /characters other than/],
    ] as const) {
      const r = hopHost(hop);
      expect(r.ok, hop).toBe(false);
      if (!r.ok) expect(r.error).toMatch(reason);
    }
  });

  const withHops = daemonSshConfigText({
    options: hopOptions(SSH_DEFAULTS),
    knownHostsFiles: ['/state 100%/known_hosts', '~/.ssh/known_hosts', '~/.ssh/known_hosts2'],
    includes: ['/etc/tm/ssh_config'],
    hops: [
      { host: 'bastion', files: ['/pins/bastion_kh', '/pins/100%'] },
      { host: 'fe80::1', files: ['~/.ssh/known_hosts', '/state 100%/known_hosts'] },
    ],
  });

  it('gives each hop its own files after the daemon\'s, before Host * (ssh keeps the first value)', () => {
    const lines = withHops.split('\n');
    const hostAll = lines.indexOf('Host *');
    expect(lines.slice(2, hostAll)).toEqual([
      'Host "bastion"',
      '  UserKnownHostsFile "/state 100%%/known_hosts" "/pins/bastion_kh" "/pins/100%%"',
      'Host "fe80::1"',
      '  UserKnownHostsFile "/state 100%%/known_hosts" "~/.ssh/known_hosts"',
    ]);
    expect(lines.slice(hostAll)).toContain('  UserKnownHostsFile "/state 100%%/known_hosts" "~/.ssh/known_hosts" "~/.ssh/known_hosts2"');
    expect(lines.at(-2)).toBe('Include "/etc/tm/ssh_config"');
  });

  it('never writes a hop name or file that could break out of its line (a bug if it gets there)', () => {
    const base = { options: {}, knownHostsFiles: ['/k'], includes: [] };
    for (const host of ['a b', 'a*', 'x"\n  ProxyCommand id', '-x', '!a', 'a,b', '']) {
      expect(() => daemonSshConfigText({ ...base, hops: [{ host, files: [] }] }), host).toThrow(/not a plain host name/);
    }
    expect(() => daemonSshConfigText({ ...base, hops: [{ host: 'a', files: ['/x"\n  ProxyCommand id'] }] })).toThrow(/quote or line break/);
  });
});

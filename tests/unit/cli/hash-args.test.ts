// `tunnel-cli hash`'s arguments against the config file's own reader: each case is
// also written as a one-tunnel file (every argument as a quoted string), and the
// daemon's verdict — accepted with this hash, or refused — must be the CLI's.
import { describe, expect, it } from 'vitest';
import { hashOf, readHashArgs } from '../../../src/cli/hash-args.js';
import { parseConfigText } from '../../../src/config/load.js';

const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction', 'interactive'];

/** The daemon's hash for the entry the arguments stand for, or null when it refuses the entry. */
function daemonHash(args: readonly string[]): string | null {
  const lines = args.map((a, i) => `    ${FIELDS[i]}: ${JSON.stringify(a)}`);
  const r = parseConfigText(`tunnels:\n  -\n${lines.join('\n')}\n`);
  if (r.kind !== 'ok') return null;
  expect(r.config.tunnels).toHaveLength(1);
  return r.config.tunnels[0]?.hash ?? null;
}

const ACCEPTED: string[][] = [
  ['db', 'user@bastion', '5432', '127.0.0.1:15432'],
  ['db', 'user@bastion', '05432', '127.0.0.1:15432'],
  ['', 'h', '1', '2', 'local_to_remote', 'true'],
  ['db', 'bastion', '65535', '[::1]:8080', 'remote_to_local', 'false'],
  ['db', 'bastion', 'db.internal:5432', 'localhost:15432'],
  ['db', 'bastion', '5432', '15432', ''],
  ['db', 'bastion', '5432', '15432', 'remote_to_local', 'True'],
  ['db', 'bastion', '5432', '15432', 'local_to_remote', 'YES'],
  ['db', 'bastion', '5432', '15432', 'remote_to_local', 'no'],
  ['proxy', 'testhost', '', '21090', 'socks'],
  ['proxy', 'testhost', '', '0.0.0.0:1080', 'socks', 'true'],
  ['p', '::1', '22', '2222'],
  ['p', 'user@fe80::1%eth0', '22', '2222'],
  ['a name with spaces', 'bastion', '1', '2'],
  ['n'.repeat(128), 'bastion', '1', '2'],
  ['~', 'bastion', '1', '2'],
];

const REFUSED: string[][] = [
  ['socks', 'testhost', '21090', 'socks'],
  ['proxy', 'testhost', '21090', '1080', 'socks'],
  ['db', 'bastion', '0', '15432'],
  ['db', 'bastion', '65536', '15432'],
  ['db', 'bastion', '5432', '99999'],
  ['db', 'bastion', '', '15432'],
  ['db', 'bastion', '5432', ''],
  ['db', 'bastion', '5432', '15432 '],
  ['db', 'bastion', 'x:5432:1', '15432'],
  ['db', 'bastion', '[::1]', '15432'],
  ['db', 'bastion', '5432', '300.1.1.1:80'],
  ['db', '-oProxyCommand=x', '1', '2'],
  ['db', 'two words', '1', '2'],
  ['db', '', '1', '2'],
  ['db', 'host\nx', '1', '2'],
  ['db', '[::1]', '1', '2'],
  ['db', 'bastion', '1', '2', 'sideways'],
  ['db', 'bastion', '1', '2', 'Remote_To_Local'],
  ['db', 'bastion', '1', '2', '~'],
  ['db', 'bastion', '1', '2', 'remote_to_local', 'maybe'],
  ['db', 'bastion', '1', '2', 'remote_to_local', ''],
  ['db', 'bastion', '1', '2', 'remote_to_local', '1'],
  ['n'.repeat(129), 'bastion', '1', '2'],
  ['tab\there', 'bastion', '1', '2'],
];

// Destinations with a port (SPEC §3): whatever the file's reader decides, the CLI decides the same.
const SAME_VERDICT: string[][] = [
  ['db', 'bastion:2222', '5432', '15432'],
  ['db', 'user@bastion:2222', '5432', '15432'],
  ['db', 'ssh://user@bastion:2222', '5432', '15432'],
  ['db', '[::1]:2222', '5432', '15432'],
  ['db', 'user@', '5432', '15432'],
  ['db', 'bastion', '+5432', '15432'],
  ['db', 'bastion', '0x1538', '15432'],
];

describe('tunnel-cli hash reads its arguments as the config file reads its fields', () => {
  it.each(SAME_VERDICT)('the same verdict and hash as the file: %j', (...args) => {
    const expected = daemonHash(args);
    const r = hashOf(args);
    expect(r.ok ? r.value : null).toBe(expected);
  });

  it.each(ACCEPTED)('accepted, with the daemon\'s hash: %j', (...args) => {
    const expected = daemonHash(args);
    expect(expected, 'the config file accepts this entry').not.toBeNull();
    expect(hashOf(args)).toEqual({ ok: true, value: expected });
  });

  it.each(REFUSED)('refused, as the file refuses it: %j', (...args) => {
    expect(daemonHash(args), 'the config file refuses this entry').toBeNull();
    expect(hashOf(args).ok).toBe(false);
  });
});

describe('its messages', () => {
  const message = (args: string[]) => {
    const r = readHashArgs(args);
    if (r.ok) throw new Error(`accepted: ${JSON.stringify(args)}`);
    return r.error;
  };

  it('name the argument, what was expected and what was found', () => {
    expect(message(['db', 'bastion', '99999', '15432'])).toBe(
      'remote_port (the 3rd argument): expected a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name), found "99999"',
    );
    expect(message(['db', '-oProxyCommand=x', '1', '2'])).toMatch(/^remote_host \(the 2nd argument\): expected an ssh destination: .*, found "-oProxyCommand=x", which starts with "-"/);
    expect(message(['db', 'bastion', '1', '2', 'sideways'])).toBe('direction (the 5th argument): expected local_to_remote, remote_to_local or socks, found "sideways"');
    expect(message(['db', 'bastion', '1', '2', 'remote_to_local', 'maybe'])).toBe('interactive (the 6th argument): expected true or false (also yes or no, in any case), found "maybe"');
    expect(message(['n'.repeat(129), 'bastion', '1', '2'])).toMatch(/^name \(the 1st argument\): expected a name of at most 128 characters .*, found a name of 129 characters$/);
    expect(message(['proxy', 'testhost', '21090', '1080', 'socks'])).toBe('remote_port (the 3rd argument): expected none for direction socks: an empty argument (""), found "21090"');
  });

  it('every problem at once, in one line', () => {
    const m = message(['db', 'bad host', '0', 'x', 'up', 'maybe']);
    expect(m.split('; ').map((p) => p.split(' ')[0])).toEqual(['remote_host', 'direction', 'remote_port', 'local_port', 'interactive']);
    expect(m).not.toContain('\n');
  });

  it('a SOCKS tunnel written without its (absent) remote_port: the local port is not "socks", and the fix is shown', () => {
    expect(message(['socks', 'testhost', '21090', 'socks'])).toBe(
      'local_port (the 4th argument): expected a port 1-65535, or "ip:port" (IPv4, [IPv6] or host name), found "socks", a direction: a SOCKS tunnel has no remote_port; pass an empty one: tunnel-cli hash socks testhost "" 21090 socks',
    );
    expect(message(['my proxy', 'testhost', '1080', 'socks', 'true'])).toContain('tunnel-cli hash "my proxy" testhost "" 1080 socks true');
    expect(message(['db', 'bastion', '15432', 'local_to_remote'])).toMatch(/found "local_to_remote", a direction: an argument before it is missing$/);
    const fixed = ['socks', 'testhost', '', '21090', 'socks'];
    expect(hashOf(fixed)).toEqual({ ok: true, value: daemonHash(fixed) });
  });

  it('the count', () => {
    expect(message(['a', 'b', '1'])).toBe('expected <name> <remote_host> <remote_port> <local_port> [direction] [interactive], found 3 arguments: no local_port');
    expect(message(['a'])).toMatch(/, found 1 argument: no remote_host, no remote_port, no local_port$/);
    expect(message(['a', 'b', '', '2', 'socks', 'false', 'x'])).toMatch(/, found 7 arguments: "x" after interactive$/);
  });
});

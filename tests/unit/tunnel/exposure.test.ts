// Exposure (SPEC §5): which forwards open a port to more than this machine, from the
// tunnel as the loader makes it and the product's own listeners; the sentence names
// who can reach it. Each case states the forward ssh is given, so the rule is read
// against the argv (a bare port binds 127.0.0.1 by name, whatever GatewayPorts says).
import { describe, expect, test } from 'vitest';
import { addressScope, exposureOf, exposureOfWritten, exposureText, type Exposure, type OwnListener } from '../../../src/tunnel/exposure.js';
import { forwardSpec } from '../../../src/tunnel/ssh-args.js';
import type { DirectionMode, TunnelSpec } from '../../../src/tunnel/spec.js';
import { valid } from '../config/helpers.js';

const OWN: OwnListener[] = [
  { kind: 'api', host: '127.0.0.1', port: 8080 },
  { kind: 'panel', host: '127.0.0.1', port: 5000 },
];

/** A spec exactly as the loader makes it. */
function spec(fields: { remote_host?: string; remote_port?: string; local_port: string; direction: string; ssh_options?: string }): TunnelSpec {
  const lines = [
    `  - remote_host: ${JSON.stringify(fields.remote_host ?? 'user@bastion')}`,
    ...(fields.remote_port === undefined ? [] : [`    remote_port: ${JSON.stringify(fields.remote_port)}`]),
    `    local_port: ${JSON.stringify(fields.local_port)}`,
    `    direction: ${fields.direction}`,
    ...(fields.ssh_options ? [`    ssh_options: ${fields.ssh_options}`] : []),
  ];
  return valid(`tunnels:\n${lines.join('\n')}\n`).config.tunnels[0]!;
}

const kinds = (es: Exposure[]) => es.map((e) => e.kind);

describe('addressScope', () => {
  test.each([
    ['0.0.0.0', 'all'], ['::', 'all'], ['[::]', 'all'], ['0:0:0:0:0:0:0:0', 'all'], ['::0', 'all'], ['*', 'all'], ['', 'all'],
    ['127.0.0.1', 'loopback'], ['127.1.2.3', 'loopback'], ['::1', 'loopback'], ['[::1]', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'], ['localhost', 'loopback'], ['LOCALHOST', 'loopback'], ['localhost.', 'loopback'], ['app.localhost', 'loopback'],
    ['192.168.1.5', 'other'], ['10.0.0.1', 'other'], ['fd00::7', 'other'], ['::ffff:10.0.0.1', 'other'], ['fe80::1%eth0', 'other'],
    ['db.internal', 'other'], ['128.0.0.1', 'other'], ['localhost.example.com', 'other'],
  ] as const)('%j is %s', (host, scope) => {
    expect(addressScope(host)).toBe(scope);
  });
});

describe('listeners here: -L and SOCKS', () => {
  test.each([
    // [local_port, what ssh is given, warned]
    ['1080', '127.0.0.1:1080', false],
    ['127.0.0.1:1080', '127.0.0.1:1080', false],
    ['127.0.0.2:1080', '127.0.0.2:1080', false],
    ['localhost:1080', 'localhost:1080', false],
    ['[::1]:1080', '[::1]:1080', false],
    ['0.0.0.0:1080', '0.0.0.0:1080', true],
    ['[::]:1080', '[::]:1080', true],
    ['192.168.1.5:1080', '192.168.1.5:1080', true],
    ['[fd00::5]:1080', '[fd00::5]:1080', true],
    ['gateway.lan:1080', 'gateway.lan:1080', true],
  ] as const)('SOCKS on %s (ssh -D %s): warned %s', (local, argv, warned) => {
    const t = spec({ local_port: local, direction: 'socks' });
    expect(forwardSpec(t, 'default')).toEqual({ flag: '-D', value: argv });
    const found = exposureOf(t, 'default', OWN);
    expect(kinds(found)).toEqual(warned ? ['open_listener'] : []);
  });

  test('a SOCKS proxy on every address names itself an open proxy into the server\'s networks, and who can use it', () => {
    const [e] = exposureOf(spec({ local_port: '0.0.0.0:1080', direction: 'socks' }), 'default', OWN);
    expect(e).toEqual({ kind: 'open_listener', flag: '-D', all: true, listen: '0.0.0.0:1080', server: 'user@bastion', target: null, reach: 'local_network' });
    expect(exposureText(e!)).toBe(
      'its SOCKS proxy listens on every address of this machine (0.0.0.0:1080): anyone who can reach this machine can use it as a proxy from user@bastion into every network user@bastion reaches, its own loopback services included; bind it to 127.0.0.1 unless that is meant',
    );
  });

  test('a LAN address is not every address, and the sentence says which one', () => {
    const [e] = exposureOf(spec({ local_port: '[fd00::5]:1080', direction: 'socks' }), 'default', OWN);
    expect(e).toMatchObject({ all: false, listen: '[fd00::5]:1080' });
    expect(exposureText(e!)).toMatch(/^its SOCKS proxy listens on \[fd00::5\]:1080, not loopback: anyone who can reach this machine /);
  });

  test.each([
    ['0.0.0.0:15432', true], ['[::]:15432', true], ['10.1.2.3:15432', true], ['15432', false], ['localhost:15432', false], ['[::1]:15432', false],
  ] as const)('-L (remote_to_local, default mode) on %s: warned %s', (local, warned) => {
    const t = spec({ remote_port: 'db.internal:5432', local_port: local, direction: 'remote_to_local' });
    expect(forwardSpec(t, 'default').flag).toBe('-L');
    expect(kinds(exposureOf(t, 'default', OWN))).toEqual(warned ? ['open_listener'] : []);
  });

  test('an -L on every address names what it reaches and through which server', () => {
    const [e] = exposureOf(spec({ remote_port: 'db.internal:5432', local_port: '0.0.0.0:15432', direction: 'remote_to_local' }), 'default', OWN);
    expect(exposureText(e!)).toBe(
      'its -L forward listens on every address of this machine (0.0.0.0:15432): anyone who can reach this machine reaches db.internal:5432 through user@bastion; bind it to 127.0.0.1 unless that is meant',
    );
    // A bare remote port is the server's own localhost.
    const [bare] = exposureOf(spec({ remote_port: '5432', local_port: '0.0.0.0:15432', direction: 'remote_to_local' }), 'default', OWN);
    expect(bare).toMatchObject({ target: 'localhost:5432' });
  });

  test('a bare port binds loopback even with GatewayPorts yes: the argv names 127.0.0.1, so ssh never binds the wildcard', () => {
    const t = spec({ remote_port: '5432', local_port: '15432', direction: 'remote_to_local', ssh_options: '{GatewayPorts: "yes"}' });
    expect(t.ssh_options.GatewayPorts).toBe('yes');
    expect(forwardSpec(t, 'default').value).toBe('127.0.0.1:15432:localhost:5432');
    expect(exposureOf(t, 'default', OWN)).toEqual([]);
  });

  test('the mode decides which side listens (SPEC §4): local_to_remote is -L in ssh-standard mode', () => {
    const t = spec({ remote_port: '5432', local_port: '0.0.0.0:15432', direction: 'local_to_remote' });
    // Default mode: -R, and 0.0.0.0 is the address connected to here, not a listener.
    expect(forwardSpec(t, 'default')).toEqual({ flag: '-R', value: '127.0.0.1:5432:0.0.0.0:15432' });
    expect(exposureOf(t, 'default', OWN)).toEqual([]);
    expect(forwardSpec(t, 'ssh-standard').flag).toBe('-L');
    expect(kinds(exposureOf(t, 'ssh-standard', OWN))).toEqual(['open_listener']);
  });
});

describe('-R on the server', () => {
  test.each([
    ['0.0.0.0:9000', true], ['[::]:9000', true], ['9000', false], ['127.0.0.1:9000', false], ['localhost:9000', false], ['[::1]:9000', false],
    // A named address of the server is its own case: the GatewayPorts note (health unknown) covers it.
    ['10.0.0.5:9000', false],
  ] as const)('remote bind %s: warned %s', (remote, warned) => {
    const t = spec({ remote_port: remote, local_port: '3000', direction: 'local_to_remote' });
    expect(forwardSpec(t, 'default').flag).toBe('-R');
    expect(kinds(exposureOf(t, 'default', OWN))).toEqual(warned ? ['remote_all'] : []);
  });

  test('the wildcard binds of ssh itself (* and empty) are every address too', () => {
    for (const host of ['*', '']) {
      const t = { ...spec({ remote_port: '9000', local_port: '3000', direction: 'local_to_remote' }), remote_port: { host, port: 9000, text: `${host}:9000` } };
      expect(exposureOf(t, 'default', OWN)).toEqual([{ kind: 'remote_all', flag: '-R', listen: `${host}:9000`, server: 'user@bastion', target: 'localhost:3000', reach: 'server_network' }]);
    }
    const l = { ...spec({ remote_port: '5432', local_port: '15432', direction: 'remote_to_local' }), local_port: { host: '*', port: 15432, text: '*:15432' } };
    expect(exposureOf(l, 'default', OWN)).toMatchObject([{ kind: 'open_listener', all: true, listen: '*:15432' }]);
  });

  test('the sentence names the server, what it reaches here, and GatewayPorts', () => {
    const [e] = exposureOf(spec({ remote_host: 'bastion', remote_port: '0.0.0.0:9000', local_port: '3000', direction: 'local_to_remote' }), 'default', OWN);
    expect(exposureText(e!)).toBe(
      "its -R forward asks bastion to listen on all of its addresses (0.0.0.0:9000): anyone who can reach bastion reaches localhost:3000 on this machine (once the server's sshd allows it: GatewayPorts clientspecified or yes); bind it to 127.0.0.1 unless that is meant",
    );
  });

  test('remote_to_local is -R in ssh-standard mode', () => {
    const t = spec({ remote_port: '0.0.0.0:9000', local_port: '3000', direction: 'remote_to_local' });
    expect(exposureOf(t, 'default', OWN)).toEqual([]);
    expect(kinds(exposureOf(t, 'ssh-standard', OWN))).toEqual(['remote_all']);
  });
});

describe('a forward of the product\'s own listeners', () => {
  test('-R 0.0.0.0:9000:127.0.0.1:8080 publishes the daemon\'s API on every address of the server: told once, as that', () => {
    const t = spec({ remote_host: 'bastion', remote_port: '0.0.0.0:9000', local_port: '127.0.0.1:8080', direction: 'local_to_remote' });
    expect(forwardSpec(t, 'default').value).toBe('0.0.0.0:9000:127.0.0.1:8080');
    const found = exposureOf(t, 'default', OWN);
    expect(found).toEqual([{ kind: 'own_listener', flag: '-R', listener: 'api', address: '127.0.0.1:8080', listen: '0.0.0.0:9000', server: 'bastion', reach: 'server_network' }]);
    expect(exposureText(found[0]!)).toBe(
      "it forwards the daemon's API (127.0.0.1:8080) to 0.0.0.0:9000 on bastion: anyone who can reach bastion gets to it as this machine's own account, and with it can start, stop and rewrite every tunnel (TUNNEL_API_TOKEN, when set, is still asked for)",
    );
  });

  test('on the server\'s loopback it is still every account there', () => {
    const t = spec({ remote_host: 'bastion', remote_port: '9000', local_port: '8080', direction: 'local_to_remote' });
    expect(exposureOf(t, 'default', OWN)).toMatchObject([{ kind: 'own_listener', listener: 'api', reach: 'server_accounts' }]);
    expect(exposureText(exposureOf(t, 'default', OWN)[0]!)).toContain('every account on bastion gets to it');
  });

  test.each([
    // [local_port (the target of -R), own listeners, listener hit or null]
    ['8080', OWN, 'api'],
    ['localhost:8080', OWN, 'api'],
    ['127.0.0.1:5000', OWN, 'panel'],
    ['[::1]:8080', OWN, null],
    ['127.0.0.2:8080', OWN, null],
    ['127.0.0.1:8081', OWN, null],
    ['127.0.0.1:8080', [{ kind: 'api', host: '0.0.0.0', port: 8080 }], 'api'],
    ['[::1]:8080', [{ kind: 'api', host: '0.0.0.0', port: 8080 }], null],
    ['[::1]:8080', [{ kind: 'api', host: '::', port: 8080 }], 'api'],
    ['127.0.0.1:8080', [{ kind: 'api', host: '::', port: 8080 }], 'api'],
    ['[::1]:8080', [{ kind: 'api', host: '::1', port: 8080 }], 'api'],
    ['localhost:8080', [{ kind: 'api', host: '::1', port: 8080 }], 'api'],
    ['8080', [{ kind: 'api', host: 'localhost', port: 8080 }], 'api'],
    ['192.168.1.5:8080', [{ kind: 'api', host: '192.168.1.5', port: 8080 }], 'api'],
    ['192.168.1.6:8080', [{ kind: 'api', host: '192.168.1.5', port: 8080 }], null],
    ['192.168.1.5:8080', [{ kind: 'api', host: '0.0.0.0', port: 8080 }], null],
    // Not bound yet (a test's port 0) is nobody's port.
    ['8080', [{ kind: 'api', host: '127.0.0.1', port: 0 }], null],
    ['9090', [{ kind: 'api', host: '127.0.0.1', port: 9090 }], 'api'],
  ] as const)('-R to %s with %j: %s', (local, own, hit) => {
    const t = spec({ remote_port: '9000', local_port: local, direction: 'local_to_remote' });
    const found = exposureOf(t, 'default', own);
    expect(found.filter((e) => e.kind === 'own_listener').map((e) => (e.kind === 'own_listener' ? e.listener : null))).toEqual(hit === null ? [] : [hit]);
  });

  test('-L to the daemon\'s port is ours only when the server is this machine (or names our address)', () => {
    const here = spec({ remote_host: 'me@localhost', remote_port: '8080', local_port: '18080', direction: 'remote_to_local' });
    expect(exposureOf(here, 'default', OWN)).toEqual([{ kind: 'own_listener', flag: '-L', listener: 'api', address: '127.0.0.1:8080', listen: '127.0.0.1:18080', server: 'me@localhost', reach: 'local_accounts' }]);
    expect(exposureText(exposureOf(here, 'default', OWN)[0]!)).toContain('to 127.0.0.1:18080 on this machine: every account on this machine gets to it');
    const v6 = spec({ remote_host: '::1', remote_port: '5000', local_port: '0.0.0.0:15000', direction: 'remote_to_local' });
    expect(exposureOf(v6, 'default', OWN)).toMatchObject([{ kind: 'own_listener', listener: 'panel', reach: 'local_network' }]);
    // Another server's 8080 is not ours.
    const there = spec({ remote_host: 'bastion', remote_port: '8080', local_port: '18080', direction: 'remote_to_local' });
    expect(exposureOf(there, 'default', OWN)).toEqual([]);
    // Unless the server is sent to the address our API listens on by name.
    const lan = spec({ remote_host: 'bastion', remote_port: '192.168.1.5:8080', local_port: '18080', direction: 'remote_to_local' });
    expect(exposureOf(lan, 'default', [{ kind: 'api', host: '192.168.1.5', port: 8080 }])).toMatchObject([{ kind: 'own_listener', listener: 'api' }]);
  });

  test('the panel names what it gives', () => {
    const [e] = exposureOf(spec({ remote_port: '9000', local_port: '5000', direction: 'local_to_remote' }), 'default', OWN);
    expect(exposureText(e!)).toContain('it forwards the web panel (127.0.0.1:5000) to 127.0.0.1:9000 on user@bastion: every account on user@bastion gets to it');
    expect(exposureText(e!)).toContain('PANEL_TOKEN');
  });
});

describe('exposureOfWritten: the fields as a form or a /config body has them', () => {
  const mode: DirectionMode = 'default';
  test('the same answer as from the loaded spec', () => {
    const f = { remote_host: 'bastion', remote_port: '0.0.0.0:9000', local_port: '8080', direction: 'local_to_remote' };
    expect(exposureOfWritten(f, mode, OWN)).toEqual(exposureOf(spec({ ...f }), mode, OWN));
    expect(kinds(exposureOfWritten({ remote_host: 'b', remote_port: '', local_port: '0.0.0.0:1080', direction: 'socks' }, mode, OWN))).toEqual(['open_listener']);
    // No direction is remote_to_local: -L.
    expect(kinds(exposureOfWritten({ remote_host: 'b', remote_port: '5432', local_port: '[::]:15432', direction: '' }, mode, OWN))).toEqual(['open_listener']);
  });

  test('fields the loader refuses give none', () => {
    expect(exposureOfWritten({ remote_host: 'b', remote_port: '99999', local_port: '0.0.0.0:1', direction: 'remote_to_local' }, mode, OWN)).toEqual([]);
    expect(exposureOfWritten({ remote_host: 'b', remote_port: '1', local_port: '0.0.0.0:1', direction: 'sideways' }, mode, OWN)).toEqual([]);
    expect(exposureOfWritten({ remote_host: '', remote_port: '1', local_port: '0.0.0.0:1', direction: 'remote_to_local' }, mode, OWN)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { localEndOf, tunnelListeningOn } from '../../../src/daemon/local-tunnel.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';

const tunnel = (name: string, local: { host: string | null; port: number }, direction: TunnelSpec['direction'] = 'remote_to_local'): TunnelSpec =>
  ({
    hash: `hash-${name}`,
    name,
    remote_host: 'gpu-box',
    remote_port: { host: null, port: 11434, text: '11434' },
    local_port: { ...local, text: local.host === null ? String(local.port) : `${local.host}:${local.port}` },
    direction,
    interactive: false,
    ssh_options: {},
    written: {},
    line: 1,
  });

describe('localEndOf (a provider bound to a tunnel by name)', () => {
  const tunnels = [
    tunnel('llm', { host: null, port: 11434 }),
    tunnel('wide', { host: '0.0.0.0', port: 11435 }),
    tunnel('v6', { host: '::1', port: 11436 }),
    tunnel('out', { host: null, port: 8000 }, 'local_to_remote'),
  ];

  it('is where the tunnel\'s local end listens, a wildcard bind reached on loopback', () => {
    expect(localEndOf(tunnels, 'default', 'llm')).toEqual({ hash: 'hash-llm', host: '127.0.0.1', port: 11434 });
    expect(localEndOf(tunnels, 'default', 'wide')).toEqual({ hash: 'hash-wide', host: '127.0.0.1', port: 11435 });
    expect(localEndOf(tunnels, 'default', 'v6')).toEqual({ hash: 'hash-v6', host: '::1', port: 11436 });
  });

  it('is nothing for a tunnel that does not listen here, or no tunnel of that name', () => {
    expect(localEndOf(tunnels, 'default', 'out')).toBeUndefined();
    expect(localEndOf(tunnels, 'default', 'nope')).toBeUndefined();
    // ssh's own sense of the directions: local_to_remote is the -L one.
    expect(localEndOf(tunnels, 'ssh-standard', 'out')).toEqual({ hash: 'hash-out', host: '127.0.0.1', port: 8000 });
  });

  it('agrees with tunnelListeningOn, which names the tunnel behind a base_url', () => {
    expect(tunnelListeningOn(tunnels, 'default', '127.0.0.1', 11435)?.name).toBe('wide');
    expect(tunnelListeningOn(tunnels, 'default', 'localhost', 11434)?.name).toBe('llm');
  });
});

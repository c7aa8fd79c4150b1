// A tunnel's plan: its ssh argv, known_hosts list, binds to probe, start time-out, and
// for a shared tunnel the connection it joins and the forward it adds.
import { describe, expect, it } from 'vitest';
import { buildPlan, knownHostsList } from '../../../src/supervisor/plan/plan.js';
import { FALLBACK_HOST_INFO } from '../../../src/ssh-config/settings.js';
import { parseEndpoint } from '../../../src/tunnel/endpoint.js';
import type { TunnelSpec } from '../../../src/tunnel/spec.js';

const ep = (s: string) => {
  const r = parseEndpoint(s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

function spec(hash: string, over: Partial<TunnelSpec> = {}): TunnelSpec {
  return {
    hash,
    name: hash,
    remote_host: 'user@bastion',
    remote_port: ep('5432'),
    local_port: ep('15432'),
    direction: 'remote_to_local',
    interactive: false,
    ssh_options: {},
    written: {},
    line: 1,
    ...over,
  };
}

describe('plan', () => {
  const ctx = { sshBin: '/usr/bin/ssh', sshConfigPath: '/cfg', mode: 'default' as const, knownHostsPath: '/state/known_hosts', loginLogDir: '/state/logins', controlDir: null };
  const host = { ...FALLBACK_HOST_INFO, endpoint: { host: '10.0.0.1', port: 2222 }, knownHostsFiles: ['/home/u/.ssh/known_hosts', '/state/known_hosts'] };

  it('lists the state dir known_hosts first, then the host\'s own files, once each', () => {
    expect(knownHostsList('/state/known_hosts', host)).toEqual(['/state/known_hosts', '/home/u/.ssh/known_hosts']);
    const p = buildPlan(spec('a'), ctx, host);
    expect(p.args).toContain('UserKnownHostsFile=/state/known_hosts /home/u/.ssh/known_hosts');
  });

  it('probes our bind address for -L and names the remote bind for -R; start timeout is ConnectTimeout + 5 s', () => {
    const l = buildPlan(spec('a', { local_port: ep('127.0.0.2:7000') }), ctx, host);
    expect(l).toMatchObject({ file: '/usr/bin/ssh', flag: '-L', localBind: { host: '127.0.0.2', port: 7000 }, remoteBind: null, sshEndpoint: host.endpoint, spacingKey: 'bastion', startTimeoutMs: 15_000 });
    const r = buildPlan(spec('b', { direction: 'local_to_remote', remote_port: ep('0.0.0.0:8000'), ssh_options: { connecttimeout: '3' } }), ctx, host);
    expect(r).toMatchObject({ flag: '-R', localBind: null, remoteBind: '0.0.0.0', startTimeoutMs: 8_000 });
  });
});

describe('interactive plan', () => {
  const ctx = { sshBin: '/usr/bin/ssh', sshConfigPath: '/cfg', mode: 'default' as const, knownHostsPath: '/state/known_hosts', loginLogDir: '/state/logins', controlDir: null };
  const host = FALLBACK_HOST_INFO;

  it('runs without BatchMode, with its debug lines in its own file, and keeps every other safety option', () => {
    const p = buildPlan(spec('abcd', { interactive: true }), ctx, host);
    // Explicit: the daemon's -F file sets BatchMode yes for every host (and jump host).
    expect(p.args).toContain('BatchMode=no');
    expect(p.args).not.toContain('BatchMode=yes');
    expect(p.args.slice(p.args.indexOf('-E'), p.args.indexOf('-E') + 2)).toEqual(['-E', '/state/logins/abcd.log']);
    for (const o of ['ExitOnForwardFailure=yes', 'StrictHostKeyChecking=accept-new', 'ServerAliveInterval=5', 'ControlMaster=no', 'LogLevel=DEBUG1']) expect(p.args).toContain(o);
    expect(p.args.indexOf('-E')).toBeLessThan(p.args.indexOf('--'));
  });

  it('shares one login per host and option set: the master in a terminal, its debug file the connection\'s; shared: false keeps its own', () => {
    const withMux = { ...ctx, controlDir: '/state/mux' };
    const a = buildPlan(spec('aaaa', { interactive: true }), withMux, host);
    const b = buildPlan(spec('bbbb', { interactive: true, local_port: ep('15433') }), withMux, host);
    const conn = a.shared!.connection;
    expect(b.shared!.connection).toEqual(conn);
    expect(conn).toMatchObject({ interactive: true, controlPath: `/state/mux/${conn.id}` });
    expect(conn.args).toContain('BatchMode=no');
    expect(conn.args).toContain('ControlMaster=yes');
    expect(conn.args.slice(conn.args.indexOf('-E'), conn.args.indexOf('-E') + 2)).toEqual(['-E', `/state/logins/${conn.id}.log`]);
    expect(a.shared!.forward).toEqual({ flag: '-L', value: '127.0.0.1:15432:localhost:5432' });
    // The same host logged in by itself is another connection; so are other options.
    expect(buildPlan(spec('cccc'), withMux, host).shared!.connection).toMatchObject({ interactive: false });
    expect(buildPlan(spec('cccc'), withMux, host).shared!.connection.id).not.toBe(conn.id);
    expect(buildPlan(spec('dddd', { interactive: true, ssh_options: { Compression: 'yes' } }), withMux, host).shared!.connection.id).not.toBe(conn.id);
    expect(buildPlan(spec('eeee', { interactive: true, shared: false }), withMux, host).shared).toBeNull();
  });

  it('a tunnel that is not interactive keeps BatchMode and writes no debug file', () => {
    const p = buildPlan(spec('abcd'), ctx, host);
    expect(p.args).toContain('BatchMode=yes');
    expect(p.args).not.toContain('-E');
  });
});

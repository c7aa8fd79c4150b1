// The Host and Origin rules every TCP listener applies (src/edge/host-origin-rules.ts), and the
// TUNNEL_API_ALLOWED_HOSTS setting that feeds them.
import { describe, expect, it } from 'vitest';
import { hostAllowed, originAllowed, sameOrigin, type HostPolicy } from '../../../src/edge/host-origin-rules.js';
import { daemonSettings, proxySettings } from '../../../src/settings/settings.js';

const loopback: HostPolicy = { listenHost: '127.0.0.1', allowedHosts: [] };
const listed: HostPolicy = { listenHost: '127.0.0.1', allowedHosts: ['tunnels.example.com', '192.168.1.5'] };
const lan: HostPolicy = { listenHost: '192.168.1.5', allowedHosts: [] };
const wildcard: HostPolicy = { listenHost: '0.0.0.0', allowedHosts: [] };

describe('the Host rule', () => {
  it('takes loopback names in every form, with or without a port', () => {
    for (const h of ['127.0.0.1', '127.0.0.1:8080', '127.9.8.7:1', 'localhost', 'LocalHost:8080', 'localhost.:8080', 'api.localhost:8080', '[::1]', '[::1]:8080', '[0:0:0:0:0:0:0:1]:8080', '[::ffff:127.0.0.1]:8080', '2130706433:8080']) {
      expect(hostAllowed(h, loopback), h).toBe(true);
    }
  });

  it('refuses every other name, and what is not host[:port]', () => {
    for (const h of ['evil.example', 'evil.example:8080', '127.0.0.1.evil.example', 'localhost.evil.example:8080', '127.0.0.1.nip.io', '10.0.0.2:8080', '[::2]:8080', '0.0.0.0:8080', '', 'a b', 'localhost:8080@evil.example', 'localhost/x', 'evil.example\\@localhost', 'localhost:99999']) {
      expect(hostAllowed(h, loopback), h).toBe(false);
    }
  });

  it('takes the listen address and the listed names (case and a final dot aside), and no request without Host is refused', () => {
    expect(hostAllowed('192.168.1.5:8080', lan)).toBe(true);
    expect(hostAllowed('192.168.1.6:8080', lan)).toBe(false);
    expect(hostAllowed('Tunnels.Example.COM.', listed)).toBe(true);
    expect(hostAllowed('tunnels.example.com:443', listed)).toBe(true);
    expect(hostAllowed('other.example.com', listed)).toBe(false);
    expect(hostAllowed(undefined, loopback)).toBe(true);
  });

  it('on a wildcard listen address takes any IP address, never a name', () => {
    for (const h of ['192.168.1.5:8080', '10.0.0.2', '[fe80::1]:8080']) expect(hostAllowed(h, wildcard), h).toBe(true);
    for (const h of ['evil.example:8080', 'host.lan']) expect(hostAllowed(h, wildcard), h).toBe(false);
  });
});

describe('the Origin rule', () => {
  it('takes no Origin, and origins whose host is ours', () => {
    expect(originAllowed(undefined, loopback)).toBe(true);
    for (const o of ['http://127.0.0.1:8080', 'http://localhost:5001', 'https://[::1]', 'http://127.0.0.1']) expect(originAllowed(o, loopback), o).toBe(true);
    expect(originAllowed('https://tunnels.example.com', listed)).toBe(true);
  });

  it('refuses null, other hosts, other schemes and what does not parse', () => {
    for (const o of ['null', '', 'http://evil.example', 'http://127.0.0.1.evil.example', 'file://', 'chrome-extension://abcdef', 'ftp://localhost', 'not an origin', 'http://localhost@evil.example']) {
      expect(originAllowed(o, loopback), o).toBe(false);
    }
  });

  it('adds the listed cors_origins (for /v1), "*" meaning any but null', () => {
    expect(originAllowed('https://app.example.com', loopback, ['https://app.example.com'])).toBe(true);
    expect(originAllowed('https://app.example.com:8443', loopback, ['https://app.example.com'])).toBe(false);
    expect(originAllowed('https://anything.example', loopback, ['*'])).toBe(true);
    expect(originAllowed('null', loopback, ['*'])).toBe(false);
  });

  it('same origin is host and port exactly', () => {
    expect(sameOrigin('http://localhost:5000', 'localhost:5000')).toBe(true);
    expect(sameOrigin('http://localhost:5001', 'localhost:5000')).toBe(false);
    expect(sameOrigin('http://localhost:5000', undefined)).toBe(false);
  });
});

describe('TUNNEL_API_ALLOWED_HOSTS', () => {
  const account = { home: '/home/u', cwd: '/work', uid: 1000, hasUserSshConfig: false, defaultSocketPath: '/run/u/api.sock', defaultStateDir: '/home/u/.state' };

  it('is read as comma-separated names by the daemon and the proxy (a port, if written, dropped)', () => {
    const env = { TUNNEL_API_ALLOWED_HOSTS: ' tunnels.example.com , nas.lan:8080,192.168.1.5,[fd00::1] ,' };
    const d = daemonSettings({}, env, account);
    expect(d.ok && d.value.allowedHosts).toEqual(['tunnels.example.com', 'nas.lan', '192.168.1.5', '[fd00::1]']);
    const p = proxySettings({}, env, account);
    expect(p.ok && p.value.allowedHosts).toEqual(['tunnels.example.com', 'nas.lan', '192.168.1.5', '[fd00::1]']);
    const none = daemonSettings({}, {}, account);
    expect(none.ok && none.value.allowedHosts).toEqual([]);
  });

  it('refuses a wildcard, which would turn the check off', () => {
    for (const bad of ['*', '*.example.com']) {
      const r = daemonSettings({}, { TUNNEL_API_ALLOWED_HOSTS: bad }, account);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.join("\n")).toContain(`TUNNEL_API_ALLOWED_HOSTS: expected host names, found the wildcard ${JSON.stringify(bad)}`);
    }
  });

  it('refuses what is not a host name, saying what it found', () => {
    for (const bad of ['http://tunnels.example.com', 'a b', 'host/path', 'user@host']) {
      const r = daemonSettings({}, { TUNNEL_API_ALLOWED_HOSTS: `ok.example,${bad}` }, account);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toContain(`TUNNEL_API_ALLOWED_HOSTS: expected host names separated by commas, such as tunnels.example.com,192.168.1.5, found ${JSON.stringify(bad)}`);
    }
  });
});

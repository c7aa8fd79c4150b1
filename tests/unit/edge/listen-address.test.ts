import { describe, expect, it } from 'vitest';
import { isOpenPath } from '../../../src/api/auth.js';
import { checkListenSecurity, isLoopback, parseListen } from '../../../src/edge/listen-address.js';
import { defaultSocketPath, defaultStateDir } from '../../../src/settings/default-paths.js';

describe('parseListen', () => {
  it('accepts host:port, [v6]:port and names', () => {
    expect(parseListen('127.0.0.1:8080')).toEqual({ ok: true, value: { host: '127.0.0.1', port: 8080 } });
    expect(parseListen('[::1]:8080')).toEqual({ ok: true, value: { host: '::1', port: 8080 } });
    expect(parseListen('localhost:0')).toEqual({ ok: true, value: { host: 'localhost', port: 0 } });
    expect(parseListen('0.0.0.0:65535')).toEqual({ ok: true, value: { host: '0.0.0.0', port: 65535 } });
  });

  it('refuses a missing host, a bare port, an unbracketed v6 address and a bad port, saying what it found', () => {
    for (const bad of [':8080', '8080', '::1:8080', '127.0.0.1', '127.0.0.1:65536', '127.0.0.1:http', '', 'a b:80']) {
      const r = parseListen(bad);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.error).toContain(JSON.stringify(bad));
    }
  });
});

describe('isLoopback', () => {
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'localhost.']) {
      expect(isLoopback(h), h).toBe(true);
    }
  });
  it('and everything else is not', () => {
    for (const h of ['0.0.0.0', '::', '192.168.1.2', '10.0.0.1', '128.0.0.1', '127.0.0.256', '::2', 'example.com', 'localhost.example.com', '1::1', '::ffff:10.0.0.1']) {
      expect(isLoopback(h), h).toBe(false);
    }
  });
});

describe('checkListenSecurity', () => {
  it('refuses a non-loopback address without a token with the exact message', () => {
    expect(checkListenSecurity({ host: '0.0.0.0', port: 8080 }, null)).toEqual({
      ok: false,
      error: 'refusing to listen on 0.0.0.0:8080 without TUNNEL_API_TOKEN: set a token or listen on 127.0.0.1',
    });
    expect(checkListenSecurity({ host: '::', port: 1 }, [])).toMatchObject({ ok: false, error: expect.stringContaining('[::]:1') });
  });
  it('allows loopback without a token and anything with one', () => {
    expect(checkListenSecurity({ host: '127.0.0.1', port: 8080 }, null).ok).toBe(true);
    expect(checkListenSecurity({ host: '0.0.0.0', port: 8080 }, ['t']).ok).toBe(true);
  });
});

describe('open paths', () => {
  it('leaves only /health and the /v1 group open', () => {
    expect(['/health', '/v1', '/v1/chat/completions'].every(isOpenPath)).toBe(true);
    expect(['/healthz', '/v1x', '/status', '/', '/health/x'].some(isOpenPath)).toBe(false);
  });
});

describe('default paths', () => {
  it('socket under XDG_RUNTIME_DIR, else a per-uid folder in /tmp', () => {
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toBe('/run/user/1000/tunnel-manager/api.sock');
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000/' }, 1000)).toBe('/run/user/1000/tunnel-manager/api.sock');
    expect(defaultSocketPath({}, 1000)).toBe('/tmp/tunnel-manager-1000/api.sock');
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: '' }, 0)).toBe('/tmp/tunnel-manager-0/api.sock');
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: 'relative/dir' }, 7)).toBe('/tmp/tunnel-manager-7/api.sock');
  });
  it('state under XDG_STATE_HOME, else ~/.local/state', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '/var/lib/me' }, '/home/u')).toBe('/var/lib/me/tunnel-manager');
    expect(defaultStateDir({}, '/home/u')).toBe('/home/u/.local/state/tunnel-manager');
    expect(defaultStateDir({ XDG_STATE_HOME: 'rel' }, '/root')).toBe('/root/.local/state/tunnel-manager');
  });
});

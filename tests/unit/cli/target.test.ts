// Which daemon tunnel-cli talks to: --socket, --url, their variables and the default socket.
import { describe, expect, it } from 'vitest';
import { resolveTarget } from '../../../src/cli/target.js';

describe('resolveTarget', () => {
  const def = '/run/default.sock';
  it('flags over environment; the socket variable over the URL one; the default socket last', () => {
    expect(resolveTarget({}, {}, def)).toEqual({ ok: true, value: { kind: 'socket', path: def } });
    expect(resolveTarget({ socket: '/a.sock' }, { TUNNEL_API_URL: 'http://h:1' }, def)).toEqual({ ok: true, value: { kind: 'socket', path: '/a.sock', named: true } });
    expect(resolveTarget({}, { TUNNEL_SOCKET: '/e.sock', TUNNEL_API_URL: 'http://h:1' }, def)).toEqual({ ok: true, value: { kind: 'socket', path: '/e.sock', named: true } });
    const u = resolveTarget({ url: 'http://127.0.0.1:8080' }, { TUNNEL_SOCKET: '/e.sock', TUNNEL_API_TOKEN: 'a,b' }, def);
    expect(u.ok && u.value.kind === 'url' && u.value.url.href === 'http://127.0.0.1:8080/' && u.value.token === 'a').toBe(true);
    const t = resolveTarget({ url: 'http://h:1', token: 'flag' }, { TUNNEL_API_TOKEN: 'env' }, def);
    expect(t.ok && t.value.kind === 'url' && t.value.token).toBe('flag');
  });
  it('refuses both flags and bad URLs', () => {
    expect(resolveTarget({ socket: '/a', url: 'http://h:1' }, {}, def).ok).toBe(false);
    expect(resolveTarget({ url: 'ftp://h' }, {}, def).ok).toBe(false);
    expect(resolveTarget({ url: 'not a url' }, {}, def).ok).toBe(false);
  });
});

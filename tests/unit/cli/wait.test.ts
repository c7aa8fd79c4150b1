import { describe, expect, it } from 'vitest';
import { parseTimeout, rawOption, validateHashArg } from '../../../src/cli/args.js';
import { resolveTarget } from '../../../src/cli/target.js';
import { WaitTracker } from '../../../src/cli/wait.js';
import type { StatusRecord, TunnelState } from '../../../src/tunnel/status.js';

describe('arguments', () => {
  it('hashes: hex, 4 to 32 characters, lower-cased', () => {
    expect(validateHashArg('1A2B')).toEqual({ ok: true, value: '1a2b' });
    for (const bad of ['abc', 'xyz1', '', '1a2b/../x', 'a'.repeat(33)]) expect(validateHashArg(bad).ok, bad).toBe(false);
  });
  it('timeouts: positive seconds', () => {
    expect(parseTimeout('2.5')).toEqual({ ok: true, value: 2.5 });
    expect(parseTimeout(30)).toEqual({ ok: true, value: 30 });
    for (const bad of ['0', '-1', 'soon', '']) expect(parseTimeout(bad).ok, bad).toBe(false);
  });
  it('raw option values keep their text', () => {
    expect(rawOption(['status', '--token', '0099'], 'token')).toBe('0099');
    expect(rawOption(['--token=00a', 'status', '--token', '007'], 'token')).toBe('007');
    expect(rawOption(['status', '--', '--token', 'x'], 'token')).toBeUndefined();
  });
});

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

describe('WaitTracker', () => {
  it('an interactive tunnel waiting for a login ends the wait with the login outcome, not a time-out', () => {
    const rec = (hash: string, status: StatusRecord['status']) => ({ hash, name: hash, status }) as StatusRecord;
    const t = new WaitTracker();
    t.answer([rec('a', 'STARTING'), rec('b', 'AUTH_REQUIRED')]);
    expect(t.outcome()).toBeNull();
    t.event(rec('a', 'RUNNING'));
    expect(t.outcome()).toMatchObject({ kind: 'login', waiting: [{ hash: 'b' }] });
    t.event(rec('a', 'FAILED'));
    expect(t.outcome()?.kind).toBe('failed');
  });

  const r = (hash: string, status: TunnelState, last_error: string | null = null) => ({ hash, status, last_error, name: hash }) as StatusRecord;

  it('waits until every tunnel is RUNNING', () => {
    const t = new WaitTracker();
    t.answer([r('a', 'STARTING'), r('b', 'STARTING')]);
    expect(t.outcome()).toBeNull();
    expect(t.event(r('a', 'RUNNING'))?.status).toBe('RUNNING');
    expect(t.event(r('a', 'RUNNING'))).toBeNull();
    expect(t.event(r('zzz', 'RUNNING'))).toBeNull();
    expect(t.outcome()).toBeNull();
    t.event(r('b', 'RETRYING', 'refused'));
    expect(t.outcome()).toBeNull();
    t.event(r('b', 'RUNNING'));
    expect(t.outcome()?.kind).toBe('running');
  });

  it('ends on FAILED or STOPPED once every other tunnel settled', () => {
    const t = new WaitTracker();
    t.answer([r('a', 'STARTING'), r('b', 'STARTING')]);
    t.event(r('a', 'FAILED', 'auth'));
    expect(t.outcome()).toBeNull();
    t.event(r('b', 'STOPPED'));
    const o = t.outcome();
    expect(o?.kind).toBe('failed');
    expect(o?.kind === 'failed' && o.failed.map((x) => x.hash)).toEqual(['a', 'b']);
  });

  it('events seen before the answer win over it', () => {
    const t = new WaitTracker();
    t.event(r('a', 'STARTING'));
    t.event(r('a', 'RUNNING'));
    t.answer([r('a', 'STARTING')]);
    expect(t.outcome()?.kind).toBe('running');
  });

  it('a login that shows no prompt is waited for like any start: AUTH_REQUIRED is then not the end', () => {
    const t = new WaitTracker();
    t.answer([r('a', 'AUTH_REQUIRED')]);
    expect(t.outcome()?.kind).toBe('login');
    t.loginWithoutPrompt('a');
    expect(t.outcome()).toBeNull();
    expect(t.timedOut()).toMatchObject({ kind: 'pending', pending: [{ hash: 'a' }] });
    t.event(r('a', 'RUNNING'));
    expect(t.outcome()?.kind).toBe('running');
  });

  it('nothing to wait for is done; time up lists what is pending', () => {
    const none = new WaitTracker();
    none.answer([]);
    expect(none.outcome()).toEqual({ kind: 'running', records: [] });
    const t = new WaitTracker();
    t.answer([r('a', 'RETRYING', 'refused'), r('b', 'RUNNING')]);
    const o = t.timedOut();
    expect(o.kind === 'pending' && o.pending.map((x) => x.hash)).toEqual(['a']);
  });
});

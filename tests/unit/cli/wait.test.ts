// The wait after `tunnel-cli start`: over when every tunnel is RUNNING, one is FAILED or
// STOPPED, or a login is needed; read from the POST's answer and the events.
import { describe, expect, it } from 'vitest';
import { WaitTracker } from '../../../src/cli/wait.js';
import type { StatusRecord, TunnelState } from '../../../src/tunnel/status.js';

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

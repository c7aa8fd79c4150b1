// Spawn spacing: spawns to one host kept apart, and a cap on logins waiting per host and machine-wide.
import { describe, expect, it } from 'vitest';
import { SpawnSpacer, spacingKey } from '../../../src/supervisor/spacing.js';
import { ManualClock } from './fakes.js';

describe('spacing', () => {
  it('keys by host, whoever logs in', () => {
    expect(spacingKey('alice@Bastion')).toBe('bastion');
    expect(spacingKey('bastion')).toBe('bastion');
  });

  it('books spawns 100 ms apart per host', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 100, 10);
    const never = new AbortController().signal;
    const t0 = clock.t;
    const times: Record<string, number[]> = { a: [], b: [] };
    for (const host of ['a', 'a', 'b', 'a']) void s.acquire(host, never).then(() => times[host]?.push(clock.t - t0));
    await clock.advance(1_000);
    expect(times).toEqual({ a: [0, 100, 200], b: [0] });
  });

  it('lets at most maxInFlight attempts per host wait for their login; a release hands the slot on', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 2);
    const never = new AbortController().signal;
    const got: Array<() => void> = [];
    for (let i = 0; i < 4; i++) void s.acquire('h', never).then((r) => r && got.push(r));
    await clock.advance(0);
    expect(got).toHaveLength(2);
    got[0]?.();
    got[0]?.();
    await clock.advance(0);
    expect(got).toHaveLength(3);
    got[1]?.();
    await clock.advance(0);
    expect(got).toHaveLength(4);
  });

  it('lets at most maxInFlightTotal logins wait on the whole machine, whatever the host; a release hands the place on', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 2, 3);
    const never = new AbortController().signal;
    const got: Array<[string, () => void]> = [];
    for (const host of ['a', 'b', 'c', 'd', 'a', 'e']) void s.acquire(host, never).then((r) => r && got.push([host, r]));
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c']);
    got[1]?.[1]();
    got[1]?.[1]();
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c', 'd']);
    got[0]?.[1]();
    got[2]?.[1]();
    await clock.advance(0);
    expect(got.map(([h]) => h)).toEqual(['a', 'b', 'c', 'd', 'a', 'e']);
  });

  it('a login waiting for its host holds no machine-wide place', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1, 2);
    const never = new AbortController().signal;
    const got: string[] = [];
    for (const host of ['a', 'a', 'a', 'b']) void s.acquire(host, never).then((r) => r && got.push(host));
    await clock.advance(0);
    expect(got).toEqual(['a', 'b']);
  });

  it('an aborted wait for a machine-wide place gives up both places', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1, 1);
    const first = await s.acquire('a', new AbortController().signal);
    const ctrl = new AbortController();
    const waiting = s.acquire('b', ctrl.signal);
    ctrl.abort();
    expect(await waiting).toBeNull();
    first?.();
    // b's host place was given back: b can log in again.
    expect(await s.acquire('b', new AbortController().signal)).not.toBeNull();
  });

  it('an aborted wait gives up its place', async () => {
    const clock = new ManualClock();
    const s = new SpawnSpacer(clock, 0, 1);
    const first = await s.acquire('h', new AbortController().signal);
    const ctrl = new AbortController();
    const waiting = s.acquire('h', ctrl.signal);
    ctrl.abort();
    expect(await waiting).toBeNull();
    first?.();
    expect(await s.acquire('h', new AbortController().signal)).not.toBeNull();
  });
});

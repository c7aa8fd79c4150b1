// The one shell mechanism of both lifecycles (effects/effect-runner.ts) and their shared
// retry transitions (effects/retry-wait.ts), on their own: a toy machine, virtual time.
import { describe, expect, it } from 'vitest';
import { EffectRunner, type Machine } from '../../../src/supervisor/effects/effect-runner.js';
import { afterProbe, enterBackoff, type RetryRules } from '../../../src/supervisor/effects/retry-wait.js';
import type { TokenEffect } from '../../../src/supervisor/effects/effects.js';
import { DEFAULT_BACKOFF, FRESH_COUNTERS } from '../../../src/supervisor/backoff.js';
import type { Failure } from '../../../src/supervisor/process/ssh-exit-classify.js';
import { ManualClock } from './fakes.js';

type Ev = { type: 'go'; n: number } | { type: 'tick'; token: number } | { type: 'probe-result'; wait: number; ok: boolean };
type Own = { type: 'say'; text: string };
type Tick = Extract<Ev, { type: 'tick' }>;

/** A machine that logs each event it sees and turns `go` into the effects its test asks for. */
function toy(effectsFor: (ev: Ev) => (TokenEffect<Tick> | Own)[]) {
  const seen: string[] = [];
  const said: string[] = [];
  const machine: Machine<number, Ev, Tick, Own> = {
    step: (s, ev) => {
      seen.push(ev.type === 'go' ? `go${ev.n}` : ev.type === 'tick' ? `tick${ev.token}` : `probe${ev.wait}:${ev.ok}`);
      return { state: s + 1, effects: effectsFor(ev) };
    },
    perform: (e) => {
      said.push(e.text);
      if (e.text === 'again') runner.dispatch({ type: 'go', n: 99 });
    },
  };
  const clock = new ManualClock();
  const probes: string[] = [];
  const runner = new EffectRunner<number, Ev, Tick, Own>(0, machine, {
    clock,
    probe: async (t) => {
      probes.push(`${t.host}:${t.port}`);
      return true;
    },
    graceMs: 1000,
    child: () => undefined,
  }, (r) => r);
  return { runner, seen, said, clock, probes };
}

describe('EffectRunner', () => {
  it('runs an event raised by an effect after the one being handled, never inside it', () => {
    const { runner, seen, said } = toy((ev) => (ev.type === 'go' && ev.n === 1 ? [{ type: 'say', text: 'again' }, { type: 'say', text: 'after' }] : []));
    runner.dispatch({ type: 'go', n: 1 });
    expect(said).toEqual(['again', 'after']);
    expect(seen).toEqual(['go1', 'go99']);
    expect(runner.state).toBe(2);
  });

  it('delivers a timer at its time, and not at all once its token is cancelled', async () => {
    const { runner, seen, clock } = toy((ev) => {
      if (ev.type !== 'go') return [];
      const at = clock.now() + 1000;
      return ev.n === 1 ? [{ type: 'timer', token: 7, at, event: { type: 'tick', token: 7 } }] : [{ type: 'timer', token: 8, at, event: { type: 'tick', token: 8 } }, { type: 'cancel', token: 8 }];
    });
    runner.dispatch({ type: 'go', n: 1 });
    runner.dispatch({ type: 'go', n: 2 });
    await clock.advance(999);
    expect(seen).toEqual(['go1', 'go2']);
    await clock.advance(10);
    expect(seen).toEqual(['go1', 'go2', 'tick7']);
  });

  it("reports a probe's answer as the lifecycle's own event, with the wait it belongs to", async () => {
    const { runner, seen, clock, probes } = toy((ev) => (ev.type === 'go' ? [{ type: 'probe', token: 3, at: clock.now() + 500, target: { kind: 'ssh-port', host: 'h', port: 22 } }] : []));
    runner.dispatch({ type: 'go', n: 1 });
    await clock.advance(600);
    expect(probes).toEqual(['h:22']);
    expect(seen).toEqual(['go1', 'probe3:true']);
  });
});

describe('retry-wait: the backoff both lifecycles enter, and what a probe does to it', () => {
  const failure: Failure = { reason: 'refused', retry: true, probe: 'ssh-port', message: 'refused' };
  const rules: RetryRules = { policy: DEFAULT_BACKOFF, unprobedCapMs: 2000, probeIntervalMs: 1000 };
  const world = (now: number) => ({ now, random: () => 0.5 });
  const target = { kind: 'ssh-port' as const, host: 'h', port: 22 };

  it('a retryable failure gives a new wait token, a timer for its end and a probe while it lasts', () => {
    const r = enterBackoff({ seq: 4, counters: FRESH_COUNTERS, lastSpawnAt: 0 }, null, failure, target, rules, world(10_000));
    expect(r.seq).toBe(5);
    expect(r.phase).toMatchObject({ id: 'backoff', wait: 5, failure });
    expect(r.phase.until).toBeGreaterThan(10_000);
    expect(r.effects.map((e) => e.type).sort()).toEqual(['probe', 'timer']);
    expect(r.effects.every((e) => !('token' in e) || e.token === 5)).toBe(true);
  });

  it('a fault without a probe waits at most the unprobed cap', () => {
    let s = { seq: 0, counters: FRESH_COUNTERS, lastSpawnAt: 0 as number | null };
    let until = 0;
    for (let i = 0; i < 10; i++) {
      const r = enterBackoff(s, null, failure, null, rules, world(100_000 * (i + 1)));
      s = { seq: r.seq, counters: r.counters, lastSpawnAt: 100_000 * (i + 1) };
      until = r.phase.until - 100_000 * (i + 1);
      expect(r.effects.map((e) => e.type)).toEqual(['timer']);
    }
    expect(until).toBeLessThanOrEqual(2000);
  });

  it('a probe that finds the fault over retries at once, or as soon as a login is allowed; one that does not probes again', () => {
    const wait = { wait: 5, until: 60_000 };
    expect(afterProbe(wait, target, true, 0, rules, world(30_000))).toEqual({ kind: 'retry' });
    const soon = afterProbe(wait, target, true, 29_500, rules, world(30_000));
    expect(soon).toMatchObject({ kind: 'wait', until: 30_500 });
    const again = afterProbe(wait, target, false, 0, rules, world(30_000));
    expect(again).toMatchObject({ kind: 'wait', until: 60_000, effects: [{ type: 'probe', token: 5, at: 31_000 }] });
    expect(afterProbe({ wait: 5, until: 30_500 }, target, false, 0, rules, world(30_000))).toEqual({ kind: 'same' });
  });
});

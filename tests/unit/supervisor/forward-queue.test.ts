// The -O queue of a shared connection: forwards added in few runs (a failed batch is retried
// one by one, so a failure is one tunnel's), cancels, the end of every forward when the
// master goes, and two forwards of one spec.
import { describe, expect, it } from 'vitest';
import type { ControlForward, ControlOutcome } from '../../../src/supervisor/connection/control-command.js';
import { ForwardQueue } from '../../../src/supervisor/connection/forward-queue.js';

/** A forward's end as the queue reports it to the forward's events. */
type ForwardEnd = Parameters<Parameters<ForwardQueue['create']>[2]['ended']>[0];

/** A queue over a fake master: `fail` lists forward values the master refuses. */
function fakeQueue(fail: Set<string>) {
  const runs: { op: string; values: string[] }[] = [];
  const control = async (op: 'forward' | 'cancel', forwards: readonly ControlForward[]): Promise<ControlOutcome> => {
    runs.push({ op, values: forwards.map((f) => f.value) });
    await Promise.resolve();
    const bad = op === 'forward' && forwards.some((f) => fail.has(f.value));
    return { code: bad ? 255 : 0, lines: bad ? ['mux_client_forward: forwarding request failed: Port forwarding failed'] : [], timedOut: false };
  };
  const queue = new ForwardQueue({
    master: () => ({ up: true, pid: 42, attempt: 1 }),
    lastFailure: () => null,
    masterLines: () => [...fail].map((v) => `bind [127.0.0.1]:${v.split(':')[1]}: Address already in use`),
    unresponsive: () => {},
    processState: () => 'S',
    control,
  });
  return { queue, runs };
}

describe('ForwardQueue', () => {
  it('adds many forwards in few -O runs; a failed run is retried one by one, and only the refused forward fails, with its cause', async () => {
    const values = Array.from({ length: 100 }, (_, i) => `127.0.0.1:${20000 + i}:localhost:22`);
    const { queue, runs } = fakeQueue(new Set([values[70]!]));
    const added = new Map<string, number>();
    const ended = new Map<string, ForwardEnd>();
    const all = values.map((value, i) => {
      const { forward, handle } = queue.create({ flag: '-L', value }, 20000 + i, {
        line: () => {},
        added: (pid) => added.set(value, pid),
        ended: (end) => ended.set(value, end),
      });
      queue.queueAdd(forward);
      return handle;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(added.size).toBe(99);
    expect([...added.values()].every((pid) => pid === 42)).toBe(true);
    expect([...ended.keys()]).toEqual([values[70]]);
    const end = ended.get(values[70]!)!;
    expect(end.kind === 'failed' && end.failure).toMatchObject({ reason: 'local_port_busy', retry: true, message: 'local port is busy: bind [127.0.0.1]:20070: Address already in use' });
    // Far fewer runs than forwards; the forwards of the failed run were each tried alone.
    expect(runs.length).toBeLessThan(100);
    expect(runs.some((r) => r.values.length > 1)).toBe(true);
    expect(runs.filter((r) => r.values.length === 1 && r.values[0] === values[70]).length).toBe(1);
    // A cancel is one -O cancel of the exact spec, and ends the forward as cancelled.
    all[0]!.cancel();
    await new Promise((r) => setTimeout(r, 5));
    expect(runs[runs.length - 1]).toEqual({ op: 'cancel', values: [values[0]] });
    expect(ended.get(values[0]!)).toEqual({ kind: 'cancelled' });
  });

  it('endAll ends every forward with the connection\'s cause, and a cancelled one as cancelled', () => {
    const { queue } = fakeQueue(new Set());
    const ended: ForwardEnd[] = [];
    const a = queue.create({ flag: '-L', value: '127.0.0.1:1:h:2' }, 1, { line: () => {}, added: () => {}, ended: (e) => ended.push(e) });
    queue.create({ flag: '-R', value: '127.0.0.1:3:h:4' }, 3, { line: () => {}, added: () => {}, ended: (e) => ended.push(e) });
    a.handle.cancel();
    const failure = { reason: 'connection_lost' as const, retry: true, probe: 'ssh-port' as const, message: 'connection lost: Connection closed by 10.0.0.1 port 22' };
    queue.endAll(failure, { code: 255, signal: null });
    expect(ended).toEqual([{ kind: 'cancelled' }, { kind: 'failed', failure: { ...failure, probe: null }, code: 255, signal: null, byConnection: true }]);
    expect(queue.forwards.size).toBe(0);
  });
});

describe('ForwardQueue: two forwards of the same spec (a renamed tunnel taking over its predecessor\'s)', () => {
  const spec = { flag: '-L', value: '127.0.0.1:21000:localhost:22' };
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const watch = (queue: ForwardQueue, fwd: { flag: string; value: string }, log: string[], name: string) =>
    queue.create(fwd, 21000, { line: () => {}, added: () => log.push(`${name} added`), ended: (e) => log.push(`${name} ${e.kind}`) });

  it('the newcomer takes over the forward the master holds with no -O run; only the last one to go runs -O cancel', async () => {
    const { queue, runs } = fakeQueue(new Set());
    const log: string[] = [];
    const old = watch(queue, spec, log, 'old');
    queue.queueAdd(old.forward);
    await tick();
    expect(runs).toEqual([{ op: 'forward', values: [spec.value] }]);
    const renamed = watch(queue, spec, log, 'new');
    queue.queueAdd(renamed.forward);
    old.handle.cancel();
    await tick();
    // The master keeps its listener throughout: no cancel, no second add.
    expect(runs).toEqual([{ op: 'forward', values: [spec.value] }]);
    expect(log).toEqual(['old added', 'old cancelled', 'new added']);
    renamed.handle.cancel();
    await tick();
    expect(runs).toEqual([{ op: 'forward', values: [spec.value] }, { op: 'cancel', values: [spec.value] }]);
    expect(log).toEqual(['old added', 'old cancelled', 'new added', 'new cancelled']);
    expect(queue.forwards.size).toBe(0);
  });

  it('a forward of the same port with another target is no twin: the old one is cancelled, the new one added', async () => {
    const { queue, runs } = fakeQueue(new Set());
    const log: string[] = [];
    const old = watch(queue, spec, log, 'old');
    queue.queueAdd(old.forward);
    await tick();
    old.handle.cancel();
    const other = watch(queue, { flag: '-L', value: '127.0.0.1:21000:localhost:23' }, log, 'new');
    queue.queueAdd(other.forward);
    await tick();
    expect(runs.map((r) => r.op)).toEqual(['forward', 'cancel', 'forward']);
    expect(log).toEqual(['old added', 'old cancelled', 'new added']);
  });

  it('an add of a spec whose cancel is under way waits for the cancel, then runs: it never rides on a forward about to go', async () => {
    const { queue, runs } = fakeQueue(new Set());
    const log: string[] = [];
    const old = watch(queue, spec, log, 'old');
    queue.queueAdd(old.forward);
    await tick();
    old.handle.cancel();
    const again = watch(queue, spec, log, 'again');
    queue.queueAdd(again.forward);
    await tick();
    expect(runs.map((r) => r.op)).toEqual(['forward', 'cancel', 'forward']);
    expect(log).toEqual(['old added', 'old cancelled', 'again added']);
  });

  it('a twin cancelled before it was added leaves the master\'s forward to be cancelled when it is the last', async () => {
    const { queue, runs } = fakeQueue(new Set());
    const log: string[] = [];
    const old = watch(queue, spec, log, 'old');
    queue.queueAdd(old.forward);
    await tick();
    const renamed = watch(queue, spec, log, 'new');
    queue.queueAdd(renamed.forward);
    old.handle.cancel();
    renamed.handle.cancel();
    await tick();
    expect(runs.map((r) => r.op)).toEqual(['forward', 'cancel']);
    // The newcomer, asked to go while its take-over was under way, goes as the last holder: with a cancel run.
    expect(log).toEqual(['old added', 'old cancelled', 'new added', 'new cancelled']);
    expect(queue.forwards.size).toBe(0);
  });

  it('after the master is gone, nothing is held: the next forward of that spec is added by a run', async () => {
    const { queue, runs } = fakeQueue(new Set());
    const log: string[] = [];
    const old = watch(queue, spec, log, 'old');
    queue.queueAdd(old.forward);
    await tick();
    queue.endAll({ reason: 'connection_lost', retry: true, probe: null, message: 'connection lost' }, null);
    const next = watch(queue, spec, log, 'next');
    queue.queueAdd(next.forward);
    await tick();
    expect(runs.map((r) => r.op)).toEqual(['forward', 'forward']);
    expect(log).toEqual(['old added', 'old failed', 'next added']);
  });
});

it('ForwardQueue: a new master holds nothing of the old one\'s, even when no loss was reported in between (a reconnect after a stop)', async () => {
  const runs: string[] = [];
  let attempt = 1;
  const queue = new ForwardQueue({
    master: () => ({ up: true, pid: 40 + attempt, attempt }),
    lastFailure: () => null,
    masterLines: () => [],
    unresponsive: () => {},
    processState: () => 'S',
    control: async (op) => {
      runs.push(op);
      await Promise.resolve();
      return { code: 0, lines: [], timedOut: false };
    },
  });
  const fwd = { flag: '-L', value: '127.0.0.1:21001:localhost:22' };
  const events = (log: string[]) => ({ line: () => {}, added: (pid: number) => log.push(`added ${pid}`), ended: (e: ForwardEnd) => log.push(e.kind) });
  const log: string[] = [];
  const first = queue.create(fwd, 21001, events(log));
  queue.queueAdd(first.forward);
  await new Promise((r) => setTimeout(r, 5));
  attempt = 2;
  const next = queue.create(fwd, 21001, events(log));
  queue.queueAdd(next.forward);
  await new Promise((r) => setTimeout(r, 5));
  // The second forward is added to the new master by a run of its own.
  expect(runs).toEqual(['forward', 'forward']);
  expect(log).toEqual(['added 41', 'added 42']);
});

// The forwards of one shared connection and the `ssh -O` work that adds and cancels
// them (control-command.ts). Forwards asked for together go in one `-O` run; when such
// a run fails, each of its forwards is tried alone, so that a failure is always that one
// tunnel's (adding a forward that is already there is a no-op). Cancels go first.
// Two forwards with the same spec (a tunnel renamed: the old one stops, the new one
// starts with the same ports and target) are one forward to the master: the newcomer
// takes over the one the master holds, with no `-O` run and no moment without a
// listener, and only the last of them to go runs `-O cancel`.
import { unreachable } from '../../kernel/unreachable.js';
import type { Failure } from '../process/ssh-exit-classify.js';
import { forwardFailure } from './forward-failure.js';
import type { ControlForward, ControlOutcome } from './control-command.js';
import type { ForwardEnd, ForwardEvents, ForwardHandle } from './connection-types.js';
import { MasterHolds, specKey } from './master-holds.js';

export type ForwardPhase = 'waiting' | 'adding' | 'added' | 'cancelling' | 'ended';

export interface Forward {
  fwd: ControlForward;
  /** The listening port, to find the master's lines about it. */
  port: number;
  phase: ForwardPhase;
  /** Asked to cancel while its add was under way. */
  cancelAsked: boolean;
  /** Already failed once in a batch: the next try is alone. */
  alone: boolean;
  /** Set by fail(): how it ends once cancelled. */
  failWith: Failure | null;
  events: ForwardEvents;
}

/** What the queue needs of its connection. */
export interface QueueHost {
  /** The master now: `up` with its pid and attempt, or not up. */
  master(): { up: boolean; pid: number | null; attempt: number };
  lastFailure(): Failure | null;
  /** The current master's recent lines, to explain a forward's failure. */
  masterLines(): readonly string[];
  /** The master does not answer (stopped or hung): the connection ends it. */
  unresponsive(attempt: number): void;
  processState(pid: number): string | null;
  control(op: 'forward' | 'cancel', forwards: readonly ControlForward[]): Promise<ControlOutcome>;
}

// Forwards per `-O` run: one run of 1000 takes about 2 s; several smaller ones run side by side.
const BATCH = 64;
// `-O` runs of one connection under way at once.
const RUNS = 4;

const LOST: Failure = { reason: 'connection_lost', retry: true, probe: null, message: 'connection lost: the shared connection ended' };

const specOf = (f: Forward): string => specKey(f.fwd);

export class ForwardQueue {
  readonly forwards = new Set<Forward>();
  /** Forwards by listening port, where the master's lines about a channel go (channel-owners.ts). */
  readonly byPort = new Map<number, Set<Forward>>();
  private readonly adds: Forward[] = [];
  private readonly cancels: Forward[] = [];
  private inFlight = 0;
  private readonly holds: MasterHolds;

  constructor(private readonly host: QueueHost) {
    this.holds = new MasterHolds(() => {
      const m = host.master();
      return m.up ? m.attempt : null;
    });
  }

  /** A new forward, waiting until queueAdd (or ended at once by its caller). */
  create(fwd: ControlForward, port: number, events: ForwardEvents): { forward: Forward; handle: ForwardHandle } {
    const f: Forward = { fwd, port, phase: 'waiting', cancelAsked: false, alone: false, failWith: null, events };
    this.forwards.add(f);
    this.indexed(port).add(f);
    const handle: ForwardHandle = {
      cancel: () => this.cancel(f),
      fail: (failure) => {
        f.failWith ??= failure;
        this.cancel(f);
      },
    };
    return { forward: f, handle };
  }

  /** The master is up: every forward waiting for it is added. */
  addWaiting(): void {
    for (const f of [...this.forwards]) if (f.phase === 'waiting' && !this.adds.includes(f)) this.queueAdd(f);
  }

  /** The master is gone: every forward ends with the cause (a cancelled one as cancelled). */
  endAll(failure: Failure, exit: { code: number | null; signal: string | null } | null): void {
    this.adds.length = 0;
    this.cancels.length = 0;
    this.holds.clear();
    for (const f of [...this.forwards]) {
      if (f.phase === 'cancelling' || f.cancelAsked) this.end(f, { kind: 'cancelled' });
      // Waiting forwards of a connection being retried end too: their tunnels back off
      // with the cause and are called back once it is up again.
      else this.end(f, { kind: 'failed', failure: { ...failure, probe: null }, code: exit?.code ?? null, signal: exit?.signal ?? null, byConnection: true });
    }
  }

  cancel(f: Forward): void {
    switch (f.phase) {
      case 'waiting': {
        const i = this.adds.indexOf(f);
        if (i >= 0) this.adds.splice(i, 1);
        // It may have been left the master's forward by a twin that went before it.
        if (this.holds.has(specOf(f)) && !this.hasTwin(f)) this.queueCancel(f);
        else this.end(f, { kind: 'cancelled' });
        return;
      }
      case 'adding':
        f.cancelAsked = true;
        return;
      case 'added':
        // A twin still wants the listener: it stays, and this forward simply ends.
        if (!this.host.master().up || this.hasTwin(f)) {
          this.end(f, { kind: 'cancelled' });
          return;
        }
        this.queueCancel(f);
        return;
      case 'cancelling':
      case 'ended':
        return;
      default:
        unreachable(f.phase, 'forward phase');
    }
  }

  end(f: Forward, end: ForwardEnd): void {
    if (f.phase === 'ended') return;
    f.phase = 'ended';
    this.forwards.delete(f);
    const same = this.byPort.get(f.port);
    same?.delete(f);
    if (same?.size === 0) this.byPort.delete(f.port);
    f.events.ended(end.kind === 'cancelled' && f.failWith !== null ? { kind: 'failed', failure: f.failWith, code: null, signal: null, byConnection: false } : end);
  }

  private queueCancel(f: Forward): void {
    this.holds.cancelQueued(specOf(f));
    f.phase = 'cancelling';
    this.cancels.push(f);
    this.pump();
  }

  /** Another forward of the same spec that is, or is about to be, on the master. */
  private hasTwin(f: Forward): boolean {
    const key = specOf(f);
    for (const g of this.byPort.get(f.port) ?? []) {
      if (g !== f && !g.cancelAsked && (g.phase === 'waiting' || g.phase === 'adding' || g.phase === 'added') && specOf(g) === key) return true;
    }
    return false;
  }

  private indexed(port: number): Set<Forward> {
    let set = this.byPort.get(port);
    if (set === undefined) {
      set = new Set();
      this.byPort.set(port, set);
    }
    return set;
  }

  queueAdd(f: Forward): void {
    f.phase = 'waiting';
    this.adds.push(f);
    this.pump();
  }

  /** Runs queued `-O` work, cancels first, a few runs at a time (each run is limited machine-wide too). */
  private pump(): void {
    // A stopped master (SIGSTOP) would hold every -O until it times out: ended at once instead.
    const m = this.host.master();
    if (m.up && m.pid !== null && (this.cancels.length > 0 || this.adds.length > 0)) {
      const state = this.host.processState(m.pid);
      if (state === 'T' || state === 't') {
        this.host.unresponsive(m.attempt);
        return;
      }
    }
    if (m.up) this.adoptHeld();
    while (this.inFlight < RUNS && (this.cancels.length > 0 || this.adds.length > 0)) {
      if (this.cancels.length > 0) {
        const batch = this.cancels.splice(0, BATCH);
        this.inFlight++;
        void this.runCancels(batch).finally(() => this.done());
        continue;
      }
      const batch = this.takeAdds();
      if (batch.length === 0) return;
      for (const f of batch) f.phase = 'adding';
      this.inFlight++;
      void this.runAdds(batch).finally(() => this.done());
    }
  }

  /** Adds whose spec the master holds already (a twin's) are added without a run, on the next tick. */
  private adoptHeld(): void {
    const known = this.adds.filter((f) => this.holds.has(specOf(f)));
    if (known.length === 0) return;
    for (const f of known) {
      this.adds.splice(this.adds.indexOf(f), 1);
      f.phase = 'adding';
    }
    const { pid } = this.host.master();
    void Promise.resolve().then(() => {
      for (const f of known) {
        if (f.phase !== 'adding') continue;
        f.phase = 'added';
        if (pid !== null) f.events.added(pid);
        if (f.cancelAsked) this.cancel(f);
      }
    });
  }

  /** The next run's forwards: one that failed in a batch goes alone; a spec being cancelled waits for the cancel. */
  private takeAdds(): Forward[] {
    const batch: Forward[] = [];
    for (const f of this.adds) {
      if (batch.length >= BATCH) break;
      if (this.holds.cancelPending(specOf(f))) continue;
      if (f.alone) {
        if (batch.length === 0) batch.push(f);
        break;
      }
      batch.push(f);
    }
    for (const f of batch) this.adds.splice(this.adds.indexOf(f), 1);
    return batch;
  }

  private done(): void {
    this.inFlight--;
    this.pump();
  }

  private async runAdds(batch: Forward[]): Promise<void> {
    const { pid } = this.host.master();
    const out = await this.host.control('forward', batch.map((f) => f.fwd));
    this.noticeTimeout(out.timedOut, pid);
    // The master went away meanwhile: its end already ended these forwards.
    const now = this.host.master();
    if (!now.up || now.pid !== pid) {
      for (const f of batch) if (f.phase === 'adding') this.end(f, { kind: 'failed', failure: this.host.lastFailure() ?? LOST, code: null, signal: null, byConnection: !now.up });
      return;
    }
    if (out.code === 0) {
      for (const f of batch) {
        if (f.phase !== 'adding') continue;
        this.holds.add(specOf(f));
        f.phase = 'added';
        if (pid !== null) f.events.added(pid);
        if (f.cancelAsked) this.cancel(f);
      }
      return;
    }
    if (batch.length > 1) {
      // Which one failed is not said: each is tried alone (those added are a no-op).
      for (const f of batch) {
        if (f.phase !== 'adding') continue;
        if (f.cancelAsked) {
          f.phase = 'added';
          this.cancel(f);
          continue;
        }
        f.alone = true;
        f.phase = 'waiting';
        this.adds.unshift(f);
      }
      return;
    }
    const f = batch[0];
    if (f === undefined || f.phase !== 'adding') return;
    // The master writes why (the bind error) on its own stderr; let that line arrive.
    await new Promise((r) => setImmediate(r));
    this.end(f, { kind: 'failed', failure: forwardFailure(f.fwd, f.port, this.host.masterLines(), out.lines), code: out.code, signal: null, byConnection: false });
  }

  private async runCancels(batch: Forward[]): Promise<void> {
    const m = this.host.master();
    try {
      if (m.up) {
        const pid = m.pid;
        const out = await this.host.control('cancel', batch.map((f) => f.fwd));
        this.noticeTimeout(out.timedOut, pid);
      }
    } finally {
      for (const f of batch) this.holds.cancelEnded(specOf(f));
    }
    for (const f of batch) this.end(f, { kind: 'cancelled' });
  }

  private noticeTimeout(timedOut: boolean, pid: number | null): void {
    const m = this.host.master();
    if (timedOut && m.up && m.pid === pid) this.host.unresponsive(m.attempt);
  }
}

// One shared connection's runner (SPEC §14): the shell around its pure lifecycle
// (connection-lifecycle.ts). It starts and ends the ControlMaster, and adds and
// cancels each tunnel's forward on it with `ssh -O` (control-command.ts). Forwards
// asked for together go in one `-O` run; when such a run fails, each of its forwards
// is tried alone, so that a failure is always that one tunnel's (adding a forward that
// is already there is a no-op).
import { rmSync } from 'node:fs';
import { unreachable } from '../unreachable.js';
import { classifyExit, spawnFailure, type Failure } from './classify.js';
import type { Clock } from './clock.js';
import {
  connectionPid,
  connectionState,
  forwardVerdict,
  initialConnection,
  nextConnection,
  type Connection,
  type ConnectionEffect,
  type ConnectionEvent,
  type ConnectionRules,
  type ConnectionState,
  type MasterExit,
} from './connection-lifecycle.js';
import type { ControlForward, RunControl } from './control-command.js';
import type { Probe, ProbeTarget } from './probe.js';
import { LineRing } from './ring.js';
import { ChannelOwners } from './channel-owners.js';
import type { SpawnSpacer } from './spacing.js';
import { isLoggedInLine, keepInLog } from './ssh-output.js';
import { terminate, type SpawnSsh, type SshChild } from './ssh-process.js';

/** How a forward on a shared connection ended. */
export type ForwardEnd = { kind: 'cancelled' } | { kind: 'failed'; failure: Failure; code: number | null; signal: string | null };

/**
 * What a forward tells its tunnel, synchronously, so that a tunnel has left RUNNING
 * before its connection announces that it is down.
 */
export interface ForwardEvents {
  /** A line of the master's about this forward's channels, or about the connection. */
  line(line: string): void;
  /** The master accepted it; `pid` is the master's. */
  added(pid: number): void;
  /** Gone: cancelled, refused, or its connection ended. Nothing follows. */
  ended(end: ForwardEnd): void;
}

/** A tunnel's forward on a connection. */
export interface ForwardHandle {
  /** Cancels it (`-O cancel` if it was added); `ended` follows once it is gone. */
  cancel(): void;
  /** Cancels it and ends it with this failure (a cause seen on its connections, such as forwarding refused). */
  fail(failure: Failure): void;
}

export interface ConnectionDeps {
  clock: Clock;
  spawn: SpawnSsh;
  control: RunControl;
  probe: Probe;
  spacer: SpawnSpacer;
  registry: { add(pid: number, argv: string[]): void; remove(pid: number): void };
  rules: ConnectionRules;
  graceMs: number;
  /** The state letter of a process (`T`: stopped), null when unknown; read before each `-O` run. */
  processState(pid: number): string | null;
  log(entry: Record<string, unknown>): void;
}

/** What a connection runs: the master's argv, its socket, where to probe while its server is down. */
export interface ConnectionPlan {
  id: string;
  file: string;
  args: string[];
  controlPath: string;
  spacingKey: string;
  sshEndpoint: { host: string; port: number } | null;
}

type ForwardPhase = 'waiting' | 'adding' | 'added' | 'cancelling' | 'ended';

interface Forward {
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

// Forwards per `-O` run: one run of 1000 takes about 2 s; several smaller ones run side by side.
const BATCH = 64;
// Lines of the master kept to explain its end and a forward's failure.
const MASTER_LINES = 200;

export class ConnectionRunner {
  private conn: Connection;
  private readonly tokens = new Map<number, AbortController>();
  private readonly masters = new Map<number, { child: SshChild; gone: Promise<void> }>();
  private readonly queue: ConnectionEvent[] = [];
  private draining = false;
  private readonly forwards = new Set<Forward>();
  /** Forwards by listening port, where the master's lines about a channel go (channel-owners.ts). */
  private readonly byPort = new Map<number, Set<Forward>>();
  private readonly adds: Forward[] = [];
  private readonly cancels: Forward[] = [];
  /** The current master's lines. */
  private lines = new LineRing(MASTER_LINES);
  /** Tunnels that want this connection, with what to call when it is back. */
  private readonly members = new Map<string, () => void>();
  private readonly watchers = new Set<() => void>();
  /** `-O` runs under way (a few at a time). */
  private inFlight = 0;

  constructor(
    private plan: ConnectionPlan,
    private readonly deps: ConnectionDeps,
  ) {
    this.conn = initialConnection(deps.clock.now());
  }

  get id(): string {
    return this.plan.id;
  }

  /** The `connection` field of a status record. */
  record(): { id: string; pid: number | null; state: ConnectionState } {
    return { id: this.plan.id, pid: connectionPid(this.conn.phase), state: connectionState(this.conn.phase) };
  }

  get wanted(): boolean {
    return this.members.size > 0;
  }

  /** True once nothing runs or waits: the pool may forget it. */
  get idle(): boolean {
    return this.members.size === 0 && this.conn.phase.id === 'idle' && this.forwards.size === 0;
  }

  /** Called on every change of the connection's state or pid. */
  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  want(hash: string, kick: () => void): void {
    const first = this.members.size === 0;
    this.members.set(hash, kick);
    if (first) this.dispatch({ type: 'wanted', now: false });
  }

  unwant(hash: string): void {
    if (!this.members.delete(hash)) return;
    if (this.members.size === 0) this.dispatch({ type: 'unwanted' });
  }

  /**
   * A person or a changed ssh config asks for the tunnels now: a connection backing off
   * tries at once, with the plan as it is now (a new server address is probed from then on).
   */
  retryNow(plan: ConnectionPlan): void {
    if (plan.id === this.plan.id) this.plan = plan;
    // The tunnel that asks joins right after (Runner.followConnection); were it not to,
    // the master would end as unwanted at the next member that leaves.
    this.dispatch({ type: 'wanted', now: true });
  }

  /** Asks for a forward: added once the master is up, ended at once with the cause while it is down. */
  open(fwd: ControlForward, port: number, events: ForwardEvents): ForwardHandle {
    const f: Forward = { fwd, port, phase: 'waiting', cancelAsked: false, alone: false, failWith: null, events };
    this.forwards.add(f);
    this.indexed(port).add(f);
    const verdict = forwardVerdict(this.conn);
    if (verdict.kind === 'down') {
      const failure = verdict.failure ?? { reason: 'connection_lost', retry: true, probe: null, message: 'the shared connection is down' };
      this.end(f, { kind: 'failed', failure: { ...failure, probe: null }, code: null, signal: null });
    } else if (verdict.kind === 'add') {
      this.queueAdd(f);
    }
    return {
      cancel: () => this.cancel(f),
      fail: (failure) => {
        f.failWith ??= failure;
        this.cancel(f);
      },
    };
  }

  /** Ends the master at once (daemon shutdown): every forward on it goes with it. */
  async close(): Promise<void> {
    const gone = [...this.masters.values()].map((m) => m.gone);
    for (const kick of [...this.members.keys()]) this.unwant(kick);
    await Promise.all(gone);
  }

  private cancel(f: Forward): void {
    switch (f.phase) {
      case 'waiting': {
        const i = this.adds.indexOf(f);
        if (i >= 0) this.adds.splice(i, 1);
        this.end(f, { kind: 'cancelled' });
        return;
      }
      case 'adding':
        f.cancelAsked = true;
        return;
      case 'added':
        if (this.conn.phase.id !== 'up') {
          this.end(f, { kind: 'cancelled' });
          return;
        }
        f.phase = 'cancelling';
        this.cancels.push(f);
        this.pump();
        return;
      case 'cancelling':
      case 'ended':
        return;
      default:
        unreachable(f.phase, 'forward phase');
    }
  }

  private end(f: Forward, end: ForwardEnd): void {
    if (f.phase === 'ended') return;
    f.phase = 'ended';
    this.forwards.delete(f);
    const same = this.byPort.get(f.port);
    same?.delete(f);
    if (same?.size === 0) this.byPort.delete(f.port);
    f.events.ended(end.kind === 'cancelled' && f.failWith !== null ? { kind: 'failed', failure: f.failWith, code: null, signal: null } : end);
  }

  private indexed(port: number): Set<Forward> {
    let set = this.byPort.get(port);
    if (set === undefined) {
      set = new Set();
      this.byPort.set(port, set);
    }
    return set;
  }

  private queueAdd(f: Forward): void {
    f.phase = 'waiting';
    this.adds.push(f);
    this.pump();
  }

  /** Runs queued `-O` work, cancels first, a few runs at a time (each run is limited machine-wide too). */
  private pump(): void {
    // A stopped master (SIGSTOP) would hold every -O until it times out: ended at once instead.
    const p = this.conn.phase;
    if (p.id === 'up' && p.pid !== null && (this.cancels.length > 0 || this.adds.length > 0)) {
      const state = this.deps.processState(p.pid);
      if (state === 'T' || state === 't') {
        this.dispatch({ type: 'unresponsive', attempt: p.attempt });
        return;
      }
    }
    while (this.inFlight < 4 && (this.cancels.length > 0 || this.adds.length > 0)) {
      if (this.cancels.length > 0) {
        const batch = this.cancels.splice(0, BATCH);
        this.inFlight++;
        void this.runCancels(batch).finally(() => this.done());
        continue;
      }
      const first = this.adds[0];
      const batch = first !== undefined && first.alone ? this.adds.splice(0, 1) : this.takeAdds();
      for (const f of batch) f.phase = 'adding';
      this.inFlight++;
      void this.runAdds(batch).finally(() => this.done());
    }
  }

  private takeAdds(): Forward[] {
    const batch: Forward[] = [];
    while (batch.length < BATCH && this.adds[0] !== undefined && !this.adds[0].alone) batch.push(this.adds.shift()!);
    return batch;
  }

  private done(): void {
    this.inFlight--;
    this.pump();
  }

  private async runAdds(batch: Forward[]): Promise<void> {
    const pid = connectionPid(this.conn.phase);
    const out = await this.deps.control(this.plan.file, this.plan.controlPath, 'forward', batch.map((f) => f.fwd));
    this.noticeTimeout(out.timedOut, pid);
    // The master went away meanwhile: its end already ended these forwards.
    if (this.conn.phase.id !== 'up' || connectionPid(this.conn.phase) !== pid) {
      for (const f of batch) if (f.phase === 'adding') this.end(f, { kind: 'failed', failure: this.conn.lastFailure ?? lostFailure(), code: null, signal: null });
      return;
    }
    if (out.code === 0) {
      for (const f of batch) {
        if (f.phase !== 'adding') continue;
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
    this.end(f, { kind: 'failed', failure: this.explainForward(f, out.lines), code: out.code, signal: null });
  }

  private async runCancels(batch: Forward[]): Promise<void> {
    if (this.conn.phase.id === 'up') {
      const pid = connectionPid(this.conn.phase);
      const out = await this.deps.control(this.plan.file, this.plan.controlPath, 'cancel', batch.map((f) => f.fwd));
      this.noticeTimeout(out.timedOut, pid);
    }
    for (const f of batch) this.end(f, { kind: 'cancelled' });
  }

  private noticeTimeout(timedOut: boolean, pid: number | null): void {
    const p = this.conn.phase;
    if (timedOut && p.id === 'up' && p.pid === pid) this.dispatch({ type: 'unresponsive', attempt: p.attempt });
  }

  /** The client's words, and the master's lines that name this forward's port. */
  private explainForward(f: Forward, clientLines: readonly string[]): Failure {
    const port = new RegExp(`[:\\s]${f.port}\\b`);
    const master = this.lines.toArray().filter((l) => port.test(l) || /Server has disabled port forwarding/.test(l));
    const flag = f.fwd.flag === '-R' ? '-R' : '-L';
    const remoteBind = flag === '-R' && /^\[?[^\]]*\]?:/.test(f.fwd.value) ? f.fwd.value.replace(/^\[?([^\]]*)\]?:.*$/, '$1') : null;
    // ssh's function names say nothing to a user: "mux_client_forward: forwarding request failed: X" is X.
    const plain = [...master.slice(-5), ...clientLines].map((l) => l.replace(/^mux_\w+: (forwarding request failed: )?/, ''));
    return classifyExit({ code: 255, signal: null, lines: plain, flag, remoteBind });
  }

  private dispatch(ev: ConnectionEvent): void {
    this.queue.push(ev);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) {
        const { clock, rules } = this.deps;
        const step = nextConnection(this.conn, e, rules, { now: clock.now(), random: () => clock.random() });
        this.conn = step.connection;
        for (const effect of step.effects) this.perform(effect);
      }
    } finally {
      this.draining = false;
    }
  }

  private perform(e: ConnectionEffect): void {
    const { clock, graceMs } = this.deps;
    switch (e.type) {
      case 'spawn':
        void this.runMaster(e.attempt, this.token(e.attempt));
        return;
      case 'terminate': {
        const m = this.masters.get(e.attempt);
        if (m !== undefined) void terminate(m.child, graceMs, clock);
        return;
      }
      case 'timer': {
        const signal = this.token(e.token);
        void clock.sleep(e.at - clock.now(), signal).then((elapsed) => {
          if (elapsed) this.dispatch(e.event);
        });
        return;
      }
      case 'probe':
        void this.runProbe(e.token, e.at, e.target);
        return;
      case 'cancel':
        this.tokens.get(e.token)?.abort();
        this.tokens.delete(e.token);
        return;
      case 'opened':
        this.onOpened();
        return;
      case 'lost':
        this.onLost(e.failure, e.exit);
        return;
      case 'note':
        this.deps.log({ event: 'connection', id: this.plan.id, message: e.text });
        for (const f of this.forwards) f.events.line(`[tunnel-manager ${new Date(clock.now()).toISOString()}] ${e.text}`);
        return;
      case 'announce':
        for (const w of this.watchers) w();
        return;
      default:
        unreachable(e, 'connection effect');
    }
  }

  private onOpened(): void {
    for (const f of [...this.forwards]) if (f.phase === 'waiting' && !this.adds.includes(f)) this.queueAdd(f);
    // Tunnels backing off because this connection was down come back together.
    for (const kick of [...this.members.values()]) kick();
  }

  private onLost(failure: Failure, exit: MasterExit | null): void {
    this.adds.length = 0;
    this.cancels.length = 0;
    for (const f of [...this.forwards]) {
      if (f.phase === 'cancelling' || f.cancelAsked) this.end(f, { kind: 'cancelled' });
      // Waiting forwards of a connection being retried end too: their tunnels back off
      // with the cause and are called back (onOpened) once it is up again.
      else this.end(f, { kind: 'failed', failure: { ...failure, probe: null }, code: exit?.code ?? null, signal: exit?.signal ?? null });
    }
  }

  private token(id: number): AbortSignal {
    let ctrl = this.tokens.get(id);
    if (ctrl === undefined) {
      ctrl = new AbortController();
      this.tokens.set(id, ctrl);
    }
    return ctrl.signal;
  }

  private async runMaster(attempt: number, signal: AbortSignal): Promise<void> {
    const { spacer, registry, clock } = this.deps;
    const plan = this.plan;
    const slot = await spacer.acquire(plan.spacingKey, signal);
    if (slot === null) return;
    if (signal.aborted) {
      slot();
      return;
    }
    signal.addEventListener('abort', slot, { once: true });
    // A socket left behind would make this master run without sharing, silently.
    rmSync(plan.controlPath, { force: true });
    const lines = new LineRing(MASTER_LINES);
    this.lines = lines;
    const owners = new ChannelOwners();
    const onLine = (line: string) => {
      lines.push(line, clock.now());
      // A line about a connection through one forward is that tunnel's alone (its health reads it).
      const port = owners.portOf(line);
      if (port !== null) for (const f of this.byPort.get(port) ?? []) f.events.line(line);
      else if (keepInLog(line)) for (const f of this.forwards) f.events.line(line);
      if (isLoggedInLine(line)) slot();
      // Printed once the control socket listens and the session loop runs.
      if (line.startsWith('debug1: Entering interactive session.')) {
        slot();
        this.dispatch({ type: 'ready', attempt });
      }
    };
    const child = this.deps.spawn(plan.file, plan.args, onLine);
    let resolveGone!: () => void;
    this.masters.set(attempt, { child, gone: new Promise<void>((r) => (resolveGone = r)) });
    if (child.pid !== null) registry.add(child.pid, [plan.file, ...plan.args]);
    this.dispatch({ type: 'spawned', attempt, pid: child.pid });
    const exit = await child.exited;
    slot();
    this.masters.delete(attempt);
    if (child.pid !== null) registry.remove(child.pid);
    rmSync(plan.controlPath, { force: true });
    const failure =
      exit.spawnError !== null ? spawnFailure(exit.spawnError) : classifyExit({ code: exit.code, signal: exit.signal, lines: lines.toArray(), flag: '-L', remoteBind: null });
    const probe: ProbeTarget | null = failure.probe === 'ssh-port' && plan.sshEndpoint !== null ? { kind: 'ssh-port', ...plan.sshEndpoint } : null;
    this.dispatch({ type: 'exited', attempt, exit: { code: exit.code, signal: exit.signal }, failure, probe });
    resolveGone();
  }

  private async runProbe(token: number, at: number, target: ProbeTarget): Promise<void> {
    const { clock, probe } = this.deps;
    const signal = this.token(token);
    if (!(await clock.sleep(at - clock.now(), signal))) return;
    const up = await probe(target, signal);
    if (!signal.aborted) this.dispatch({ type: 'probe-result', wait: token, ok: up });
  }
}

function lostFailure(): Failure {
  return { reason: 'connection_lost', retry: true, probe: null, message: 'connection lost: the shared connection ended' };
}

// One shared connection's runner (SPEC §14): the shell around its pure lifecycle
// (connection-lifecycle.ts). It starts and ends the ControlMaster, hands each tunnel's
// forward to its queue (forward-queue.ts: `ssh -O forward`/`cancel`), and routes the
// master's lines to the forwards they are about (channel-owners.ts). An interactive
// connection's master runs in a pseudo-terminal (connection-master.ts), shown to the
// person attached to its login slot through whichever of its tunnels they named (SPEC §13, §14).
import { unreachable } from '../../kernel/unreachable.js';
import { nextConnection } from './connection-lifecycle.js';
import {
  connectionPid,
  connectionState,
  forwardVerdict,
  initialConnection,
  type Connection,
  type ConnectionEvent,
  type ConnectionTimerEvent,
  type OwnConnectionEffect,
  type ConnectionState,
} from './connection-phase.js';
import type { ControlForward } from './control-command.js';
import type { ConnectionDeps, ConnectionPlan, ForwardEvents, ForwardHandle } from './connection-types.js';
import { ForwardQueue } from './forward-queue.js';
import { LineRing } from '../process/ring.js';
import { ChannelOwners } from './channel-owners.js';
import { keepInLog } from '../process/ssh-output.js';
import type { SshChild } from '../process/ssh-process.js';
import { MASTER_LINES, runMaster, type MasterHost } from './connection-master.js';
import { LoginSlot } from '../process/login-slot.js';
import { EffectRunner } from '../effects/effect-runner.js';

export class ConnectionRunner {
  /** Its lifecycle, with the effects both lifecycles share performed by token. */
  private readonly machine: EffectRunner<Connection, ConnectionEvent, ConnectionTimerEvent, OwnConnectionEffect>;
  private readonly masters = new Map<number, { child: SshChild; gone: Promise<void> }>();
  /** What each spawn of the master (connection-master.ts) sees of this runner. */
  private readonly master: MasterHost;
  private readonly forwards: ForwardQueue;
  /** The current master's lines. */
  private lines = new LineRing(MASTER_LINES);
  /** Which forward each channel of the current master belongs to. */
  private owners = new ChannelOwners();
  /** Tunnels that want this connection, with what to call when it is back. */
  private readonly members = new Map<string, () => void>();
  private readonly watchers = new Set<() => void>();
  private readonly openedListeners = new Set<() => void>();
  /** The person's terminal on an interactive connection's login, whichever of its tunnels they named. */
  readonly slot = new LoginSlot();

  constructor(
    private plan: ConnectionPlan,
    private readonly deps: ConnectionDeps,
  ) {
    this.machine = new EffectRunner(
      initialConnection(deps.clock.now(), plan.interactive),
      {
        step: (c, e, world) => {
          const step = nextConnection(c, e, deps.rules, world);
          return { state: step.connection, effects: step.effects };
        },
        perform: (e) => this.perform(e),
      },
      { clock: deps.clock, probe: deps.probe, graceMs: deps.graceMs, child: (attempt) => this.masters.get(attempt)?.child },
      (result) => result,
    );
    this.master = {
      deps,
      plan: () => this.plan,
      slot: this.slot,
      started: (lines) => {
        this.lines = lines;
        this.owners = new ChannelOwners();
      },
      line: (line) => this.routeLine(line),
      dispatch: (ev) => this.dispatch(ev),
      masters: this.masters,
    };
    this.forwards = new ForwardQueue({
      master: () => {
        const p = this.conn.phase;
        return p.id === 'up' ? { up: true, pid: p.pid, attempt: p.attempt } : { up: false, pid: null, attempt: -1 };
      },
      lastFailure: () => this.conn.lastFailure,
      masterLines: () => this.lines.toArray(),
      unresponsive: (attempt) => this.dispatch({ type: 'unresponsive', attempt }),
      processState: (pid) => deps.processState(pid),
      control: (op, forwards) => deps.control(this.plan.file, this.plan.controlPath, op, forwards),
    });
  }

  get id(): string {
    return this.plan.id;
  }

  /** The `connection` field of a status record. */
  record(): { id: string; pid: number | null; state: ConnectionState } {
    return { id: this.plan.id, pid: connectionPid(this.conn.phase), state: connectionState(this.conn.phase, this.conn.interactive) };
  }

  /** True once nothing runs or waits: the pool may forget it. */
  get idle(): boolean {
    return this.members.size === 0 && this.conn.phase.id === 'idle' && this.forwards.forwards.size === 0;
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
    this.replan(plan);
    // The tunnel that asks joins right after (Runner.followConnection); were it not to,
    // the master would end as unwanted at the next member that leaves.
    this.dispatch({ type: 'wanted', now: true });
  }

  /**
   * The plan its tunnels were given last (plan-refresh.ts): its probes while its
   * server is down and its next master read it, so that an ssh config edit counts here
   * as it does for the tunnels.
   */
  replan(plan: ConnectionPlan): void {
    if (plan.id === this.plan.id) this.plan = plan;
  }

  /** While it backs off: when it tries again and why it is down (null: it is not backing off). */
  get retrying(): { at: number; error: string } | null {
    const p = this.conn.phase;
    return p.id === 'backoff' ? { at: p.until, error: p.failure.message } : null;
  }

  /** Called each time the master is up (after the forwards waiting for it were asked for). */
  onOpened(fn: () => void): () => void {
    this.openedListeners.add(fn);
    return () => this.openedListeners.delete(fn);
  }

  /** A person attached a terminal to this connection's login: a stale prompt is replaced by a fresh one. */
  login(): void {
    this.dispatch({ type: 'login' });
  }

  /** True while the master is up: a tunnel that asks now gets its forward without a login. */
  get up(): boolean {
    return this.conn.phase.id === 'up';
  }

  /** Asks for a forward: added once the master is up, ended at once with the cause while it is down. */
  open(fwd: ControlForward, port: number, events: ForwardEvents): ForwardHandle {
    const { forward, handle } = this.forwards.create(fwd, port, events);
    const verdict = forwardVerdict(this.conn);
    if (verdict.kind === 'down') {
      const failure = verdict.failure ?? { reason: 'connection_lost', retry: true, probe: null, message: 'the shared connection is down' };
      this.forwards.end(forward, { kind: 'failed', failure: { ...failure, probe: null }, code: null, signal: null, byConnection: true });
    } else if (verdict.kind === 'add') {
      this.forwards.queueAdd(forward);
    }
    return handle;
  }

  /** Ends the master at once (daemon shutdown): every forward on it goes with it. */
  async close(): Promise<void> {
    const gone = [...this.masters.values()].map((m) => m.gone);
    for (const kick of [...this.members.keys()]) this.unwant(kick);
    await Promise.all(gone);
  }

  private dispatch(ev: ConnectionEvent): void {
    this.machine.dispatch(ev);
  }

  private get conn(): Connection {
    return this.machine.state;
  }

  private perform(e: OwnConnectionEffect): void {
    const { clock } = this.deps;
    switch (e.type) {
      case 'spawn':
        void runMaster(this.master, e.attempt, this.machine.tokens.signal(e.attempt));
        return;
      case 'opened':
        this.forwards.addWaiting();
        // Tunnels backing off because this connection was down come back together.
        for (const kick of [...this.members.values()]) kick();
        for (const fn of [...this.openedListeners]) fn();
        return;
      case 'lost':
        this.forwards.endAll(e.failure, e.exit);
        return;
      case 'note':
        this.deps.log({ event: 'connection', id: this.plan.id, message: e.text });
        for (const f of this.forwards.forwards) f.events.line(`[tunnel-manager ${new Date(clock.now()).toISOString()}] ${e.text}`);
        return;
      case 'announce':
        for (const w of this.watchers) w();
        // Come to rest after a failure no retry fixes (or a login that ended without a
        // person): the tunnels waiting for this connection's retry are told now, since
        // none will come. Each tries once, meets the failure (forwardVerdict) and takes
        // it as its own: FAILED, or AUTH_REQUIRED for an interactive one.
        if (this.conn.phase.id === 'idle' && forwardVerdict(this.conn).kind === 'down') {
          for (const kick of [...this.members.values()]) kick();
        }
        return;
      default:
        unreachable(e, 'connection effect');
    }
  }

  /** A line about a connection through one forward is that tunnel's alone (its health reads it); the rest worth keeping go to every forward. */
  private routeLine(line: string): void {
    const port = this.owners.portOf(line);
    if (port !== null) for (const f of this.forwards.byPort.get(port) ?? []) f.events.line(line);
    else if (keepInLog(line)) for (const f of this.forwards.forwards) f.events.line(line);
  }
}

// One tunnel's runner: the shell around the pure lifecycle (lifecycle.ts). It feeds
// events in (start, stop, restart, ssh's lines and exit, timers, probes) and performs
// the effects that come out (spawn, terminate, timers, probes, announcements). Every
// decision is the lifecycle's; this file only does the I/O (an attempt's: own-attempt.ts, shared-attempt.ts).
import type { TunnelSpec } from '../../tunnel/spec.js';
import type { TunnelPlan } from '../plan/tunnel-plan.js';
import type { StatusRecord } from '../../tunnel/status.js';
import { unreachable } from '../../kernel/unreachable.js';
import { next } from './tunnel-lifecycle.js';
import { initialTunnel, isActive, pidOf, publicStatus, type Event, type OwnEffect, type Rules, type TimerEvent, type Tunnel } from './tunnel-phase.js';
import { LineRing } from '../process/ring.js';
import { keepInLog } from '../process/ssh-output.js';
import { err, type Result } from '../../kernel/result.js';
import { ConnectionLink } from './tunnel-on-connection.js';
import type { AttemptHost, Live } from './attempt-host.js';
import { runOwnAttempt } from './own-attempt.js';
import { runShared } from './shared-attempt.js';
import { RunningHealth } from './running-health.js';
import type { RunnerDeps } from './tunnel-runner-deps.js';
import { LoginSlot } from '../process/login-slot.js';
import { loginOutcome } from './login-outcome.js';
import type { Attachment, AttachRefusal, TerminalSink } from '../types.js';
import { EffectRunner } from '../effects/effect-runner.js';
export type { TunnelPlan } from '../plan/tunnel-plan.js';
export type { RunnerDeps } from './tunnel-runner-deps.js';

export class Runner {
  /** Its lifecycle, with the effects both lifecycles share performed by token. */
  private readonly machine: EffectRunner<Tunnel, Event, TimerEvent, OwnEffect>;
  private readonly children = new Map<number, Live>();
  private lastEmitted = '';
  private readonly ring: LineRing;
  /** The person's terminal on an interactive tunnel's login. */
  private readonly slot = new LoginSlot();
  private readonly health: RunningHealth;
  /** What its attempts (own-attempt.ts, shared-attempt.ts) see of this runner. */
  private readonly host: AttemptHost;
  /** Its shared connection, if its plan has one. */
  private readonly link: ConnectionLink;

  constructor(
    private plan: TunnelPlan,
    private readonly deps: RunnerDeps,
  ) {
    this.machine = new EffectRunner(
      initialTunnel(deps.clock.now()),
      {
        step: (t, e, world) => {
          const step = next(t, e, this.rules(), world);
          return { state: step.tunnel, effects: step.effects };
        },
        // Before the announcement, so that a RUNNING record already carries its health.
        stepped: (t) => this.health.follow(t.phase, this.plan, false),
        perform: (e) => this.perform(e),
        settled: (t) => {
          this.link.follow(this.plan.shared, t.phase);
          this.settleLogin();
        },
      },
      { clock: deps.clock, probe: deps.probe, graceMs: deps.graceMs, child: (attempt) => this.children.get(attempt)?.child },
      (result) => result,
    );
    this.ring = new LineRing(deps.logLines);
    this.health = new RunningHealth({
      clock: deps.clock,
      processes: deps.processes,
      announce: () => this.announce(),
      restart: () => void this.restart(),
      note: (text) => this.note(text),
    });
    this.link = new ConnectionLink(deps.connections, plan.spec.hash, {
      announce: () => this.announce(),
      // Its retry, now: counted in `restarts` as any retry.
      kick: () => {
        const p = this.tunnel.phase;
        if (p.id === 'backoff') this.dispatch({ type: 'retry-due', wait: p.wait });
      },
    });
    this.host = {
      plan: () => this.plan,
      line: (attempt, line) => this.sshLine(attempt, line),
      note: (text) => this.note(text),
      dispatch: (ev) => this.dispatch(ev),
      children: this.children,
    };
  }

  get hash(): string {
    return this.plan.spec.hash;
  }

  get spec(): TunnelSpec {
    return this.plan.spec;
  }

  /** Used by the next spawn; a running child keeps the plan it was started with. */
  setPlan(plan: TunnelPlan): void {
    this.plan = plan;
    // One plan for the tunnel and its connection: the connection probes and dials what it says.
    if (plan.shared !== null) this.deps.connections.replan(plan.shared.connection);
  }

  /** The plan the next spawn uses. */
  get currentPlan(): TunnelPlan {
    return this.plan;
  }

  logs(): string[] {
    return this.ring.toArray();
  }

  /** When the last log line arrived (ISO 8601), null before any. */
  logsModified(): string | null {
    return this.ring.modifiedAt === null ? null : new Date(this.ring.modifiedAt).toISOString();
  }

  /** True while a child exists or is about to (starting, running, retrying, stopping, awaiting a login). */
  get active(): boolean {
    return isActive(this.tunnel.phase);
  }

  status(): StatusRecord {
    const t = this.tunnel;
    const spec = this.plan.spec;
    return {
      hash: spec.hash,
      name: spec.name,
      remote_host: spec.remote_host,
      remote_port: spec.remote_port.text,
      local_port: spec.local_port.text,
      direction: spec.direction,
      status: publicStatus(t.phase, spec.interactive),
      pid: pidOf(t.phase),
      since: new Date(t.since).toISOString(),
      restarts: t.restarts,
      connection: this.link.record(this.plan.shared, t.phase),
      last_exit: t.lastExit,
      ...this.retry(),
      health: this.health.record(),
    };
  }

  /**
   * Why it is down and when it tries again: its own backoff's, or, while its shared
   * connection owns the retry, the connection's (its cause as it is now).
   */
  private retry(): Pick<StatusRecord, 'last_error' | 'next_retry_at'> {
    const t = this.tunnel;
    const p = t.phase;
    if (p.id !== 'backoff') return { last_error: t.lastError, next_retry_at: null };
    if (p.until !== null) return { last_error: t.lastError, next_retry_at: new Date(p.until).toISOString() };
    const conn = this.link.retrying();
    return { last_error: conn?.error ?? t.lastError, next_retry_at: conn === null ? null : new Date(conn.at).toISOString() };
  }

  /** Publishes the status record if it changed (its shared login's state, seen from outside). */
  refresh(): void {
    this.announce();
  }

  /**
   * Starts the tunnel unless it is already starting or running; out of RETRYING it
   * tries at once. `restart` counts it in `restarts` (a config change, not a user start).
   */
  start(opts: { restart: boolean }): void {
    this.link.revive(this.plan.shared, this.tunnel.phase);
    this.dispatch({ type: 'start', restart: opts.restart });
  }

  /** True when the tunnel's login is its shared connection's: a person logs in once for every interactive tunnel on it. */
  get sharesLogin(): boolean {
    return this.plan.shared?.connection.interactive === true;
  }

  /** The person's terminal on this tunnel's login: its own ssh's, or its shared connection's. */
  private loginSlot(): LoginSlot {
    const shared = this.plan.shared;
    return shared !== null && shared.connection.interactive ? this.link.slot(shared) : this.slot;
  }

  /** Ends the child (TERM, then KILL after the grace period) and resolves once it is gone. */
  async stop(): Promise<void> {
    const gone = [...this.children.values()].map((l) => l.gone);
    this.dispatch({ type: 'stop' });
    await Promise.all(gone);
  }

  /**
   * Stop, then start with a fresh ssh (and the current plan) without showing STOPPED;
   * resolves once the old child is gone.
   */
  async restart(): Promise<void> {
    const gone = [...this.children.values()].map((l) => l.gone);
    this.link.revive(this.plan.shared, this.tunnel.phase);
    this.dispatch({ type: 'restart' });
    await Promise.all(gone);
  }

  /**
   * Attaches a person's terminal to the login (SPEC §13): starts one if none waits,
   * and replaces a stale prompt. One terminal at a time; none once RUNNING.
   */
  attach(sink: TerminalSink): Result<Attachment, AttachRefusal> {
    const { name, remote_host } = this.plan.spec;
    if (this.tunnel.phase.id === 'running') return err({ reason: 'running', message: `${name} is already RUNNING: it needs no login now` });
    const attached = this.loginSlot().attach(sink, this.hash);
    if (!attached.ok) {
      const whose = this.sharesLogin ? `the login ${name} shares with the other interactive tunnels to ${remote_host}` : `the login of ${name}`;
      return err({ reason: 'busy', message: `another terminal is attached to ${whose}; close it first (Ctrl-C in tunnel-cli, or the panel's terminal window)` });
    }
    const shared = this.plan.shared;
    this.link.revive(shared, this.tunnel.phase);
    this.dispatch({ type: 'login' });
    // Once this tunnel waits on it: a stale prompt of the shared login is replaced.
    if (shared !== null && shared.connection.interactive) this.link.login(shared);
    return attached;
  }

  /** Runs each event through the lifecycle, one at a time: an event raised by an effect waits its turn. */
  private dispatch(ev: Event): void {
    this.machine.dispatch(ev);
  }

  private get tunnel(): Tunnel {
    return this.machine.state;
  }

  /** Ends an attached terminal's session once the login is over, one way or the other. */
  private settleLogin(): void {
    // A shared login's terminal is settled by the tunnel it was attached through.
    const shared = this.plan.shared;
    const slot = shared !== null && shared.connection.interactive ? this.link.currentSlot(shared) : this.slot;
    if (slot === null || slot.owner !== this.hash) return;
    const outcome = loginOutcome(this.tunnel);
    if (outcome !== null) slot.end(outcome);
  }

  private rules(): Rules {
    const { policy, unprobedCapMs, probeIntervalMs } = this.deps;
    return { interactive: this.plan.spec.interactive, policy, unprobedCapMs, probeIntervalMs, startTimeoutMs: this.plan.startTimeoutMs };
  }

  private perform(e: OwnEffect): void {
    switch (e.type) {
      case 'spawn': {
        const signal = this.machine.tokens.signal(e.attempt);
        if (this.plan.shared !== null) void runShared(this.host, this.deps.connections, e.attempt, this.plan.shared, signal);
        else void runOwnAttempt(this.host, this.slot, this.deps, e.attempt, e.mode, signal);
        return;
      }
      case 'note':
        this.note(e.text);
        return;
      case 'announce':
        this.announce();
        return;
      default:
        unreachable(e, 'effect');
    }
  }

  /** One of ssh's lines of `attempt`: to the tunnel's log, the line watcher, and the health watch. */
  private sshLine(attempt: number, line: string): void {
    if (keepInLog(line)) this.ring.push(line, this.deps.clock.now());
    this.deps.onLine?.(this.plan.spec.hash, line);
    this.health.line(attempt, line);
  }

  /** Publishes the status record unless it is unchanged. */
  private announce(): void {
    const record = this.status();
    const key = JSON.stringify(record);
    if (key === this.lastEmitted) return;
    this.lastEmitted = key;
    this.deps.log({ event: 'tunnel_state', hash: record.hash, name: record.name, status: record.status, pid: record.pid, last_error: record.last_error });
    this.deps.onChange(record);
  }

  /** A line of our own in the tunnel's log, between ssh's lines. */
  private note(text: string): void {
    this.ring.push(`[tunnel-manager ${new Date(this.deps.clock.now()).toISOString()}] ${text}`, this.deps.clock.now());
  }
}

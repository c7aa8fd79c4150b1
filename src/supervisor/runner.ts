// One tunnel's ssh child and what happens around it: spawn, wait for the forward,
// watch it, back off and retry, stop. The whole lifecycle is one state machine.
import type { TunnelSpec } from '../tunnel/spec.js';
import type { LastExit, StatusRecord, TunnelState } from '../tunnel/status.js';
import { earliestLogin, FRESH_COUNTERS, onEstablished, planRetry, type BackoffPolicy, type RetryCounters } from './backoff.js';
import { classifyExit, spawnFailure, startTimeoutFailure, type Failure } from './classify.js';
import type { Clock } from './clock.js';
import type { Probe, ProbeTarget } from './probe.js';
import { LineRing } from './ring.js';
import type { SpawnSpacer } from './spacing.js';
import { isEstablishedLine, isLoggedInLine, keepInLog } from './ssh-output.js';
import { terminate, type ChildExit, type SshChild, type SpawnSsh } from './ssh-process.js';

/** Everything needed to run one tunnel, worked out by the supervisor from the spec and `ssh -G`. */
export interface TunnelPlan {
  spec: TunnelSpec;
  file: string;
  args: string[];
  flag: '-L' | '-R';
  /** For -R: the remote bind address as configured (null: the server's default). */
  remoteBind: string | null;
  /** The ssh server's address to probe while it is unreachable; null behind a proxy. */
  sshEndpoint: { host: string; port: number } | null;
  /** For -L: our listening address, probed while it is busy. */
  localBind: { host: string; port: number } | null;
  /** Spawns with the same key are paced (see SpawnSpacer). */
  spacingKey: string;
  /** Kill and retry an attempt whose forward is not established by then. */
  startTimeoutMs: number;
}

export interface RunnerDeps {
  clock: Clock;
  spawn: SpawnSsh;
  probe: Probe;
  spacer: SpawnSpacer;
  /** Records live children's pids in the state dir. */
  registry: { add(pid: number, argv: string[]): void; remove(pid: number): void };
  policy: BackoffPolicy;
  /** Backoff cap for faults no probe can watch, so that their end is noticed within the recovery bound. */
  unprobedCapMs: number;
  probeIntervalMs: number;
  /** SIGTERM, then SIGKILL after this long. */
  graceMs: number;
  logLines: number;
  onChange(record: StatusRecord): void;
  log(entry: Record<string, unknown>): void;
}

/** Why an attempt's AbortController fired. */
type AbortReason = 'stop' | 'start-timeout' | 'ended';

/** One spawn of ssh: its controller cancels the attempt's timers and tells why it ended. */
interface Attempt {
  ctrl: AbortController;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/*
 *             start()                   forward established
 *   stopped ───────────► starting ─────────────────────────► running
 *      ▲                 │      ▲                               │
 *      │      fatal exit │      │ retry due, probe ok           │ exit
 *      │                 ▼      │                               │
 *      │              failed   backoff (RETRYING) ◄─────────────┘
 *      │                          ▲
 *      │                          └── retryable exit or start timeout, from starting
 *      │ child gone
 *   stopping ◄── stop() while a child exists (starting, running)
 *
 *   Also: stop() from backoff or failed → stopped; start() from failed or backoff →
 *   starting. Each spawn is one Attempt whose AbortController cancels its timers and,
 *   through its reason, tells an exit we caused from one ssh chose.
 */
type State =
  | { id: 'stopped' }
  /** `child` is null while the attempt waits for its host's spawn slot. */
  | { id: 'starting'; attempt: Attempt; child: SshChild | null }
  | { id: 'running'; attempt: Attempt; child: SshChild; since: number }
  | { id: 'backoff'; wait: AbortController; until: number; failure: Failure }
  | { id: 'failed'; failure: Failure }
  /** TERM sent (KILL follows); `done` resolves once the child is gone. */
  | { id: 'stopping'; child: SshChild; done: Deferred };

type Event =
  | { type: 'spawned'; attempt: Attempt; child: SshChild }
  | { type: 'established'; attempt: Attempt }
  | { type: 'start-timeout'; attempt: Attempt }
  | { type: 'exited'; attempt: Attempt; child: SshChild; exit: ChildExit; lines: readonly string[] }
  | { type: 'retry-due'; wait: AbortController };

function publicStatus(s: State): TunnelState {
  switch (s.id) {
    case 'stopped':
    case 'stopping':
      return 'STOPPED';
    case 'starting':
      return 'STARTING';
    case 'running':
      return 'RUNNING';
    case 'backoff':
      return 'RETRYING';
    case 'failed':
      return 'FAILED';
    default: {
      const never: never = s;
      throw new Error(`unknown state ${JSON.stringify(never)}`);
    }
  }
}

// Lines of one attempt kept for classifying its end; the banner of a changed host
// key, the longest message that matters, is about 20 lines.
const ATTEMPT_LINES = 100;

export class Runner {
  private state: State = { id: 'stopped' };
  private counters: RetryCounters = FRESH_COUNTERS;
  private lastSpawnAt: number | null = null;
  private restarts = 0;
  private lastExit: LastExit | null = null;
  private lastError: string | null = null;
  private since: number;
  private lastEmitted = '';
  private readonly ring: LineRing;

  constructor(
    private currentPlan: TunnelPlan,
    private readonly deps: RunnerDeps,
  ) {
    this.since = deps.clock.now();
    this.ring = new LineRing(deps.logLines);
  }

  get hash(): string {
    return this.currentPlan.spec.hash;
  }

  get spec(): TunnelSpec {
    return this.currentPlan.spec;
  }

  /** Used by the next spawn; the supervisor stops the runner first when the spec changed. */
  setPlan(plan: TunnelPlan): void {
    this.currentPlan = plan;
  }

  get plan(): TunnelPlan {
    return this.currentPlan;
  }

  logs(): string[] {
    return this.ring.toArray();
  }

  /** True while a child exists or is about to (starting, running, retrying, stopping). */
  get active(): boolean {
    switch (this.state.id) {
      case 'starting':
      case 'running':
      case 'backoff':
      case 'stopping':
        return true;
      case 'stopped':
      case 'failed':
        return false;
      default: {
        const never: never = this.state;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  status(): StatusRecord {
    const s = this.state;
    const spec = this.currentPlan.spec;
    const iso = (t: number) => new Date(t).toISOString();
    let pid: number | null = null;
    if ((s.id === 'starting' || s.id === 'running' || s.id === 'stopping') && s.child !== null) pid = s.child.pid;
    return {
      hash: spec.hash,
      name: spec.name,
      remote_host: spec.remote_host,
      remote_port: spec.remote_port.text,
      local_port: spec.local_port.text,
      direction: spec.direction,
      status: publicStatus(s),
      pid,
      since: iso(this.since),
      restarts: this.restarts,
      last_exit: this.lastExit,
      last_error: this.lastError,
      next_retry_at: s.id === 'backoff' ? iso(s.until) : null,
    };
  }

  /**
   * Starts the tunnel unless it is already starting or running; out of RETRYING it
   * tries at once. `restart` counts it in `restarts` (a config change, not a user start).
   */
  start(opts: { restart: boolean }): void {
    const s = this.state;
    switch (s.id) {
      case 'stopped':
      case 'failed':
        this.counters = FRESH_COUNTERS;
        if (opts.restart) this.restarts++;
        this.launch();
        return;
      case 'backoff':
        s.wait.abort();
        this.launch();
        return;
      case 'starting':
      case 'running':
        return;
      case 'stopping':
        void s.done.promise.then(() => this.start(opts));
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  /** Ends the child (TERM, then KILL after the grace period) and resolves once it is gone. */
  stop(): Promise<void> {
    const s = this.state;
    switch (s.id) {
      case 'stopped':
        return Promise.resolve();
      case 'failed':
        this.enter({ id: 'stopped' });
        return Promise.resolve();
      case 'backoff':
        s.wait.abort();
        this.enter({ id: 'stopped' });
        return Promise.resolve();
      case 'starting':
        s.attempt.ctrl.abort('stop' satisfies AbortReason);
        if (s.child === null) {
          this.enter({ id: 'stopped' });
          return Promise.resolve();
        }
        return this.beginStopping(s.child);
      case 'running':
        s.attempt.ctrl.abort('stop' satisfies AbortReason);
        return this.beginStopping(s.child);
      case 'stopping':
        return s.done.promise;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private beginStopping(child: SshChild): Promise<void> {
    const done = deferred();
    this.enter({ id: 'stopping', child, done });
    // The child's exit (an 'exited' event) completes the stop.
    void terminate(child, this.deps.graceMs, this.deps.clock);
    return done.promise;
  }

  private launch(): void {
    const attempt: Attempt = { ctrl: new AbortController() };
    this.enter({ id: 'starting', attempt, child: null });
    void this.runAttempt(attempt);
  }

  private async runAttempt(attempt: Attempt): Promise<void> {
    const { clock, spacer, spawn, registry } = this.deps;
    const { signal } = attempt.ctrl;
    const plan = this.currentPlan;
    const release = await spacer.acquire(plan.spacingKey, signal);
    if (release === null) return;
    // The host's slot is freed at login, or when the attempt ends without one.
    signal.addEventListener('abort', release, { once: true });

    const lines = new LineRing(ATTEMPT_LINES);
    const child = spawn(plan.file, plan.args, (line) => {
      lines.push(line);
      if (keepInLog(line)) this.ring.push(line);
      if (isLoggedInLine(line)) release();
      if (isEstablishedLine(line, plan.flag)) {
        release();
        this.dispatch({ type: 'established', attempt });
      }
    });
    this.lastSpawnAt = clock.now();
    if (child.pid !== null) registry.add(child.pid, [plan.file, ...plan.args]);
    this.note(child.pid !== null ? `ssh started (pid ${child.pid})` : 'ssh could not be started');
    this.dispatch({ type: 'spawned', attempt, child });
    void clock.sleep(plan.startTimeoutMs, signal).then((elapsed) => {
      if (elapsed) this.dispatch({ type: 'start-timeout', attempt });
    });

    const exit = await child.exited;
    release();
    if (child.pid !== null) registry.remove(child.pid);
    this.dispatch({ type: 'exited', attempt, child, exit, lines: lines.toArray() });
  }

  private dispatch(ev: Event): void {
    switch (ev.type) {
      case 'spawned':
        return this.onSpawned(ev.attempt, ev.child);
      case 'established':
        return this.onEstablished(ev.attempt);
      case 'start-timeout':
        return this.onStartTimeout(ev.attempt);
      case 'exited':
        return this.onExited(ev);
      case 'retry-due':
        return this.onRetryDue(ev.wait);
      default: {
        const never: never = ev;
        throw new Error(`unknown event ${JSON.stringify(never)}`);
      }
    }
  }

  private onSpawned(attempt: Attempt, child: SshChild): void {
    const s = this.state;
    switch (s.id) {
      case 'starting':
        if (s.attempt === attempt) this.enter({ ...s, child });
        return;
      case 'stopped':
      case 'running':
      case 'backoff':
      case 'failed':
      case 'stopping':
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private onEstablished(attempt: Attempt): void {
    const s = this.state;
    switch (s.id) {
      case 'starting':
        // An attempt already being ended (start timeout) does not count, even if ssh got there.
        if (s.attempt !== attempt || s.child === null || attempt.ctrl.signal.aborted) return;
        this.counters = onEstablished(this.counters);
        this.lastError = null;
        this.enter({ id: 'running', attempt, child: s.child, since: this.deps.clock.now() });
        return;
      case 'stopped':
      case 'running':
      case 'backoff':
      case 'failed':
      case 'stopping':
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private onStartTimeout(attempt: Attempt): void {
    const s = this.state;
    switch (s.id) {
      case 'starting':
        if (s.attempt !== attempt || s.child === null) return;
        // The reason tells onExited that this end was ours, not ssh's.
        attempt.ctrl.abort('start-timeout' satisfies AbortReason);
        void terminate(s.child, this.deps.graceMs, this.deps.clock);
        return;
      case 'stopped':
      case 'running':
      case 'backoff':
      case 'failed':
      case 'stopping':
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private onExited(ev: Extract<Event, { type: 'exited' }>): void {
    const s = this.state;
    const at = this.deps.clock.now();
    switch (s.id) {
      case 'starting':
      case 'running': {
        if (s.attempt !== ev.attempt) return;
        const reason = ev.attempt.ctrl.signal.aborted ? (ev.attempt.ctrl.signal.reason as AbortReason) : null;
        ev.attempt.ctrl.abort('ended' satisfies AbortReason);
        this.lastExit = { code: ev.exit.code, signal: ev.exit.signal, at: new Date(at).toISOString() };
        const failure = this.explain(ev.exit, ev.lines, reason);
        this.lastError = failure.message;
        this.note(`ssh exited (${describeExit(ev.exit)}): ${failure.message}`);
        if (!failure.retry) {
          this.enter({ id: 'failed', failure });
          return;
        }
        const target = this.probeTarget(failure);
        const plan = planRetry(
          this.counters,
          s.id === 'running' ? { kind: 'lost', ranMs: at - s.since } : { kind: 'start-failed' },
          at,
          this.lastSpawnAt,
          () => this.deps.clock.random(),
          this.deps.policy,
          target !== null ? this.deps.policy.capMs : Math.min(this.deps.policy.capMs, this.deps.unprobedCapMs),
        );
        this.counters = plan.counters;
        const wait = new AbortController();
        this.enter({ id: 'backoff', wait, until: plan.at, failure });
        void this.waitForRetry(wait, plan.at, target);
        return;
      }
      case 'stopping':
        if (s.child !== ev.child) return;
        this.lastExit = { code: ev.exit.code, signal: ev.exit.signal, at: new Date(at).toISOString() };
        this.note(`ssh stopped (${describeExit(ev.exit)})`);
        this.enter({ id: 'stopped' });
        s.done.resolve();
        return;
      case 'stopped':
      case 'backoff':
      case 'failed':
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private onRetryDue(wait: AbortController): void {
    const s = this.state;
    switch (s.id) {
      case 'backoff':
        if (s.wait !== wait) return;
        this.restarts++;
        this.launch();
        return;
      case 'stopped':
      case 'starting':
      case 'running':
      case 'failed':
      case 'stopping':
        return;
      default: {
        const never: never = s;
        throw new Error(`unknown state ${JSON.stringify(never)}`);
      }
    }
  }

  private explain(exit: ChildExit, lines: readonly string[], reason: AbortReason | null): Failure {
    if (exit.spawnError !== null) return spawnFailure(exit.spawnError);
    if (reason === 'start-timeout') return startTimeoutFailure(Math.round(this.currentPlan.startTimeoutMs / 1000));
    return classifyExit({ code: exit.code, signal: exit.signal, lines, flag: this.currentPlan.flag, remoteBind: this.currentPlan.remoteBind });
  }

  private probeTarget(failure: Failure): ProbeTarget | null {
    switch (failure.probe) {
      case 'ssh-port':
        return this.currentPlan.sshEndpoint !== null ? { kind: 'ssh-port', ...this.currentPlan.sshEndpoint } : null;
      case 'local-bind':
        return this.currentPlan.localBind !== null ? { kind: 'local-bind', ...this.currentPlan.localBind } : null;
      case null:
        return null;
      default: {
        const never: never = failure.probe;
        throw new Error(`unknown probe ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * Waits out the backoff; with a probe target, checks every probe interval whether
   * the fault has ended and then logs in at once (one login per second at most).
   */
  private async waitForRetry(wait: AbortController, until: number, target: ProbeTarget | null): Promise<void> {
    const { clock, probe, policy, probeIntervalMs } = this.deps;
    const { signal } = wait;
    if (target === null) {
      if (await clock.sleep(until - clock.now(), signal)) this.dispatch({ type: 'retry-due', wait });
      return;
    }
    while (clock.now() < until) {
      if (await probe(target, signal)) {
        const now = clock.now();
        if (!(await clock.sleep(earliestLogin(now, this.lastSpawnAt, policy) - now, signal))) return;
        break;
      }
      if (signal.aborted) return;
      if (!(await clock.sleep(Math.min(probeIntervalMs, until - clock.now()), signal))) return;
    }
    if (!signal.aborted) this.dispatch({ type: 'retry-due', wait });
  }

  private enter(next: State): void {
    if (publicStatus(next) !== publicStatus(this.state)) this.since = this.deps.clock.now();
    this.state = next;
    const record = this.status();
    const key = JSON.stringify(record);
    if (key === this.lastEmitted) return;
    this.lastEmitted = key;
    this.deps.log({ event: 'tunnel_state', hash: record.hash, name: record.name, status: record.status, pid: record.pid, last_error: record.last_error });
    this.deps.onChange(record);
  }

  /** A line of our own in the tunnel's log, between ssh's lines. */
  private note(text: string): void {
    this.ring.push(`[tunnel-manager ${new Date(this.deps.clock.now()).toISOString()}] ${text}`);
  }
}

function describeExit(exit: ChildExit): string {
  if (exit.signal !== null) return `signal ${exit.signal}`;
  if (exit.code !== null) return `code ${exit.code}`;
  return 'not started';
}

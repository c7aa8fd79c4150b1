// The supervisor: one runner per configured tunnel, driven by the config (apply) and
// by the user (start/stop, remembered in the state dir). Operations run one at a
// time, so a reload never interleaves with a stop.
import type { TunnelSpec } from '../tunnel/spec.js';
import type { DesiredState, StatusRecord } from '../tunnel/status.js';
import type { ChildRegistry } from './process/children.js';
import type { StateLock } from './state/state-lock.js';
import type { Clock } from './clock.js';
import type { DesiredStore } from './state/desired.js';
import { diffTunnels } from '../config/diff.js';
import type { PlanContext } from './plan/plan.js';
import { Runner, type RunnerDeps } from './tunnel/tunnel-runner.js';
import { PlanRefresh } from './plan-refresh.js';
import { removalOrder } from './plan/apply-order.js';
import type { DaemonSshConfigFile } from './plan/ssh-config-file.js';
import { ptySpawn } from './process/pty-process.js';
import type { ConnectionPool } from './connection/connection-pool.js';
import { runnerDeps } from './supervisor-deps.js';
import { err, type Result } from '../kernel/result.js';
import type { ApplyReport, Attachment, AttachRefusal, SupervisorApi, SupervisorEvent, SupervisorOptions, TerminalSink } from './types.js';

/** How long after a reload the tunnels it left as they were have their ssh config read again (plan-refresh.ts). */
const REREAD_AFTER_RELOAD_MS = 250;

/** Made by createSupervisor (supervisor-start.ts) once the state dir is ready and held. */
export class Supervisor implements SupervisorApi {
  private readonly runners = new Map<string, Runner>();
  private readonly listeners = new Set<(e: SupervisorEvent) => void>();
  private readonly runnerDeps: RunnerDeps;
  private readonly plans: PlanRefresh;
  private readonly connections: ConnectionPool;
  private queue: Promise<unknown> = Promise.resolve();
  private shutdownPromise: Promise<void> | null = null;

  constructor(
    opts: SupervisorOptions,
    clock: Clock,
    private readonly log: (entry: Record<string, unknown>) => void,
    registry: ChildRegistry,
    private readonly desired: DesiredStore,
    places: Pick<PlanContext, 'knownHostsPath' | 'loginLogDir' | 'controlDir'>,
    graceMs: number,
    daemonSshConfig: DaemonSshConfigFile,
    private readonly stateLock: StateLock,
  ) {
    const planContext = { sshBin: opts.sshBin, sshConfigPath: daemonSshConfig.path, mode: opts.mode, ...places };
    this.plans = new PlanRefresh({
      sshBin: opts.sshBin,
      sshConfigPath: opts.sshConfigPath,
      daemonSshConfig,
      planContext,
      runners: this.runners,
      closed: () => this.shutdownPromise !== null,
      log,
    });
    this.runnerDeps = runnerDeps({
      clock,
      registry,
      graceMs,
      log,
      onChange: (record) => this.emit({ type: 'status', record }),
      spawnPty: opts.spawnPty ?? ptySpawn,
      ...(opts.onSshLine !== undefined ? { onLine: opts.onSshLine } : {}),
    });
    this.connections = this.runnerDeps.connections;
    // SPEC §14: one login carries every interactive tunnel to its host; once it is up,
    // the others waiting for a person (or never started) need none and start.
    const sharingLogin = (id: string) => [...this.runners.values()].filter((r) => r.sharesLogin && r.currentPlan.shared?.connection.id === id);
    this.connections.onOpened((id) => {
      if (sharingLogin(id).length === 0) return;
      this.serial(async () => {
        for (const r of sharingLogin(id)) if (!r.active && this.autoStarts(r)) r.start({ restart: false });
      }).catch(() => undefined);
    });
    // Tunnels waiting for a shared login without holding it show its state too (Runner.status).
    this.connections.onChange((id) => {
      for (const r of sharingLogin(id)) if (!r.active) r.refresh();
    });
  }

  apply(tunnels: readonly TunnelSpec[]): Promise<ApplyReport> {
    return this.serial(async () => {
      const diff = diffTunnels([...this.runners.values()].map((r) => r.spec), tunnels);
      // A reload (and SIGHUP) is also when the user expects edits to the ssh config to
      // count. New and changed tunnels start with a fresh ssh -G, or at once with the
      // answer held for their destination while the ssh config is unchanged since it was
      // read (SPEC §14); the unchanged and the reused are read again in the background
      // (below), so that applying a one-line change never waits for a thousand others:
      // what they find only affects probes and next spawns.
      const fresh = await this.plans.hosts.resolve([...diff.added, ...diff.changed.map((c) => c.after)], { reuse: true });
      const planFor = (spec: TunnelSpec) => {
        this.plans.hosts.claim(spec.hash, fresh.round);
        return this.plans.planOf(spec, fresh);
      };

      const changedPlans = diff.changed.map(({ after }) => ({ after, plan: planFor(after) }));
      const addedPlans = diff.added.map((spec) => ({ spec, plan: planFor(spec) }));
      const leaving = diff.removed.flatMap((spec) => {
        const runner = this.runners.get(spec.hash);
        this.runners.delete(spec.hash);
        return runner === undefined ? [] : [runner];
      });
      // Only a removal whose port a new tunnel takes must be over before that one starts.
      const leave = removalOrder(leaving, (r) => r.currentPlan, [...changedPlans, ...addedPlans].map((c) => c.plan));
      await Promise.all(leave.before.map((r) => r.stop()));
      // A removed tunnel's wish goes with it: the file would otherwise grow with every
      // edit that changes a hash, and a tunnel added back is a new entry that starts as
      // configured.
      this.desired.forget(diff.removed.map((t) => t.hash));
      const changing = Promise.all(
        changedPlans.map(async ({ after, plan }) => {
          const runner = this.runners.get(after.hash);
          if (runner === undefined) return;
          // The next spawn uses the new plan; a restart replaces the child without passing through STOPPED.
          runner.setPlan(plan);
          // A tunnel someone started (an interactive one included) is restarted with
          // the new options: a fresh login, or its host's shared one while that is up.
          if (runner.active && this.desired.get(after.hash) !== 'stopped') await runner.restart();
          else if (this.autoStarts(runner)) runner.start({ restart: false });
          else await runner.stop();
        }),
      );
      for (const { spec, plan } of addedPlans) {
        const runner = new Runner(plan, this.runnerDeps);
        this.runners.set(spec.hash, runner);
        if (this.autoStarts(runner)) runner.start({ restart: false });
        else this.emit({ type: 'status', record: runner.status() });
      }
      await Promise.all([changing, ...leave.after.map((r) => r.stop())]);
      // Keep the config's order for statuses().
      const order = new Map(tunnels.map((t, i) => [t.hash, i]));
      const sorted = [...this.runners.entries()].sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
      this.runners.clear();
      for (const [h, r] of sorted) this.runners.set(h, r);
      this.plans.rereadInBackground([...diff.unchanged, ...fresh.reused], 'reload', REREAD_AFTER_RELOAD_MS);

      const report: ApplyReport = {
        added: diff.added.map((t) => t.hash),
        removed: diff.removed.map((t) => t.hash),
        unchanged: diff.unchanged.map((t) => t.hash),
        changed: diff.changed.map((c) => c.after.hash),
      };
      this.log({ event: 'apply', ...report });
      return report;
    });
  }

  statuses(): StatusRecord[] {
    return [...this.runners.values()].map((r) => r.status());
  }

  tunnels(): TunnelSpec[] {
    return [...this.runners.values()].map((r) => r.spec);
  }

  status(hash: string): StatusRecord | undefined {
    return this.runners.get(hash)?.status();
  }

  start(hash: string): Promise<StatusRecord> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      this.desired.set([hash], 'started');
      await this.plans.rereadFor(runner);
      runner.start({ restart: false });
      return runner.status();
    });
  }

  /** Sets desired=started and replaces the ssh child (a fresh login), or starts it if none runs. */
  restart(hash: string): Promise<StatusRecord> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      this.desired.set([hash], 'started');
      await this.plans.rereadFor(runner);
      await runner.restart();
      return runner.status();
    });
  }

  stop(hash: string): Promise<StatusRecord> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      this.desired.set([hash], 'stopped');
      await runner.stop();
      return runner.status();
    });
  }

  /** Starts every tunnel but the interactive ones, which only an explicit start(hash) starts. */
  startAll(): Promise<StatusRecord[]> {
    return this.serial(async () => {
      const runners = [...this.runners.values()].filter((r) => !r.spec.interactive);
      this.desired.set(runners.map((r) => r.hash), 'started');
      for (const r of runners) r.start({ restart: false });
      return this.statuses();
    });
  }

  stopAll(): Promise<StatusRecord[]> {
    return this.serial(async () => {
      const runners = [...this.runners.values()];
      this.desired.set(runners.map((r) => r.hash), 'stopped');
      await Promise.all(runners.map((r) => r.stop()));
      return this.statuses();
    });
  }

  attach(hash: string, sink: TerminalSink): Promise<Result<Attachment, AttachRefusal>> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      const { name } = runner.spec;
      if (!runner.spec.interactive) {
        return err({ reason: 'not_interactive' as const, message: `${name} is not an interactive tunnel: it logs in by itself (set interactive: true for a tunnel that needs a password or a one-time code)` });
      }
      const attached = runner.attach(sink);
      // Attaching is asking for the tunnel (a stopped one starts), as start(hash) does.
      if (attached.ok) this.desired.set([hash], 'started');
      return attached;
    });
  }

  logs(hash: string): string[] | undefined {
    return this.runners.get(hash)?.logs();
  }

  logsModified(hash: string): string | null {
    return this.runners.get(hash)?.logsModified() ?? null;
  }

  subscribe(listener: (e: SupervisorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.serial(async () => {
      await this.plans.close();
      const stopped = Promise.all([...this.runners.values()].map((r) => r.stop()));
      // Ending the masters ends every forward on them: no cancel one by one.
      await this.connections.close();
      await stopped;
      // Once no child of ours runs, the next daemon may take the state dir.
      this.stateLock.release();
      this.log({ event: 'supervisor_stopped' });
    });
    return this.shutdownPromise;
  }

  /**
   * Desired state decides; an unknown one means "as configured", except for interactive
   * tunnels, which start by themselves only while the login they share is up (SPEC §14).
   */
  private autoStarts(runner: Runner): boolean {
    const wanted: DesiredState | undefined = this.desired.get(runner.hash);
    if (wanted === 'stopped') return false;
    if (!runner.spec.interactive) return true;
    const shared = runner.currentPlan.shared;
    return runner.sharesLogin && shared !== null && this.connections.isUp(shared.connection.id);
  }

  private runner(hash: string): Runner {
    const runner = this.runners.get(hash);
    // Callers resolve hashes (and prefixes) against the config first; this is a bug.
    if (runner === undefined) throw new Error(`no tunnel with hash ${hash}`);
    return runner;
  }

  /** Runs operations one at a time; after shutdown, changes are refused. */
  private serial<T>(op: () => Promise<T>): Promise<T> {
    const closed = this.shutdownPromise !== null;
    const run = this.queue.then(() => (closed ? Promise.reject(new Error('the supervisor is shut down')) : op()));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private emit(e: SupervisorEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.log({ event: 'listener_failed', error: String(err) });
      }
    }
  }
}

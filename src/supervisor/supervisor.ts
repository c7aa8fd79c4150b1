// The supervisor: one runner per configured tunnel, driven by the config (apply) and
// by the user (start/stop, remembered in the state dir). Operations run one at a
// time, so a reload never interleaves with a stop.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';
import type { DesiredState, StatusRecord } from '../tunnel/status.js';
import { ChildRegistry, endLeftovers, programPath } from './children.js';
import { checkStateDirOwner, StateDirError } from '../state-dir-owner.js';
import { lockStateDir, type StateLock } from './state-lock.js';
import { systemClock, type Clock } from './clock.js';
import { DesiredStore } from './desired.js';
import { diffTunnels } from '../config/diff.js';
import { buildPlan, type PlanContext } from './plan.js';
import { Runner, type RunnerDeps, type TunnelPlan } from './runner.js';
import { sshConfigReader } from '../ssh-config/read.js';
import { HostViews, SSH_G_CONCURRENCY, type Resolution } from './host-views.js';
import { userConfigFiles } from '../ssh-config/daemon-config.js';
import { watchSshConfig, type SshConfigWatcher } from '../ssh-config/watch.js';
import { writeDaemonSshConfig, type DaemonSshConfigFile } from './ssh-config-file.js';
import { ptySpawn, type SpawnPty } from './pty-process.js';
import { prepareStateDir, statePaths } from './state-files.js';
import type { ConnectionPool } from './connection-pool.js';
import { DEFAULTS, runnerDeps } from './supervisor-deps.js';
import { prepareControlDir } from './control-path.js';
import { err, type Result } from '../result.js';
import type { ApplyReport, Attachment, AttachRefusal, SupervisorApi, SupervisorEvent, TerminalSink } from './types.js';

export interface SupervisorOptions {
  sshBin: string;
  /** The user's ssh config: read by ssh -G with -F when set, and Included by the daemon's own (ssh-config-file.ts). */
  sshConfigPath: string | null;
  stateDir: string;
  mode: DirectionMode;
  log?: (entry: Record<string, unknown>) => void;
  /** Spawns ssh in a pseudo-terminal, for interactive tunnels (SPEC §13); node-pty by default. */
  spawnPty?: SpawnPty;
  /** Every line each tunnel's ssh writes, as it comes: where a health watcher reads channel errors (SPEC §5). */
  onSshLine?: (hash: string, line: string) => void;
}

/**
 * Creates the supervisor: prepares the state dir (0700, writable known_hosts), ends
 * the ssh children a crashed predecessor left behind, and reads the desired states.
 * No tunnel starts before the first apply().
 */
export async function createSupervisor(opts: SupervisorOptions): Promise<SupervisorApi> {
  const clock = systemClock;
  const log = opts.log ?? (() => {});
  const paths = statePaths(opts.stateDir);
  const uid = process.getuid?.() ?? 0;
  const owned = checkStateDirOwner(paths.dir, uid);
  if (!owned.ok) throw new StateDirError(owned.error);
  prepareStateDir(paths);
  // Before the leftovers: a second daemon on this dir would end the first one's children.
  const lock = lockStateDir(paths.dir, process.pid);
  if (!lock.ok) throw new StateDirError(lock.error);
  const graceMs = DEFAULTS.graceMs;
  const owner = { uid, program: programPath(opts.sshBin, process.env.PATH) };
  const leftovers = await endLeftovers(paths.children, graceMs, clock, owner).catch((e: unknown) => {
    lock.value.release();
    throw e;
  });
  if (leftovers.ended.length > 0) log({ event: 'leftover_ssh_ended', pids: leftovers.ended });
  if (leftovers.stuck.length > 0) log({ event: 'leftover_ssh_stuck', pids: leftovers.stuck });
  if (leftovers.skipped.length > 0) {
    log({ event: 'leftover_not_ours', pids: leftovers.skipped, message: `left alone: not processes of uid ${uid} running ${owner.program ?? opts.sshBin}` });
  }
  const registry = new ChildRegistry(paths.children);
  registry.reset();
  const daemonSshConfig = writeDaemonSshConfig(paths, opts.sshConfigPath, log);
  const controlDir = prepareControlDir(paths.dir);
  if (!controlDir.ok) log({ event: 'shared_connections_unavailable', error: controlDir.error });
  const places = { knownHostsPath: paths.knownHosts, loginLogDir: paths.loginLogs, controlDir: controlDir.ok ? controlDir.value : null };
  return new Supervisor(opts, clock, log, registry, DesiredStore.load(paths.desired), places, graceMs, daemonSshConfig, lock.value);
}

class Supervisor implements SupervisorApi {
  private readonly runners = new Map<string, Runner>();
  private readonly listeners = new Set<(e: SupervisorEvent) => void>();
  private readonly runnerDeps: RunnerDeps;
  private readonly planContext: PlanContext;
  private readonly sshConfigWatcher: SshConfigWatcher;
  private readonly hosts: HostViews;
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
    this.planContext = { sshBin: opts.sshBin, sshConfigPath: daemonSshConfig.path, mode: opts.mode, ...places };
    this.sshConfigWatcher = watchSshConfig(
      () => {
        this.hosts.invalidate();
        this.rereadInBackground([...this.runners.values()].map((r) => r.spec), 'ssh config changed');
      },
      (e) => log({ event: 'ssh_config_watch_error', error: e.message }),
    );
    this.hosts = new HostViews(
      sshConfigReader(opts.sshBin, opts.sshConfigPath),
      this.sshConfigWatcher,
      userConfigFiles(opts.sshConfigPath).map((f) => (f.startsWith('~/') ? join(homedir(), f.slice(2)) : f)),
      () => [...this.runners.values()].map((r) => r.spec),
      log,
      SSH_G_CONCURRENCY,
      // Written before the round's answers are used, so a hop's ssh finds its own block.
      (hops) => daemonSshConfig.write(hops),
    );
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
      const fresh = await this.hosts.resolve([...diff.added, ...diff.changed.map((c) => c.after)], { reuse: true });
      const planFor = (spec: TunnelSpec) => {
        this.hosts.claim(spec.hash, fresh.round);
        return buildPlan(spec, this.planContext, fresh.info(spec));
      };

      await Promise.all(
        diff.removed.map(async (spec) => {
          const runner = this.runners.get(spec.hash);
          this.runners.delete(spec.hash);
          await runner?.stop();
        }),
      );
      // A removed tunnel's wish goes with it: the file would otherwise grow with every
      // edit that changes a hash, and a tunnel added back is a new entry that starts as
      // configured.
      this.desired.forget(diff.removed.map((t) => t.hash));
      await Promise.all(
        diff.changed.map(async ({ after }) => {
          const runner = this.runners.get(after.hash);
          if (runner === undefined) return;
          // The next spawn uses the new plan; a restart replaces the child without passing through STOPPED.
          runner.setPlan(planFor(after));
          if (!this.autoStarts(after)) await runner.stop();
          else if (runner.active) await runner.restart();
          else runner.start({ restart: false });
        }),
      );
      for (const spec of diff.added) {
        const runner = new Runner(planFor(spec), this.runnerDeps);
        this.runners.set(spec.hash, runner);
        if (this.autoStarts(spec)) runner.start({ restart: false });
        else this.emit({ type: 'status', record: runner.status() });
      }
      // Keep the config's order for statuses().
      const order = new Map(tunnels.map((t, i) => [t.hash, i]));
      const sorted = [...this.runners.entries()].sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
      this.runners.clear();
      for (const [h, r] of sorted) this.runners.set(h, r);
      this.rereadInBackground([...diff.unchanged, ...fresh.reused], 'reload');

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

  status(hash: string): StatusRecord | undefined {
    return this.runners.get(hash)?.status();
  }

  start(hash: string): Promise<StatusRecord> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      this.desired.set([hash], 'started');
      await this.rereadFor(runner);
      runner.start({ restart: false });
      return runner.status();
    });
  }

  /** Sets desired=started and replaces the ssh child (a fresh login), or starts it if none runs. */
  restart(hash: string): Promise<StatusRecord> {
    return this.serial(async () => {
      const runner = this.runner(hash);
      this.desired.set([hash], 'started');
      await this.rereadFor(runner);
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
      await this.sshConfigWatcher.close();
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

  /** Desired state decides; an unknown one means "as configured", except for interactive tunnels. */
  private autoStarts(spec: TunnelSpec): boolean {
    const wanted: DesiredState | undefined = this.desired.get(spec.hash);
    return wanted !== 'stopped' && !spec.interactive;
  }

  private runner(hash: string): Runner {
    const runner = this.runners.get(hash);
    // Callers resolve hashes (and prefixes) against the config first; this is a bug.
    if (runner === undefined) throw new Error(`no tunnel with hash ${hash}`);
    return runner;
  }

  /** An explicit start or restart uses what the ssh config says now. */
  private async rereadFor(runner: Runner): Promise<void> {
    const spec = runner.spec;
    const r = await this.hosts.resolve([spec]);
    if (this.hosts.claim(spec.hash, r.round)) runner.setPlan(buildPlan(spec, this.planContext, r.info(spec)));
  }

  /**
   * Reads the ssh config again for `specs` without holding up other operations; each
   * tunnel still configured as it was takes the answer unless a newer read got there first.
   */
  private rereadInBackground(specs: readonly TunnelSpec[], reason: string): void {
    if (specs.length > 0) this.log({ event: 'ssh_config_reread', reason, tunnels: specs.length });
    void this.hosts
      .resolve(specs)
      .then((r) => {
        if (this.shutdownPromise !== null) return;
        for (const spec of specs) {
          if (this.runners.has(spec.hash) && this.hosts.claim(spec.hash, r.round)) this.replan(spec.hash, r, spec);
        }
      })
      .catch((e: unknown) => this.log({ event: 'ssh_config_refresh_failed', error: String(e) }));
  }

  /** A new plan for a tunnel left running: used by its next spawn; a retrying tunnel tries at once. */
  private replan(hash: string, r: Resolution, spec: TunnelSpec): void {
    const runner = this.runners.get(hash);
    if (runner === undefined) return;
    const plan: TunnelPlan = buildPlan(spec, this.planContext, r.info(spec));
    const before = JSON.stringify(runner.currentPlan);
    runner.setPlan(plan);
    if (JSON.stringify(plan) === before) return;
    this.log({ event: 'ssh_config_applied', hash });
    // Its backoff was probing what may be the old endpoint: try the new one now.
    if (runner.status().status === 'RETRYING') runner.start({ restart: false });
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

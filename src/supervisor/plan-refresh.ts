// The runners' plans kept in step with the user's ssh config: the watch on its files,
// the cached ssh -G answers (host-views.ts), a fresh read for an explicit start, and
// reads in the background after a reload or an edit, each tunnel taking the newest.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TunnelSpec } from '../tunnel/spec.js';
import { sshConfigReader } from '../ssh-config/read.js';
import { userConfigFiles } from '../ssh-config/daemon-config.js';
import { watchSshConfig, type SshConfigWatcher } from '../ssh-config/watch.js';
import { HostViews, SSH_G_CONCURRENCY, type Resolution } from './plan/host-views.js';
import { buildPlan, type PlanContext } from './plan/plan.js';
import type { Runner, TunnelPlan } from './tunnel/tunnel-runner.js';
import type { DaemonSshConfigFile } from './plan/ssh-config-file.js';

export interface PlanRefreshDeps {
  sshBin: string;
  /** The user's ssh config (null: ssh's default). */
  sshConfigPath: string | null;
  daemonSshConfig: DaemonSshConfigFile;
  planContext: PlanContext;
  /** The supervisor's runners, by hash, as they are now. */
  runners: ReadonlyMap<string, Runner>;
  /** The supervisor is shutting down: answers that arrive then are dropped. */
  closed(): boolean;
  log(entry: Record<string, unknown>): void;
}

export class PlanRefresh {
  private readonly watcher: SshConfigWatcher;
  readonly hosts: HostViews;

  constructor(private readonly d: PlanRefreshDeps) {
    const specs = () => [...d.runners.values()].map((r) => r.spec);
    this.watcher = watchSshConfig(
      () => {
        this.hosts.invalidate();
        this.rereadInBackground(specs(), 'ssh config changed');
      },
      (e) => d.log({ event: 'ssh_config_watch_error', error: e.message }),
    );
    this.hosts = new HostViews(
      sshConfigReader(d.sshBin, d.sshConfigPath),
      this.watcher,
      userConfigFiles(d.sshConfigPath).map((f) => (f.startsWith('~/') ? join(homedir(), f.slice(2)) : f)),
      specs,
      d.log,
      SSH_G_CONCURRENCY,
      // Written before the round's answers are used, so a hop's ssh finds its own block.
      (hops) => d.daemonSshConfig.write(hops),
    );
  }

  planOf(spec: TunnelSpec, r: Resolution): TunnelPlan {
    return buildPlan(spec, this.d.planContext, r.info(spec));
  }

  /** An explicit start or restart uses what the ssh config says now. */
  async rereadFor(runner: Runner): Promise<void> {
    const spec = runner.spec;
    const r = await this.hosts.resolve([spec]);
    if (this.hosts.claim(spec.hash, r.round)) runner.setPlan(this.planOf(spec, r));
  }

  /**
   * Reads the ssh config again for `specs` without holding up other operations; each
   * tunnel still configured as it was takes the answer unless a newer read got there first.
   * `delayMs` puts the read off: after a reload, its ssh -G processes and the new plans
   * of every tunnel would otherwise take the two cores while the changed tunnels'
   * forwards are added and announced, and what it finds only affects probes and next
   * spawns.
   */
  rereadInBackground(specs: readonly TunnelSpec[], reason: string, delayMs = 0): void {
    if (delayMs > 0) {
      setTimeout(() => {
        if (!this.d.closed()) this.rereadInBackground(specs, reason);
      }, delayMs).unref();
      return;
    }
    if (specs.length > 0) this.d.log({ event: 'ssh_config_reread', reason, tunnels: specs.length });
    void this.hosts
      .resolve(specs)
      .then((r) => {
        if (this.d.closed()) return;
        for (const spec of specs) {
          if (this.d.runners.has(spec.hash) && this.hosts.claim(spec.hash, r.round)) this.replan(spec.hash, r, spec);
        }
      })
      .catch((e: unknown) => this.d.log({ event: 'ssh_config_refresh_failed', error: String(e) }));
  }

  close(): Promise<void> {
    return this.watcher.close();
  }

  /** A new plan for a tunnel left running: used by its next spawn; a retrying tunnel tries at once. */
  private replan(hash: string, r: Resolution, spec: TunnelSpec): void {
    const runner = this.d.runners.get(hash);
    if (runner === undefined) return;
    const plan = this.planOf(spec, r);
    const before = JSON.stringify(runner.currentPlan);
    runner.setPlan(plan);
    if (JSON.stringify(plan) === before) return;
    this.d.log({ event: 'ssh_config_applied', hash });
    // Its backoff was probing what may be the old endpoint: try the new one now.
    if (runner.status().status === 'RETRYING') runner.start({ restart: false });
  }
}

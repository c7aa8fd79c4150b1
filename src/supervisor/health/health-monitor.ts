// One tunnel's health watcher while it is RUNNING: feeds the pure rules
// (tunnel/health.ts) with ssh's lines, the process state from the shared sweep
// (process-sweep.ts, every second), and the optional health_check; asks for a restart after `failures` failed checks
// in a row. Everything it runs is cancelled through one AbortController per run.
import { awaitsTick, initialHealth, observeHealth, type HealthModel, type HealthObservation } from '../../tunnel/health.js';
import type { HealthCheck } from '../../tunnel/spec.js';
import type { HealthRecord } from '../../tunnel/status.js';
import type { Clock } from '../clock.js';
import { runHealthCheck, type CheckTarget } from './health-check-run.js';
import type { OnProcessState } from '../process/process-sweep.js';

/** What one RUNNING period watches. */
export interface Watched {
  pid: number | null;
  flag: '-L' | '-R' | '-D';
  remoteBind: string | null;
  check: HealthCheck | null;
  /** Where a health_check connects (through the forward); null when the daemon cannot reach the listening side. */
  target: CheckTarget | null;
}

export interface HealthMonitorDeps {
  clock: Clock;
  /** The shared process check (ProcessSweep): reports a pid's state every second until unwatched. */
  processes: { watch(pid: number, onState: OnProcessState): () => void };
  /** Health changed: publish the status record. */
  onChange(): void;
  /** `failures` checks in a row failed: restart the tunnel. */
  onRestartDue(reason: string): void;
  note(text: string): void;
}

export class HealthMonitor {
  private model: HealthModel;
  private run: AbortController | null = null;
  /** The process was stopped at the last read; a check counts that as a failure. */
  private stopped = false;

  constructor(private readonly deps: HealthMonitorDeps) {
    this.model = initialHealth(deps.clock.now());
  }

  record(): HealthRecord {
    const h = this.model.health;
    return { state: h.state, reason: h.reason, since: new Date(h.since).toISOString() };
  }

  get watching(): boolean {
    return this.run !== null;
  }

  /** The forward is established: watch until down(). */
  up(w: Watched): void {
    this.stopWatching();
    const run = new AbortController();
    this.run = run;
    this.stopped = false;
    this.observe({ kind: 'established', flag: w.flag, remoteBind: w.remoteBind });
    if (w.pid !== null) this.watchProcess(w.pid, run.signal);
    if (w.check !== null) {
      if (w.target === null) {
        this.deps.note('health_check not run: the daemon cannot reach this forward\'s listening side (a -R forward bound to loopback on the server)');
      } else {
        void this.watchChecks(w.check, w.target, run.signal);
      }
    }
  }

  /** Not RUNNING any more. */
  down(): void {
    this.stopWatching();
    this.observe({ kind: 'down' });
  }

  line(line: string): void {
    if (this.run !== null) this.observe({ kind: 'line', line });
  }

  private stopWatching(): void {
    this.run?.abort();
    this.run = null;
  }

  private observe(o: HealthObservation): void {
    const before = this.model.health;
    this.model = observeHealth(this.model, o, this.deps.clock.now());
    if (this.model.health !== before) this.deps.onChange();
  }

  private watchProcess(pid: number, signal: AbortSignal): void {
    const unwatch = this.deps.processes.watch(pid, (state) => {
      if (signal.aborted) return;
      // Every second for every RUNNING tunnel: only what can change the model is told
      // to it (at 1000 tunnels, telling it everything each time cost most of the idle CPU).
      const stopped = state === 'T' || state === 't';
      if (stopped !== this.stopped) {
        this.stopped = stopped;
        this.observe({ kind: 'process', stopped });
      }
      if (awaitsTick(this.model)) this.observe({ kind: 'tick' });
    });
    signal.addEventListener('abort', unwatch, { once: true });
  }

  private async watchChecks(check: HealthCheck, target: CheckTarget, signal: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    let failed = 0;
    while (await clock.sleep(check.interval * 1000, signal)) {
      const result = this.stopped ? { ok: false, detail: 'the ssh process is stopped' } : await runHealthCheck(check, target, signal);
      if (signal.aborted) return;
      this.observe({ kind: 'check', ok: result.ok, detail: result.detail });
      failed = result.ok ? 0 : failed + 1;
      if (failed >= check.failures) {
        const reason = `health check failed ${failed} times in a row (${result.detail})`;
        this.deps.note(`${reason}: restarting`);
        this.stopWatching();
        this.deps.onRestartDue(reason);
        return;
      }
    }
  }
}

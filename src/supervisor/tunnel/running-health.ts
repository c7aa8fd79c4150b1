// The runner's health watch (health-monitor.ts) over RUNNING periods: one watch per
// attempt, started as the phase enters RUNNING and ended as it leaves, and fed only
// the lines of the attempt it watches.
import type { HealthRecord } from '../../tunnel/status.js';
import type { Clock } from '../clock.js';
import { HealthMonitor } from '../health/health-monitor.js';
import type { Phase } from './tunnel-phase.js';
import type { ProcessSweep } from '../process/process-sweep.js';
import type { TunnelPlan } from '../plan/tunnel-plan.js';

export interface RunningHealthDeps {
  clock: Clock;
  processes: ProcessSweep;
  /** Health changed: publish the status record. */
  announce(): void;
  restart(): void;
  note(text: string): void;
}

export class RunningHealth {
  private readonly monitor: HealthMonitor;
  /** The attempt whose RUNNING period the monitor watches. */
  private watchedAttempt: number | null = null;
  private quiet = false;

  constructor(deps: RunningHealthDeps) {
    this.monitor = new HealthMonitor({
      clock: deps.clock,
      processes: deps.processes,
      // Inside a transition the lifecycle's own announcement follows.
      onChange: () => {
        if (!this.quiet) deps.announce();
      },
      onRestartDue: () => deps.restart(),
      note: (text) => deps.note(text),
    });
  }

  record(): HealthRecord {
    return this.monitor.record();
  }

  /** One of ssh's lines of `attempt`: read only while that attempt is the one watched. */
  line(attempt: number, line: string): void {
    if (this.watchedAttempt === attempt) this.monitor.line(line);
  }

  /** Starts or ends the watch as `phase` enters or leaves RUNNING (one watch per attempt). */
  follow(phase: Phase, plan: TunnelPlan, announce: boolean): void {
    const p = phase;
    this.quiet = !announce;
    try {
      if (p.id === 'running') {
        if (this.watchedAttempt === p.attempt) return;
        this.watchedAttempt = p.attempt;
        this.monitor.up({ pid: p.pid, flag: plan.flag, remoteBind: plan.remoteBind, check: plan.spec.health_check ?? null, target: plan.checkTarget });
      } else if (this.watchedAttempt !== null) {
        this.watchedAttempt = null;
        this.monitor.down();
      }
    } finally {
      this.quiet = false;
    }
  }
}

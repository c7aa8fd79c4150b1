// What a tunnel's runner (runner.ts) is given: the clock, the ways to spawn ssh, the
// host's spawn spacing, the shared connections and process sweep, and where its status
// and lines go. Its own file, so that the attempts (own-attempt.ts, shared-attempt.ts)
// and the supervisor's wiring (supervisor-deps.ts) need not import the runner.
import type { StatusRecord } from '../../tunnel/status.js';
import type { BackoffPolicy } from '../backoff.js';
import type { Clock } from '../clock.js';
import type { ConnectionPool } from '../connection/connection-pool.js';
import type { Probe } from '../health/probe.js';
import type { ProcessSweep } from '../process/process-sweep.js';
import type { SpawnPty } from '../process/pty-process.js';
import type { SpawnSpacer } from '../spacing.js';
import type { SpawnSsh } from '../process/ssh-process.js';

export interface RunnerDeps {
  clock: Clock;
  spawn: SpawnSsh;
  /** Spawns ssh in a pseudo-terminal, where a person logs in (interactive tunnels, SPEC §13). */
  spawnPty: SpawnPty;
  probe: Probe;
  spacer: SpawnSpacer;
  /** The shared connections (SPEC §14) that carry the forwards of tunnels whose plan says so. */
  connections: ConnectionPool;
  /** The one process check for every RUNNING tunnel's ssh. */
  processes: ProcessSweep;
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
  /** Every line ssh writes, as it comes: where a watcher such as a health check reads channel errors. */
  onLine?(hash: string, line: string): void;
  log(entry: Record<string, unknown>): void;
}

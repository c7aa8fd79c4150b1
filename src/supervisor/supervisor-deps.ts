// The supervisor's timings and what every runner and shared connection runs with: the
// real ssh, probes, one spawn spacer for logins, one pool of shared connections.
import type { StatusRecord } from '../tunnel/status.js';
import { DEFAULT_BACKOFF } from './backoff.js';
import type { Clock } from './clock.js';
import { ConnectionPool } from './connection/connection-pool.js';
import { execaControl } from './connection/control-command.js';
import { tcpProbe } from './health/probe.js';
import { ProcessSweep, readProcessState } from './process/process-sweep.js';
import type { SpawnPty } from './process/pty-process.js';
import type { RunnerDeps } from './tunnel/tunnel-runner-deps.js';
import { SpawnSpacer } from './spacing.js';
import { execaSpawn } from './process/ssh-process.js';

export const DEFAULTS = {
  // SIGTERM → SIGKILL.
  graceMs: 3_000,
  // Faults no probe watches (a remote port taken, a dropped connection) are retried at
  // least this often, so their end is noticed within the 5 s recovery bound.
  unprobedCapMs: 4_000,
  probeIntervalMs: 250,
  spawnGapMs: 100,
  // Below sshd's default MaxStartups start (10), leaving room for other clients.
  maxLoginsInFlight: 4,
  logLines: 200,
  // A shared connection's login: ConnectTimeout (10 s by default) and a margin.
  connectionStartTimeoutMs: 20_000,
};

export interface DepsInput {
  clock: Clock;
  registry: RunnerDeps['registry'];
  graceMs: number;
  log(entry: Record<string, unknown>): void;
  onChange(record: StatusRecord): void;
  spawnPty: SpawnPty;
  onLine?(hash: string, line: string): void;
}

/** Runner deps, with the shared connections' pool among them: both pace their logins with one spacer. */
export function runnerDeps(input: DepsInput): RunnerDeps {
  const { clock, registry, graceMs, log } = input;
  const spacer = new SpawnSpacer(clock, DEFAULTS.spawnGapMs, DEFAULTS.maxLoginsInFlight);
  const connections = new ConnectionPool({
    clock,
    spawn: execaSpawn,
    spawnPty: input.spawnPty,
    control: execaControl,
    probe: tcpProbe,
    spacer,
    registry,
    rules: { policy: DEFAULT_BACKOFF, unprobedCapMs: DEFAULTS.unprobedCapMs, probeIntervalMs: DEFAULTS.probeIntervalMs, startTimeoutMs: DEFAULTS.connectionStartTimeoutMs },
    graceMs,
    processState: readProcessState,
    log,
  });
  return {
    clock,
    spawn: execaSpawn,
    spawnPty: input.spawnPty,
    probe: tcpProbe,
    spacer,
    connections,
    processes: new ProcessSweep(clock),
    registry,
    policy: DEFAULT_BACKOFF,
    unprobedCapMs: DEFAULTS.unprobedCapMs,
    probeIntervalMs: DEFAULTS.probeIntervalMs,
    graceMs,
    logLines: DEFAULTS.logLines,
    onChange: input.onChange,
    ...(input.onLine !== undefined ? { onLine: input.onLine } : {}),
    log,
  };
}

// The vocabulary of a shared connection's runner (connection.ts) and its parts
// (connection-master.ts, forward-queue.ts, connection-pool.ts) and of the tunnels that
// ask it for forwards: what it runs, what it is given, and what a forward tells its
// tunnel. Types only, so that the parts import this file and never the runner.
import type { Failure } from '../process/ssh-exit-classify.js';
import type { Clock } from '../clock.js';
import type { RunControl } from './control-command.js';
import type { Probe } from '../health/probe.js';
import type { SpawnSpacer } from '../spacing.js';
import type { SpawnSsh } from '../process/ssh-process.js';
import type { SpawnPty } from '../process/pty-process.js';
import type { ConnectionRules } from './connection-phase.js';

/** How a forward on a shared connection ended. */
export type ForwardEnd =
  | { kind: 'cancelled' }
  /** `byConnection`: the connection is down (lost, backing off): its backoff, not the tunnel's, tries again. */
  | { kind: 'failed'; failure: Failure; code: number | null; signal: string | null; byConnection: boolean };

/**
 * What a forward tells its tunnel, synchronously, so that a tunnel has left RUNNING
 * before its connection announces that it is down.
 */
export interface ForwardEvents {
  /** A line of the master's about this forward's channels, or about the connection. */
  line(line: string): void;
  /** The master accepted it; `pid` is the master's. */
  added(pid: number): void;
  /** Gone: cancelled, refused, or its connection ended. Nothing follows. */
  ended(end: ForwardEnd): void;
}

/** A tunnel's forward on a connection. */
export interface ForwardHandle {
  /** Cancels it (`-O cancel` if it was added); `ended` follows once it is gone. */
  cancel(): void;
  /** Cancels it and ends it with this failure (a cause seen on its connections, such as forwarding refused). */
  fail(failure: Failure): void;
}

export interface ConnectionDeps {
  clock: Clock;
  spawn: SpawnSsh;
  /** Spawns an interactive connection's master in a pseudo-terminal. */
  spawnPty: SpawnPty;
  control: RunControl;
  probe: Probe;
  spacer: SpawnSpacer;
  registry: { add(pid: number, argv: string[]): void; remove(pid: number): void };
  rules: ConnectionRules;
  graceMs: number;
  /** The state letter of a process (`T`: stopped), null when unknown; read before each `-O` run. */
  processState(pid: number): string | null;
  log(entry: Record<string, unknown>): void;
}

/** What a connection runs: the master's argv, its socket, where to probe while its server is down. */
export interface ConnectionPlan {
  id: string;
  file: string;
  args: string[];
  controlPath: string;
  spacingKey: string;
  sshEndpoint: { host: string; port: number } | null;
  /** Logs in through a person: the master runs in a pseudo-terminal (its args carry `-E`, no BatchMode). */
  interactive: boolean;
}

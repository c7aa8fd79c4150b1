import type { TunnelSpec } from '../tunnel/spec.js';
import type { Result } from '../kernel/result.js';
import type { StatusRecord } from '../tunnel/status.js';
import type { DirectionMode } from '../tunnel/spec.js';
import type { SpawnPty } from './process/pty-process.js';

/** What applying a new tunnel list changed, by hash. */
export interface ApplyReport {
  added: string[];
  removed: string[];
  unchanged: string[];
  /** Same hash but other ssh_options: restarted with the new options (not in `unchanged`). */
  changed?: string[];
}

export type SupervisorEvent = { type: 'status'; record: StatusRecord };

/** How a person's time at an interactive tunnel's login ended (SPEC §13). */
export type LoginOutcome =
  /** The forward is established. */
  | { status: 'RUNNING'; message: null }
  /** FAILED (wrong code, refused), STOPPED (stopped meanwhile), or AUTH_REQUIRED: this ssh ended without a login (connection closed, server unreachable). */
  | { status: 'FAILED' | 'STOPPED' | 'AUTH_REQUIRED'; message: string };

/** Where an attached terminal's output goes. */
export interface TerminalSink {
  /** What ssh shows on its terminal (prompts, banners). */
  output(text: string): void;
  /** The login is over, one way or the other; called once, and nothing follows. */
  end(outcome: LoginOutcome): void;
}

/** A person's terminal attached to an interactive tunnel's ssh. */
export interface Attachment {
  /** Keystrokes for ssh; never logged. */
  input(data: string): void;
  resize(cols: number, rows: number): void;
  /** Lets go of the terminal; the login goes on and another terminal may attach. Idempotent. */
  detach(): void;
}

/** Why a terminal could not attach. */
export interface AttachRefusal {
  reason: 'busy' | 'not_interactive' | 'running';
  message: string;
}

/**
 * The supervisor as the rest of the daemon sees it: one runner per tunnel, driven by
 * the config (apply) and by the user (start/stop, which set the persisted desired state).
 * Unknown hashes are the caller's business: it resolves prefixes first.
 */
export interface SupervisorApi {
  /** Diff by hash and apply: start added (unless stopped by hand), stop removed, leave the rest alone. */
  apply(tunnels: readonly TunnelSpec[]): Promise<ApplyReport>;
  statuses(): StatusRecord[];
  /** The tunnels supervised now (during a reload, already the new ones it has taken on), in the config's order. */
  tunnels(): TunnelSpec[];
  status(hash: string): StatusRecord | undefined;
  /** Sets desired=started and starts it now (also out of FAILED). Resolves once the child is spawned or scheduled. */
  start(hash: string): Promise<StatusRecord>;
  /**
   * Sets desired=started and replaces the ssh child with a fresh one without passing
   * through STOPPED; starts a tunnel that has none. For `POST /restart/<hash>` and a
   * failing health check. Resolves once the old child is gone.
   */
  restart(hash: string): Promise<StatusRecord>;
  /** Sets desired=stopped, ends the child (TERM, then KILL) and waits for it to be gone. */
  stop(hash: string): Promise<StatusRecord>;
  startAll(): Promise<StatusRecord[]>;
  stopAll(): Promise<StatusRecord[]>;
  /** Recent ssh output lines (ring buffer that survives a stop). */
  logs(hash: string): string[] | undefined;
  /**
   * Attaches a person's terminal to an interactive tunnel's login: starts the tunnel
   * if it is stopped or failed, and starts a fresh ssh when the one waiting is gone or
   * its prompt is too old. One terminal at a time.
   */
  attach(hash: string, sink: TerminalSink): Promise<Result<Attachment, AttachRefusal>>;
  /** When the tunnel's last log line arrived (ISO 8601); null before any. */
  logsModified(hash: string): string | null;
  /** Subscribe to every state change; returns the unsubscribe function. */
  subscribe(listener: (e: SupervisorEvent) => void): () => void;
  /** Ends every child and waits; idempotent. */
  shutdown(): Promise<void>;
}

/** What createSupervisor (supervisor-start.ts) is given. */
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

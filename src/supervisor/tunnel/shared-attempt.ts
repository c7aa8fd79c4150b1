// One attempt of a tunnel on a shared connection (SPEC §14), seen by the runner as an
// ssh child of its own: its forward is asked for (the tunnel stays STARTING, pid null,
// while the master logs in), added (spawned with the master's pid, then established),
// and it ends when cancelled (a stop: -O cancel) or when the connection ends — told
// synchronously, so that the tunnel leaves RUNNING before the connection says it is down.
import { forwardingRefusedLine, type Failure } from '../process/ssh-exit-classify.js';
import type { ConnectionRunner } from '../connection/connection.js';
import type { ForwardEnd, ForwardHandle } from '../connection/connection-types.js';
import type { ConnectionPool } from '../connection/connection-pool.js';
import { probeTargetOf } from './attempt-end.js';
import type { AttemptHost } from './attempt-host.js';
import type { SharedForward } from '../plan/tunnel-plan.js';
import type { ChildExit, SshChild } from '../process/ssh-process.js';

export interface SharedAttemptHooks {
  /** A line of the master's about this forward or the connection; a failure returned ends the forward with it. */
  line(line: string): Failure | null;
  note(text: string): void;
  /** The attempt's stand-in child, whose kill cancels the forward. */
  started(child: SshChild): void;
  added(pid: number): void;
  /** `byConnection`: its connection is down, and its backoff owns the retry. */
  ended(exit: { code: number | null; signal: string | null }, failure: Failure, byConnection: boolean): void;
}

const CANCELLED: Failure = { reason: 'signal', retry: true, probe: null, message: 'the forward was cancelled' };

/** Resolves once the forward is gone and its end went through `hooks.ended`. */
export function runSharedAttempt(conn: ConnectionRunner, shared: SharedForward, signal: AbortSignal, hooks: SharedAttemptHooks): Promise<void> {
  const { flag, value } = shared.forward;
  return new Promise<void>((resolve) => {
    let handle: ForwardHandle | null = null;
    let resolveExit!: (exit: ChildExit) => void;
    const exited = new Promise<ChildExit>((r) => (resolveExit = r));
    // A stop before the forward is added only cancels the attempt's token.
    const onAbort = () => handle?.cancel();
    hooks.started({ pid: null, exited, kill: () => handle?.cancel() });
    signal.addEventListener('abort', onAbort, { once: true });
    handle = conn.open(shared.forward, shared.port, {
      line: (line) => {
        const failure = hooks.line(line);
        if (failure !== null) handle?.fail(failure);
      },
      added: (pid) => {
        if (signal.aborted) return;
        hooks.note(`forward ${flag} ${value} added to shared connection ${conn.id} (ssh pid ${pid})`);
        hooks.added(pid);
      },
      ended: (end) => {
        signal.removeEventListener('abort', onAbort);
        if (end.kind === 'failed') hooks.note(`forward ${flag} ${value} ended: ${end.failure.message}`);
        const exit = exitOf(end);
        resolveExit({ ...exit, spawnError: null });
        hooks.ended(exit, end.kind === 'failed' ? end.failure : CANCELLED, end.kind === 'failed' && end.byConnection);
        resolve();
      },
    });
    if (signal.aborted) handle.cancel();
  });
}

function exitOf(end: ForwardEnd): { code: number | null; signal: string | null } {
  return end.kind === 'failed' ? { code: end.code, signal: end.signal } : { code: 0, signal: null };
}

/** The runner's side of runSharedAttempt: the forward's lines, start and end go to its lifecycle (attempt-host.ts). */
export async function runShared(host: AttemptHost, connections: ConnectionPool, attempt: number, shared: SharedForward, signal: AbortSignal): Promise<void> {
  const plan = host.plan();
  const conn = connections.get(shared.connection);
  let resolveGone!: () => void;
  const gone = new Promise<void>((r) => (resolveGone = r));
  await runSharedAttempt(conn, shared, signal, {
    line: (line) => {
      host.line(attempt, line);
      // As for an ssh of its own (own-attempt.ts): every -L channel refused is a cause no retry fixes.
      return plan.flag !== '-R' ? forwardingRefusedLine(line) : null;
    },
    note: (text) => host.note(text),
    started: (child) => host.children.set(attempt, { child, gone }),
    added: (pid) => {
      host.dispatch({ type: 'spawned', attempt, pid });
      host.dispatch({ type: 'established', attempt });
    },
    ended: (exit, failure, byConnection) => {
      host.children.delete(attempt);
      host.dispatch({ type: 'exited', attempt, exit, failure, probe: probeTargetOf(failure, plan), byConnection });
    },
  });
  resolveGone();
}

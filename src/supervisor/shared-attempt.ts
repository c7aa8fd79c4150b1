// One attempt of a tunnel on a shared connection (SPEC §14), seen by the runner as an
// ssh child of its own: its forward is asked for (the tunnel stays STARTING, pid null,
// while the master logs in), added (spawned with the master's pid, then established),
// and it ends when cancelled (a stop: -O cancel) or when the connection ends.
import type { Failure } from './classify.js';
import type { ConnectionRunner, ForwardEnd } from './connection.js';
import type { SharedForward } from './runner.js';
import type { ChildExit, SshChild } from './ssh-process.js';

export interface SharedAttemptHooks {
  /** A line of the master's about this forward or the connection; a failure returned ends the forward with it. */
  line(line: string): Failure | null;
  note(text: string): void;
  /** The attempt's stand-in child, whose kill cancels the forward. */
  started(child: SshChild): void;
  added(pid: number): void;
  ended(exit: { code: number | null; signal: string | null }, failure: Failure): void;
}

const CANCELLED: Failure = { reason: 'signal', retry: true, probe: null, message: 'the forward was cancelled' };

export async function runSharedAttempt(conn: ConnectionRunner, shared: SharedForward, signal: AbortSignal, hooks: SharedAttemptHooks): Promise<void> {
  let fail = (_: Failure) => {};
  const handle = conn.open(shared.forward, shared.port, (line) => {
    const failure = hooks.line(line);
    if (failure !== null) fail(failure);
  });
  fail = (failure) => handle.fail(failure);
  const exited = handle.ended.then((end): ChildExit => ({ ...exitOf(end), spawnError: null }));
  hooks.started({ pid: null, exited, kill: () => handle.cancel() });
  // A stop before the forward is added only cancels the attempt's token.
  const onAbort = () => handle.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  void handle.added.then((pid) => {
    if (pid === null || signal.aborted) return;
    hooks.note(`forward ${shared.forward.flag} ${shared.forward.value} added to shared connection ${conn.id} (ssh pid ${pid})`);
    hooks.added(pid);
  });
  const end = await handle.ended;
  signal.removeEventListener('abort', onAbort);
  if (end.kind === 'failed') hooks.note(`forward ${shared.forward.flag} ${shared.forward.value} ended: ${end.failure.message}`);
  hooks.ended(exitOf(end), end.kind === 'failed' ? end.failure : CANCELLED);
}

function exitOf(end: ForwardEnd): { code: number | null; signal: string | null } {
  return end.kind === 'failed' ? { code: end.code, signal: end.signal } : { code: 0, signal: null };
}

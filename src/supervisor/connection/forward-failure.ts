// Why the master refused a forward (`ssh -O forward` failed): the client's words and the
// master's own lines that name the forward's port, read as any ssh exit is
// (ssh-exit-classify.ts). Its own file because the queue (forward-queue.ts) only runs
// the `-O` work; this is how its outcome reads. Pure.
import { classifyExit, type Failure } from '../process/ssh-exit-classify.js';
import type { ControlForward } from './control-command.js';

/** The failure of forward `fwd` (listening on `port`), from the master's recent lines and the `-O` client's. */
export function forwardFailure(fwd: ControlForward, port: number, masterLines: readonly string[], clientLines: readonly string[]): Failure {
  const named = new RegExp(`[:\\s]${port}\\b`);
  const master = masterLines.filter((l) => named.test(l) || /Server has disabled port forwarding/.test(l));
  const flag = fwd.flag === '-R' ? '-R' : '-L';
  const remoteBind = flag === '-R' ? (/^(\[[^\]]*\]|[^:]*):/.exec(fwd.value)?.[1]?.replace(/^\[|\]$/g, '') ?? null) : null;
  // ssh's function names say nothing to a user: "mux_client_forward: forwarding request failed: X" is X.
  const plain = [...master.slice(-5), ...clientLines].map((l) => l.replace(/^mux_\w+: (forwarding request failed: )?/, ''));
  return classifyExit({ code: 255, signal: null, lines: plain, flag, remoteBind });
}

// How an attempt's end reads: the failure its exit and lines mean (classify.ts), and
// what would watch that fault's end (a probe of the server's port, or of our bind).
import { unreachable } from '../../kernel/unreachable.js';
import { classifyExit, spawnFailure, type Failure } from '../process/ssh-exit-classify.js';
import type { ProbeTarget } from '../health/probe.js';
import type { ChildExit } from '../process/ssh-process.js';
import type { TunnelPlan } from '../plan/tunnel-plan.js';

/** The failure of an ssh child that ended without being asked to. */
export function explainExit(exit: ChildExit, lines: readonly string[], plan: TunnelPlan): Failure {
  if (exit.spawnError !== null) return spawnFailure(exit.spawnError);
  return classifyExit({ code: exit.code, signal: exit.signal, lines, flag: plan.flag, remoteBind: plan.remoteBind });
}

/** What a backoff after this failure watches; null: nothing to watch, wait it out. */
export function probeTargetOf(failure: Failure, plan: TunnelPlan): ProbeTarget | null {
  switch (failure.probe) {
    case 'ssh-port':
      return plan.sshEndpoint !== null ? { kind: 'ssh-port', ...plan.sshEndpoint } : null;
    case 'local-bind':
      return plan.localBind !== null ? { kind: 'local-bind', ...plan.localBind } : null;
    case null:
      return null;
    default:
      return unreachable(failure.probe, 'probe');
  }
}

// One spawn of a shared connection's master (SPEC §14): wait for the host's spawn slot
// (a batch login), remove a stale control socket, start `ssh -M -N` — in a
// pseudo-terminal, shown to the person at the connection's login slot, for an
// interactive one (SPEC §13) — and report its lines, readiness and end to the
// connection's lifecycle (connection.ts).
import { rmSync } from 'node:fs';
import { classifyExit, spawnFailure } from '../process/ssh-exit-classify.js';
import type { ConnectionEvent } from './connection-phase.js';
import type { ConnectionDeps, ConnectionPlan } from './connection-types.js';
import type { LoginSlot } from '../process/login-slot.js';
import type { ProbeTarget } from '../health/probe.js';
import type { LoginTerminal } from '../process/pty-process.js';
import { LineRing } from '../process/ring.js';
import { isLoggedInLine } from '../process/ssh-output.js';
import type { SshChild } from '../process/ssh-process.js';

/** What one spawn of the master needs from its connection's runner. */
export interface MasterHost {
  deps: Pick<ConnectionDeps, 'spacer' | 'registry' | 'clock' | 'spawn' | 'spawnPty'>;
  /** The plan of the moment (it may change while the spawn waits for its slot). */
  plan(): ConnectionPlan;
  /** The person's terminal on an interactive connection's login. */
  slot: LoginSlot;
  /** The new master's lines, kept to explain its end and a forward's failure. */
  started(lines: LineRing): void;
  /** One of the master's lines, for the forwards it is about. */
  line(line: string): void;
  dispatch(ev: ConnectionEvent): void;
  /** Live masters by attempt; `gone` resolves once the exit went through the lifecycle. */
  readonly masters: Map<number, { child: SshChild; gone: Promise<void> }>;
}

// Lines of the master kept to explain its end and a forward's failure.
export const MASTER_LINES = 200;

/** One spawn of the master; resolves once its exit went through the lifecycle. */
export async function runMaster(host: MasterHost, attempt: number, signal: AbortSignal): Promise<void> {
  const { spacer, registry, clock } = host.deps;
  // A login that waits for a person must not hold a spawn slot other logins to the host need.
  const slot = host.plan().interactive ? () => undefined : await spacer.acquire(host.plan().spacingKey, signal);
  if (slot === null) return;
  if (signal.aborted) {
    slot();
    return;
  }
  signal.addEventListener('abort', slot, { once: true });
  const plan = host.plan();
  // A socket left behind would make this master run without sharing, silently.
  rmSync(plan.controlPath, { force: true });
  const lines = new LineRing(MASTER_LINES);
  host.started(lines);
  const onLine = (line: string) => {
    lines.push(line, clock.now());
    host.line(line);
    if (isLoggedInLine(line)) slot();
    // Printed once the control socket listens and the session loop runs.
    if (line.startsWith('debug1: Entering interactive session.')) {
      slot();
      host.dispatch({ type: 'ready', attempt });
    }
  };
  let child: SshChild;
  let terminal: LoginTerminal | null = null;
  if (plan.interactive) {
    const pty = host.deps.spawnPty(plan.file, plan.args, onLine);
    // The person's terminal shows this master's login from now on.
    terminal = pty.terminal;
    host.slot.bind(terminal);
    child = pty;
  } else {
    child = host.deps.spawn(plan.file, plan.args, onLine);
  }
  let resolveGone!: () => void;
  host.masters.set(attempt, { child, gone: new Promise<void>((r) => (resolveGone = r)) });
  if (child.pid !== null) registry.add(child.pid, [plan.file, ...plan.args]);
  host.dispatch({ type: 'spawned', attempt, pid: child.pid });
  const exit = await child.exited;
  slot();
  if (terminal !== null) host.slot.release(terminal);
  host.masters.delete(attempt);
  if (child.pid !== null) registry.remove(child.pid);
  rmSync(plan.controlPath, { force: true });
  const failure =
    exit.spawnError !== null ? spawnFailure(exit.spawnError) : classifyExit({ code: exit.code, signal: exit.signal, lines: lines.toArray(), flag: '-L', remoteBind: null });
  // Where the server is now: the ssh config may have moved it since this master started.
  const endpoint = host.plan().sshEndpoint;
  const probe: ProbeTarget | null = failure.probe === 'ssh-port' && endpoint !== null ? { kind: 'ssh-port', ...endpoint } : null;
  host.dispatch({ type: 'exited', attempt, exit: { code: exit.code, signal: exit.signal }, failure, probe });
  resolveGone();
}

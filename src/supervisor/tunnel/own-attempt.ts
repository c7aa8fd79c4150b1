// One attempt of a tunnel with an ssh of its own: wait for the host's spawn slot
// (batch), spawn ssh (in a pseudo-terminal for a person's login), report its lines and
// its end to the runner's lifecycle (attempt-host.ts).
import { forwardingRefusedLine } from '../process/ssh-exit-classify.js';
import { explainExit, probeTargetOf } from './attempt-end.js';
import type { AttemptHost } from './attempt-host.js';
import type { SpawnMode } from './tunnel-phase.js';
import type { LoginSlot } from '../process/login-slot.js';
import type { LoginTerminal, SpawnPty } from '../process/pty-process.js';
import { LineRing } from '../process/ring.js';
import type { SpawnSpacer } from '../spacing.js';
import { isEstablishedLine, isLoggedInLine } from '../process/ssh-output.js';
import type { SshChild, SpawnSsh } from '../process/ssh-process.js';

export interface OwnAttemptDeps {
  spawn: SpawnSsh;
  spawnPty: SpawnPty;
  spacer: SpawnSpacer;
  /** Records live children's pids in the state dir. */
  registry: { add(pid: number, argv: string[]): void; remove(pid: number): void };
}

// Lines of one attempt kept for classifying its end; the banner of a changed host
// key, the longest message that matters, is about 20 lines.
const ATTEMPT_LINES = 100;

/** One spawn of ssh; resolves once its exit went through the lifecycle. `slot` is the person's terminal on a login. */
export async function runOwnAttempt(host: AttemptHost, slot: LoginSlot, deps: OwnAttemptDeps, attempt: number, mode: SpawnMode, signal: AbortSignal): Promise<void> {
  const { spacer, registry } = deps;
  let release = () => {};
  // A login that waits for a person must not hold a slot other tunnels to the host need.
  if (mode === 'batch') {
    const granted = await spacer.acquire(host.plan().spacingKey, signal);
    if (granted === null) return;
    // A stop can land between the slot's grant and this line: spawn nothing then.
    if (signal.aborted) {
      granted();
      return;
    }
    release = granted;
    // The host's slot is freed at login, or when the attempt ends without one.
    signal.addEventListener('abort', release, { once: true });
  }
  const plan = host.plan();
  const lines = new LineRing(ATTEMPT_LINES);
  const onLine = (line: string) => {
    lines.push(line);
    host.line(attempt, line);
    // sshd refusing every -L channel is a cause no retry fixes (SPEC §4), but ssh
    // would go on listening; ended here, its exit classifies as FAILED with the line.
    if (plan.flag !== '-R' && forwardingRefusedLine(line) !== null) host.children.get(attempt)?.child.kill('SIGTERM');
    if (isLoggedInLine(line)) release();
    if (isEstablishedLine(line, plan.flag)) {
      release();
      host.dispatch({ type: 'established', attempt });
    }
  };
  let child: SshChild;
  let terminal: LoginTerminal | null = null;
  if (mode === 'pty') {
    const pty = deps.spawnPty(plan.file, plan.args, onLine);
    // The person's terminal shows this ssh from now on (its prompt, whatever comes).
    terminal = pty.terminal;
    slot.bind(terminal);
    child = pty;
  } else {
    child = deps.spawn(plan.file, plan.args, onLine);
  }
  let resolveGone!: () => void;
  host.children.set(attempt, { child, gone: new Promise<void>((r) => (resolveGone = r)) });
  if (child.pid !== null) registry.add(child.pid, [plan.file, ...plan.args]);
  host.note(child.pid !== null ? `ssh started (pid ${child.pid})` : 'ssh could not be started');
  host.dispatch({ type: 'spawned', attempt, pid: child.pid });

  const exit = await child.exited;
  release();
  if (terminal !== null) slot.release(terminal);
  host.children.delete(attempt);
  if (child.pid !== null) registry.remove(child.pid);
  const failure = explainExit(exit, lines.toArray(), plan);
  host.dispatch({ type: 'exited', attempt, exit, failure, probe: probeTargetOf(failure, plan) });
  resolveGone();
}

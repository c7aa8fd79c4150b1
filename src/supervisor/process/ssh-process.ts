// One ssh child: spawned with execa (array argv, no shell), its stderr read line by
// line, its end reported as a value. `terminate` is the graceful stop.
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import type { Clock } from '../clock.js';

export interface ChildExit {
  code: number | null;
  signal: string | null;
  /** Set when the binary could not be run at all (ENOENT, EACCES). */
  spawnError: string | null;
}

export interface SshChild {
  /** Null when the process never started. */
  readonly pid: number | null;
  /** Resolves once the process is gone and its stderr is drained; never rejects. */
  readonly exited: Promise<ChildExit>;
  kill(signal: NodeJS.Signals): void;
}

export type SpawnSsh = (file: string, args: readonly string[], onLine: (line: string) => void) => SshChild;

export const execaSpawn: SpawnSsh = (file, args, onLine) => {
  const subprocess = execa(file, args, {
    reject: false,
    // Ends the child if the daemon exits without stopping it (signal-exit).
    cleanup: true,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
    buffer: false,
    // The runner's own terminate() escalates to SIGKILL after its grace period.
    forceKillAfterDelay: false,
  });
  if (subprocess.stderr) createInterface({ input: subprocess.stderr, crlfDelay: Infinity }).on('line', onLine);
  const exited = subprocess.then(
    (r): ChildExit => {
      const code = typeof r.exitCode === 'number' ? r.exitCode : null;
      const signal = r.signal ?? null;
      const spawnError = r.failed && code === null && signal === null ? (r.shortMessage ?? r.message ?? 'spawn failed') : null;
      return { code, signal, spawnError };
    },
    (e: unknown): ChildExit => ({ code: null, signal: null, spawnError: e instanceof Error ? e.message : String(e) }),
  );
  return {
    pid: subprocess.pid ?? null,
    exited,
    kill: (signal) => {
      subprocess.kill(signal);
    },
  };
};

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child is gone. */
export async function terminate(child: SshChild, graceMs: number, clock: Clock): Promise<ChildExit> {
  const escalation = new AbortController();
  child.kill('SIGTERM');
  // A stopped ssh (SIGSTOP, a frozen client) only acts on TERM once continued.
  child.kill('SIGCONT');
  void clock.sleep(graceMs, escalation.signal).then((elapsed) => {
    if (elapsed) child.kill('SIGKILL');
  });
  const exit = await child.exited;
  escalation.abort();
  return exit;
}

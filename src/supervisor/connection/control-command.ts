// One `ssh -O forward|cancel` on a master's control socket (OpenSSH's own client: the
// ssh binary stays the only SSH implementation). Runs are limited machine-wide, since
// each is a process, and report their exit and stderr as a value.
import { execa } from 'execa';
import { controlArgs } from '../../tunnel/ssh-args.js';

export interface ControlForward {
  flag: string;
  value: string;
}

export interface ControlOutcome {
  code: number | null;
  lines: string[];
  /** No answer within CONTROL_TIMEOUT_MS: the master is stopped or hung. */
  timedOut: boolean;
}

/** A run carries up to a few dozen forwards and takes well under a second; a master that does not answer in this long serves nobody. */
export const CONTROL_TIMEOUT_MS = 10_000;

export type RunControl = (sshBin: string, controlPath: string, op: 'forward' | 'cancel', forwards: readonly ControlForward[]) => Promise<ControlOutcome>;

// Each run is a short process; more at once only competes for the two cores.
const MAX_RUNNING = 6;
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

export const execaControl: RunControl = async (sshBin, controlPath, op, forwards) => {
  const release = await slot();
  try {
    const r = await execa(sshBin, controlArgs(controlPath, op, forwards), { reject: false, stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', cleanup: true, timeout: CONTROL_TIMEOUT_MS });
    const stderr = typeof r.stderr === 'string' ? r.stderr : '';
    return { code: typeof r.exitCode === 'number' ? r.exitCode : null, lines: stderr.split(/\r?\n/).filter((l) => l.trim() !== ''), timedOut: r.timedOut === true };
  } catch (e) {
    return { code: null, lines: [e instanceof Error ? e.message : String(e)], timedOut: false };
  } finally {
    release();
  }
};

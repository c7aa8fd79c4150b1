// The pids of our live ssh children, kept in the state dir so that a daemon started
// after a crash (even kill -9, which no exit handler survives) can end what its
// predecessor left running. Old children are never adopted: their stderr is gone.
import { readFileSync } from 'node:fs';
import type { Clock } from './clock.js';
import { readJson, writeFileAtomic } from './state-files.js';

interface Entry {
  pid: number;
  /** The full argv (binary first) it was started with: the proof a pid is still ours. */
  argv: string[];
}

export class ChildRegistry {
  private readonly entries = new Map<number, Entry>();

  constructor(private readonly path: string) {}

  add(pid: number, argv: string[]): void {
    this.entries.set(pid, { pid, argv });
    this.write();
  }

  remove(pid: number): void {
    if (this.entries.delete(pid)) this.write();
  }

  /** Starts the file empty (after the leftovers were ended). */
  reset(): void {
    this.entries.clear();
    this.write();
  }

  private write(): void {
    writeFileAtomic(this.path, `${JSON.stringify([...this.entries.values()])}\n`);
  }
}

function readEntries(path: string): Entry[] {
  const raw = readJson(path);
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (e): e is Entry =>
      typeof e === 'object' && e !== null && Number.isInteger((e as Entry).pid) && (e as Entry).pid > 1 &&
      Array.isArray((e as Entry).argv) && (e as Entry).argv.every((a) => typeof a === 'string'),
  );
}

/**
 * True while `pid` is a live process running exactly `argv`. A pid reused by another
 * program, a zombie (empty cmdline) or a gone process all answer false.
 */
export function runsArgv(pid: number, argv: readonly string[]): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return false;
  }
  const actual = cmdline.split('\0');
  if (actual[actual.length - 1] === '') actual.pop();
  return actual.length === argv.length && actual.every((a, i) => a === argv[i]);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

async function waitGone(entries: readonly Entry[], ms: number, clock: Clock): Promise<Entry[]> {
  const deadline = clock.now() + ms;
  const never = new AbortController().signal;
  for (;;) {
    const alive = entries.filter((e) => runsArgv(e.pid, e.argv));
    if (alive.length === 0 || clock.now() >= deadline) return alive;
    await clock.sleep(50, never);
  }
}

/**
 * Ends the ssh children a previous daemon recorded (TERM, then KILL after
 * `graceMs`) and waits until they are gone. `stuck` lists any that outlived SIGKILL
 * (uninterruptible sleep), which the caller can only report.
 */
export async function endLeftovers(path: string, graceMs: number, clock: Clock): Promise<{ ended: number[]; stuck: number[] }> {
  const ours = readEntries(path).filter((e) => runsArgv(e.pid, e.argv));
  for (const e of ours) signal(e.pid, 'SIGTERM');
  const stubborn = await waitGone(ours, graceMs, clock);
  for (const e of stubborn) signal(e.pid, 'SIGKILL');
  const left = await waitGone(stubborn, 5_000, clock);
  return { ended: ours.map((e) => e.pid), stuck: left.map((e) => e.pid) };
}

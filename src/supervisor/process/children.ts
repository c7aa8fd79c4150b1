// The pids of our live ssh children, kept in the state dir so that a daemon started
// after a crash (even kill -9, which no exit handler survives) can end what its
// predecessor left running. Old children are never adopted: their stderr is gone.
import { accessSync, appendFileSync, constants, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Clock } from '../clock.js';
import { writeFileAtomic } from '../state/state-files.js';

interface Entry {
  pid: number;
  /** The full argv (binary first) it was started with: the proof a pid is still ours. */
  argv: string[];
}

/** One line of the file: a child started, or a child gone. */
type Line = Entry | { pid: number; gone: true };

/** Below this many lines the file is never compacted: small files cost nothing to replay. */
const COMPACT_MIN_LINES = 64;

/**
 * The file is a log, one JSON line per change, appended synchronously before the
 * spawn's caller goes on: a start or exit costs one small write whatever the number of
 * tunnels (rewriting every pid with its argv on each change was quadratic at 1000
 * tunnels, and stalled both start and shutdown). No fsync: the guarantee is against a
 * crashed daemon, whose writes the page cache keeps; a machine crash ends the children
 * too. The log is rewritten compactly (atomically) once it holds more than twice the
 * live entries.
 */
export class ChildRegistry {
  private readonly entries = new Map<number, Entry>();
  private lines = 0;

  constructor(private readonly path: string) {}

  add(pid: number, argv: string[]): void {
    this.entries.set(pid, { pid, argv });
    this.append({ pid, argv });
  }

  remove(pid: number): void {
    if (this.entries.delete(pid)) this.append({ pid, gone: true });
  }

  /** Starts the file empty (after the leftovers were ended). */
  reset(): void {
    this.entries.clear();
    this.compact();
  }

  private append(line: Line): void {
    if (this.lines + 1 > Math.max(COMPACT_MIN_LINES, 2 * this.entries.size)) {
      this.compact();
      return;
    }
    appendFileSync(this.path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    this.lines++;
  }

  private compact(): void {
    const live = [...this.entries.values()];
    writeFileAtomic(this.path, live.map((e) => `${JSON.stringify(e)}\n`).join(''));
    this.lines = live.length;
  }
}

const isArgv = (a: unknown): a is string[] => Array.isArray(a) && a.every((x) => typeof x === 'string');

/**
 * The children a file records as live: its lines replayed in order (a line cut short
 * by a crash is skipped). A file of the earlier format, one JSON array, reads too.
 */
export function recordedChildren(path: string): Entry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const live = new Map<number, Entry>();
  const apply = (raw: unknown) => {
    if (typeof raw !== 'object' || raw === null) return;
    const { pid, argv, gone } = raw as { pid?: unknown; argv?: unknown; gone?: unknown };
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 1) return;
    if (gone === true) live.delete(pid);
    else if (isArgv(argv)) live.set(pid, { pid, argv });
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line) as unknown;
    } catch {
      continue;
    }
    if (Array.isArray(raw)) raw.forEach(apply);
    else apply(raw);
  }
  return [...live.values()];
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

/** Who may be signalled as a leftover: processes of this uid running this program (an absolute, resolved path). */
export interface LeftoverOwner {
  uid: number;
  /** The configured ssh as a real path; null when it cannot be found (then nothing is signalled). */
  program: string | null;
}

/**
 * The file `bin` names: itself when it has a slash, else the first executable of
 * that name on `path` (as execvp finds it), with links resolved; null when none.
 */
export function programPath(bin: string, path: string | undefined): string | null {
  const candidates = bin.includes('/') ? [resolve(bin)] : (path ?? '').split(delimiter).filter((d) => isAbsolute(d)).map((d) => join(d, bin));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return realpathSync(c);
    } catch {
      // Not this one.
    }
  }
  return null;
}

/** The real uid of a process, or null when it is gone. */
function uidOf(pid: number): number | null {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The program a process runs (its executable's path; a replaced binary reads "… (deleted)"), or null. */
function programOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/**
 * True when a recorded leftover may be signalled: it still runs its recorded argv,
 * as our uid, and its program is the configured ssh. A children file another account
 * wrote (or a pid reused by another user's or another program's process) names
 * nothing we end.
 */
export function isOurLeftover(e: Entry, owner: LeftoverOwner): boolean {
  return owner.program !== null && runsArgv(e.pid, e.argv) && uidOf(e.pid) === owner.uid && programOf(e.pid) === owner.program;
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
 * (uninterruptible sleep), which the caller can only report; `skipped`, the live
 * recorded processes left alone because they are not ours (isOurLeftover).
 */
export async function endLeftovers(path: string, graceMs: number, clock: Clock, owner: LeftoverOwner): Promise<{ ended: number[]; stuck: number[]; skipped: number[] }> {
  const recorded = recordedChildren(path).filter((e) => runsArgv(e.pid, e.argv));
  const ours = recorded.filter((e) => isOurLeftover(e, owner));
  const skipped = recorded.filter((e) => !ours.includes(e)).map((e) => e.pid);
  for (const e of ours) signal(e.pid, 'SIGTERM');
  const stubborn = await waitGone(ours, graceMs, clock);
  for (const e of stubborn) signal(e.pid, 'SIGKILL');
  const left = await waitGone(stubborn, 5_000, clock);
  return { ended: ours.map((e) => e.pid), stuck: left.map((e) => e.pid), skipped };
}

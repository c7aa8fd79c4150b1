// One daemon per state dir. Two daemons on one state dir would each end the other's
// ssh children at start (the children file names them) and overwrite each other's
// desired states, without a word. The lock is a file naming its holder by pid and
// by the process's start time, so that a lock left by a daemon killed with -9 (or a
// pid since reused by another process) is seen as stale and taken over.
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '../../kernel/result.js';

/** The lock held by this process; release() is idempotent and removes only our own lock. */
export interface StateLock {
  release(): void;
}

interface Holder {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: the start time, which tells a live holder from a reused pid. */
  started: string;
}

export const LOCK_FILE = 'daemon.lock';

/** A process's start time (clock ticks since boot), or null when it is gone. */
export function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // After the command name, which is in parentheses and may hold anything.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function commandLineOf(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0$/, '');
    return text === '' ? null : text.split('\0').join(' ').slice(0, 400);
  } catch {
    return null;
  }
}

function readHolder(path: string): Holder | null {
  try {
    const raw = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; started?: unknown };
    return typeof raw.pid === 'number' && Number.isInteger(raw.pid) && typeof raw.started === 'string' ? { pid: raw.pid, started: raw.started } : null;
  } catch {
    return null;
  }
}

const alive = (h: Holder): boolean => startTimeOf(h.pid) === h.started;

/**
 * Takes the state dir's lock for process `pid`, or says which daemon holds it. The
 * file is written whole under another name and linked into place, which fails when a
 * lock is there: no moment shows a half-written lock.
 */
export function lockStateDir(dir: string, pid: number): Result<StateLock, string> {
  const path = join(dir, LOCK_FILE);
  const me: Holder = { pid, started: startTimeOf(pid) ?? '' };
  const temp = join(dir, `.${LOCK_FILE}.${pid}.tmp`);
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(me)}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temp, path);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      }
      const holder = readHolder(path);
      if (holder !== null && holder.pid !== pid && alive(holder)) {
        const command = commandLineOf(holder.pid);
        return err(
          `another tunnel-manager daemon (pid ${holder.pid}${command === null ? '' : `: ${command}`}) already uses the state dir ${dir}; ` +
            'stop it first, or give each daemon its own --state-dir, --socket and --listen (TUNNEL_STATE_DIR, TUNNEL_SOCKET, TUNNEL_API_LISTEN)',
        );
      }
      // A stale lock: its daemon is gone (killed with -9, or the machine restarted).
      unlinkSync(path);
    }
  } finally {
    unlinkSync(temp);
  }
  let released = false;
  return ok({
    release() {
      if (released) return;
      released = true;
      const holder = readHolder(path);
      if (holder?.pid === me.pid && holder.started === me.started) {
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }
    },
  });
}

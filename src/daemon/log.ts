/**
 * Structured log lines, one JSON object per line on stderr: journald, `docker logs`
 * and jq all read them. The caller never passes a secret (tokens and upstream keys
 * stay out of every entry by construction).
 */
import { OWN_JSON } from '../kernel/log-entry.js';

export type Log = (entry: Record<string, unknown>) => void;

/** A line, or what makes it when its batch is written. */
export type Line = string | (() => string);

export function createLog(write: (line: Line) => void, clock: () => number = Date.now): Log {
  // The proxy logs many lines a millisecond under load: the time's text is made once per millisecond.
  let lastMs = Number.NaN;
  let time = '';
  return (entry) => {
    const ms = clock();
    if (ms !== lastMs) {
      lastMs = ms;
      time = new Date(ms).toISOString();
    }
    // An entry that names its own time keeps it (in first place, as always).
    if ('time' in entry) return write(`${JSON.stringify({ time, ...entry })}\n`);
    const own = (entry as { [OWN_JSON]?: unknown })[OWN_JSON];
    if (typeof own === 'function') {
      const at = time;
      return write(() => {
        const members = (own as (e: typeof entry) => string)(entry);
        return members === '' ? `{"time":"${at}"}\n` : `{"time":"${at}",${members}}\n`;
      });
    }
    // The entry's JSON with the time put first: the same line, without copying the entry into a new object.
    const fields = JSON.stringify(entry);
    write(fields === '{}' ? `{"time":"${time}"}\n` : `{"time":"${time}",${fields.slice(1)}\n`);
  };
}

/** Text written in order through one channel, gathered into few writes. */
export interface LineBatch {
  /** Queues a line behind everything written before it (one that is made later, when its batch is written). */
  write(line: Line): void;
  /** Writes out what is queued, now. */
  flush(): void;
}

/** How long a line may wait in the queue for others to join it. */
export const LINE_WINDOW_MS = 20;
/** Queued text is written at once when it reaches this size (a line made later counts as LINE_GUESS_BYTES), whatever the window. */
export const LINE_BATCH_BYTES = 64 * 1024;
const LINE_GUESS_BYTES = 512;

/**
 * One `write` per LINE_WINDOW_MS (or per LINE_BATCH_BYTES) instead of one per line:
 * the proxy logs a line per request, and a write per line (or per turn of the event
 * loop, which under load holds only a few requests) cost as much CPU as the rest of
 * the log line (BENCHMARKS.md, "Chat proxy"). Lines keep their order (one queue for
 * every writer of the channel); a line given as a function is made when its batch is
 * written. The caller flushes on process exit, which Node also runs after an uncaught
 * exception, so only a kill that gives the process no chance to run (SIGKILL, or a
 * signal with no handler) can take the last LINE_WINDOW_MS of lines with it. The
 * timer does not keep the process alive.
 */
export function batchLines(write: (text: string) => void, later: (run: () => void) => void = (run) => setTimeout(run, LINE_WINDOW_MS).unref()): LineBatch {
  let queued: Line[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queued.length === 0) return;
    const lines = queued;
    queued = [];
    size = 0;
    let text = '';
    for (const line of lines) text += typeof line === 'string' ? line : made(line);
    write(text);
  };
  return {
    write(line) {
      queued.push(line);
      size += typeof line === 'string' ? line.length : LINE_GUESS_BYTES;
      if (size >= LINE_BATCH_BYTES) return flush();
      if (!scheduled) {
        scheduled = true;
        later(flush);
      }
    },
    flush,
  };
}

/** A line made now; a maker that fails (a bug) costs its own line only, which says so. */
function made(make: () => string): string {
  try {
    return make();
  } catch (e) {
    return `${JSON.stringify({ event: 'log_line_failed', error: String(e) })}\n`;
  }
}

/**
 * Structured log lines, one JSON object per line on stderr: journald, `docker logs`
 * and jq all read them. The caller never passes a secret (tokens and upstream keys
 * stay out of every entry by construction).
 */
export type Log = (entry: Record<string, unknown>) => void;

export function createLog(write: (line: string) => void, now: () => Date = () => new Date()): Log {
  // The proxy logs many lines a millisecond under load: the time's text is made once per millisecond.
  let lastMs = Number.NaN;
  let lastText = '';
  return (entry) => {
    const at = now();
    const ms = at.getTime();
    if (ms !== lastMs) {
      lastMs = ms;
      lastText = at.toISOString();
    }
    write(`${JSON.stringify({ time: lastText, ...entry })}\n`);
  };
}

/** Text written in order through one channel, gathered into one write per turn of the event loop. */
export interface LineBatch {
  /** Queues `text` behind everything written before it. */
  write(text: string): void;
  /** Writes out what is queued, now. */
  flush(): void;
}

/**
 * One `write` per turn of the event loop instead of one per line: the proxy logs a
 * line per request, and at 32 concurrent requests a write syscall each cost about as
 * much CPU as the rest of the log line (BENCHMARKS.md, "Chat proxy"). Lines keep their
 * order (one queue for every writer of the channel) and are written by the end of the
 * turn they were made in, before timers and I/O of the next; the caller flushes on
 * process exit, which Node also runs after an uncaught exception, so only a kill that
 * gives the process no chance to run (SIGKILL, or a signal with no handler) can take
 * the lines of the turn under way with it.
 */
export function batchLines(write: (text: string) => void, later: (run: () => void) => void = setImmediate): LineBatch {
  let queued = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queued === '') return;
    const text = queued;
    queued = '';
    write(text);
  };
  return {
    write(text) {
      queued += text;
      if (!scheduled) {
        scheduled = true;
        later(flush);
      }
    },
    flush,
  };
}

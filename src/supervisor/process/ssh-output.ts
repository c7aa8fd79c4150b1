// Reading ssh's stderr (LogLevel DEBUG1, fixed by ssh-args.ts): when the forward is
// established, and which lines are worth keeping in a tunnel's log. Pure.
import { isDebugLine } from './ssh-exit-classify.js';

/**
 * True on the line that proves the forward works. Measured on OpenSSH 9.2:
 * - `-L`: "Local connections to … forwarded to …" and "Local forwarding listening on …"
 *   are printed *before* the bind is tried, so they prove nothing; a failed bind is
 *   fatal under ExitOnForwardFailure before the client loop starts, so the client
 *   loop's "Entering interactive session." is the first line that proves the bind.
 * - `-R`: the server answers asynchronously, after the client loop started;
 *   "remote forward success for: listen …" is its positive answer.
 */
export function isEstablishedLine(line: string, flag: '-L' | '-R' | '-D'): boolean {
  // -D binds before the client loop, as -L does.
  return flag !== '-R'
    ? line.startsWith('debug1: Entering interactive session.')
    : line.startsWith('debug1: remote forward success for: listen ');
}

/** ssh's INFO line once authentication succeeded: the server no longer counts it against MaxStartups. */
export function isLoggedInLine(line: string): boolean {
  return line.startsWith('Authenticated to ');
}

// The few debug lines that tell the story of an attempt; the rest is noise that would
// push the useful lines out of a small ring buffer.
const MILESTONES = /^debug1: (Connecting to |connect to address |Connection established\.|Local connections to |Remote connections from |Entering interactive session\.|remote forward (success|failure) for: )/;

/** Whether a stderr line belongs in the tunnel's log ring buffer. */
export function keepInLog(line: string): boolean {
  if (line.trim() === '') return false;
  return !isDebugLine(line) || MILESTONES.test(line);
}

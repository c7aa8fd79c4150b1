// The state dir decides which processes the daemon signals at start (the children
// file) and which host keys ssh trusts (known_hosts): whoever can write it chooses
// both. So the daemon starts only on a state dir that its own account owns and that
// neither group nor others can write, files included. One rule for the daemon (which
// refuses to start) and `tunnel-manager check` (which reports it).
import { lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '../kernel/result.js';

// Deep enough for the dir's own folders (logins/); the state dir holds nothing deeper.
const MAX_DEPTH = 2;

const shellQuote = (s: string): string => (/^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const mode = (st: Stats): string => (st.mode & 0o7777).toString(8).padStart(4, '0');

function problemOf(path: string, st: Stats, uid: number): string | null {
  if (st.uid !== uid) return `${path} belongs to uid ${st.uid}, not to uid ${uid}, which runs the daemon`;
  // A symbolic link's own mode means nothing; what it points to is checked where it lies, if inside.
  if (!st.isSymbolicLink() && (st.mode & 0o022) !== 0) return `${path} is writable by ${(st.mode & 0o020) !== 0 ? 'its group' : 'others'} (mode ${mode(st)})`;
  return null;
}

function walk(dir: string, uid: number, depth: number, found: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    const problem = problemOf(path, st, uid);
    if (problem !== null) found.push(problem);
    if (st.isDirectory() && depth < MAX_DEPTH) walk(path, uid, depth + 1, found);
  }
}

/** A state dir that is not ours: each problem found (at most a few shown), and the command that fixes them. */
export interface ForeignStateDir {
  problems: string[];
  fix: string;
}

/**
 * Ok when `dir` is missing (the daemon creates it 0700) or it and everything in it
 * belong to `uid` and cannot be written by group or others; otherwise the problems
 * and the command that fixes them.
 */
export function findForeignStateDir(dir: string, uid: number): Result<void, ForeignStateDir> {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch {
    return ok(undefined);
  }
  const found: string[] = [];
  const own = problemOf(dir, st, uid);
  if (own !== null) found.push(own);
  if (st.isDirectory()) walk(dir, uid, 1, found);
  if (found.length === 0) return ok(undefined);
  const q = shellQuote(dir);
  const problems = found.length > 5 ? [...found.slice(0, 5), `and ${found.length - 5} more`] : found;
  return err({ problems, fix: `sudo chown -R ${uid} ${q} && chmod -R go-w ${q} && chmod 700 ${q}` });
}

/** The daemon's refusal of a state dir that is not ours, with the fix; ok otherwise. */
export function checkStateDirOwner(dir: string, uid: number): Result<void, string> {
  const found = findForeignStateDir(dir, uid);
  if (found.ok) return found;
  return err(
    `refusing the state dir ${dir}: another account could write it, and so choose which processes the daemon signals and which host keys ssh trusts (${found.error.problems.join('; ')}). ` +
      `If the folder is yours: ${found.error.fix}; otherwise give this daemon its own --state-dir (TUNNEL_STATE_DIR)`,
  );
}

/**
 * Why the daemon cannot start on its state dir (a user's setup problem, not a bug):
 * the daemon prints the message, which holds the fix, and exits 1.
 */
export class StateDirError extends Error {
  override readonly name = 'StateDirError';
}

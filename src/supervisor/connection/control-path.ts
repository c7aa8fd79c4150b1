// Where a shared connection's control socket lives (SPEC §14): a short path, one per
// connection, named by a hash of the connection's whole option set. ssh binds a
// temporary name 17 characters longer than the path first, and a unix socket's path
// holds at most 107 bytes: the path must stay within 90. A socket left by a killed
// master makes the next one run silently without sharing, so leftovers are removed.
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { err, ok, type Result } from '../../kernel/result.js';

export const CONTROL_PATH_MAX = 90;
const ID_LENGTH = 16;

/** A connection's id: stable while the option set (the argv of its login) does not change. */
export function connectionId(loginArgv: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(loginArgv)).digest('hex').slice(0, ID_LENGTH);
}

/** A folder ssh takes literally: no white space, nothing ssh's option parser would read. */
const plainPath = (p: string) => /^[A-Za-z0-9_./-]+$/.test(p);

/**
 * The folder for control sockets: `<state dir>/mux` when its sockets' paths fit, else a
 * folder of our own under the system's temporary folder (0700, ours, not a link).
 */
export function prepareControlDir(stateDir: string): Result<string, string> {
  const preferred = join(stateDir, 'mux');
  const fallback = join(tmpdir(), `tunnel-manager-${userInfo().uid}`);
  for (const dir of [preferred, fallback]) {
    if (join(dir, 'x'.repeat(ID_LENGTH)).length > CONTROL_PATH_MAX || !plainPath(dir)) continue;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = lstatSync(dir);
      // Ours and a real folder (not a link someone planted): made private if it was not.
      if (!st.isDirectory() || st.uid !== userInfo().uid) continue;
      if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
      removeLeftoverSockets(dir);
      return ok(dir);
    } catch {
      continue;
    }
  }
  return err(`no folder for shared connections' control sockets: ${preferred} is longer than ${CONTROL_PATH_MAX - ID_LENGTH - 1} bytes or unusable, and ${fallback} is not a private folder of this user`);
}

export function controlPath(dir: string, id: string): string {
  return join(dir, id);
}

/** Sockets of masters that are gone (a killed daemon's): each would disable sharing for the next master. */
export function removeLeftoverSockets(dir: string): void {
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { force: true, recursive: true });
}

import { constants, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { findForeignStateDir } from '../settings/state-dir-owner.js';
import type { CheckProblem } from './report.js';
import { shellQuote } from './rules.js';

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function writableBy(path: string, st: Stats, uid: number, runningAsUid: boolean): Promise<boolean> {
  if (runningAsUid) return access(path, constants.W_OK | constants.X_OK).then(() => true, () => false);
  if (uid === 0) return true;
  return st.uid === uid ? (st.mode & 0o300) === 0o300 : (st.mode & 0o003) === 0o003;
}

/**
 * The state dir must be a folder `uid` can write; one that does not exist yet is
 * fine when the daemon can create it (its nearest existing parent is writable).
 */
export async function checkStateDir(dir: string, uid: number, runningAsUid: boolean): Promise<CheckProblem[]> {
  const q = shellQuote(dir);
  const st = await statOrNull(dir);
  if (st !== null) {
    if (!st.isDirectory()) return [{ where: dir, what: 'the state directory is not a directory', fix: null }];
    // The daemon's own rule: it refuses to start on a state dir another account could write.
    const foreign = findForeignStateDir(dir, uid);
    if (!foreign.ok) {
      return [{ where: dir, what: `the daemon refuses this state directory, which another account could write: ${foreign.error.problems.join('; ')}`, fix: foreign.error.fix }];
    }
    if (await writableBy(dir, st, uid, runningAsUid)) return [];
    return [{ where: dir, what: `the state directory is not writable by uid ${uid} (the user tunnel-manager runs as)`, fix: `sudo chown ${uid} ${q}` }];
  }
  let parent = dirname(dir);
  for (;;) {
    const pst = await statOrNull(parent);
    if (pst !== null) {
      if (pst.isDirectory() && (await writableBy(parent, pst, uid, runningAsUid))) return [];
      return [{
        where: dir,
        what: `the state directory does not exist and uid ${uid} cannot create it in ${parent}`,
        fix: `sudo mkdir -p ${q} && sudo chown ${uid} ${q}`,
      }];
    }
    const next = dirname(parent);
    if (next === parent) return [{ where: dir, what: 'no parent folder of the state directory exists', fix: null }];
    parent = next;
  }
}

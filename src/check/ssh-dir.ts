import { readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import type { CheckProblem } from './report.js';
import { entryProblems, missingDirProblem, missingSshConfigProblem, notADirProblem } from './rules.js';

/** Maps a real path to the path the user knows (the host's path when run in a container). */
export type ShowPath = (path: string) => string;

export function showPathUnder(realDir: string, shownDir: string | undefined): ShowPath {
  const dir = realDir.replace(/\/+$/, '') || '/';
  const shown = (shownDir ?? dir).replace(/\/+$/, '') || '/';
  return (path) => {
    if (path === dir) return shown;
    if (path.startsWith(`${dir}/`)) return `${shown}${path.slice(dir.length)}`;
    return path;
  };
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

interface Entry {
  path: string;
  stats: Stats;
}

/**
 * Every folder and regular file below `dir`, symbolic links followed (ssh judges a
 * link by its target), sorted by path bytes — the order of `find | LC_ALL=C sort`
 * in the entrypoint. Unreadable folders and loops are skipped, as find does.
 */
async function walk(dir: string, seen: Set<string>, out: Entry[]): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    const stats = await statOrNull(path);
    if (stats === null) continue;
    if (stats.isDirectory()) {
      const id = `${stats.dev}:${stats.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ path, stats });
      await walk(path, seen, out);
    } else if (stats.isFile()) {
      out.push({ path, stats });
    }
  }
}

/**
 * Checks the SSH directory: it exists, it and every folder in it are 700, private
 * files 600, public ones not writable by others, all owned by `uid`; and the SSH
 * config file exists when `configFile` is given.
 */
export async function checkSshDir(
  dir: string,
  configFile: string | null,
  uid: number,
  show: ShowPath,
): Promise<CheckProblem[]> {
  const top = await statOrNull(dir);
  if (top === null) return [missingDirProblem(show(dir))];
  if (!top.isDirectory()) return [notADirProblem(show(dir))];
  const problems = entryProblems(show(dir), 'dir', top.mode, top.uid, uid);
  const entries: Entry[] = [];
  await walk(dir, new Set([`${top.dev}:${top.ino}`]), entries);
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  for (const e of entries) {
    problems.push(...entryProblems(show(e.path), e.stats.isDirectory() ? 'dir' : 'file', e.stats.mode, e.stats.uid, uid));
  }
  if (configFile !== null) {
    const cfg = await statOrNull(configFile);
    if (cfg === null || !cfg.isFile()) problems.push(missingSshConfigProblem(show(configFile)));
  }
  return problems;
}

import { open, readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { isKubeletInternalName, isKubeletManaged } from './kubelet-volume.js';
import { entryFindings, isPublicFile, missingDirProblem, missingSshConfigProblem, notADirProblem, type EntryKind, type Findings, type Layout } from './rules.js';

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
 * in the entrypoint. Unreadable folders and loops are skipped, as find does, and so
 * are the kubelet's own names (`..data`, `..2026_…`): their files are judged once,
 * by the names the Secret gives them.
 */
async function walk(dir: string, seen: Set<string>, out: Entry[]): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (isKubeletInternalName(name)) continue;
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

/** Whether a file starts like a private key (OpenSSH, PEM or PKCS#8); an unreadable one is not known to be one. */
async function looksLikePrivateKey(path: string): Promise<boolean> {
  try {
    const fh = await open(path, 'r');
    try {
      const { buffer, bytesRead } = await fh.read(Buffer.alloc(64), 0, 64, 0);
      return /^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(buffer.subarray(0, bytesRead).toString('latin1'));
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

async function kindOf(path: string, stats: Stats, configFile: string | null): Promise<EntryKind> {
  if (stats.isDirectory()) return 'dir';
  if (configFile !== null && resolve(path) === resolve(configFile)) return 'ssh-config';
  if (isPublicFile(path)) return 'public';
  return (await looksLikePrivateKey(path)) ? 'private-key' : 'other';
}

/**
 * `ssh -F /dev/null` (or a pipe) is valid and ssh judges no folder for it: its folder
 * is not an SSH directory, so nothing in it is ours to judge.
 */
export async function isSpecialSshConfig(configFile: string | null): Promise<boolean> {
  const cfg = configFile === null ? null : await statOrNull(configFile);
  return cfg !== null && !cfg.isFile() && !cfg.isDirectory();
}

/**
 * Checks the SSH directory: what ssh itself refuses (a private key of ours others can
 * read, a config file others can write or another user owns) is `refused`; what it
 * accepts but is looser than need be (a 755 folder, a 644 config) is `warned`; a missing
 * folder, or a missing SSH config file when `configFile` is given, is refused; a
 * config that is not a regular file (`/dev/null`) is accepted without looking at its folder.
 */
export async function checkSshDir(dir: string, configFile: string | null, uid: number, show: ShowPath): Promise<Findings> {
  if (await isSpecialSshConfig(configFile)) return { refused: [], warned: [] };
  const cfg = configFile === null ? null : await statOrNull(configFile);
  const top = await statOrNull(dir);
  if (top === null) {
    // Both fixes at once, in the order they run: the folder, then the file in it.
    const refused = [missingDirProblem(show(dir))];
    if (configFile !== null) refused.push(missingSshConfigProblem(show(configFile)));
    return { refused, warned: [] };
  }
  if (!top.isDirectory()) return { refused: [notADirProblem(show(dir))], warned: [] };
  const layout = async (path: string): Promise<Layout> => ((await isKubeletManaged(path)) ? 'kubelet' : 'plain');
  const found: Findings = entryFindings(show(dir), 'dir', top.mode, top.uid, uid, await layout(dir));
  const entries: Entry[] = [];
  await walk(dir, new Set([`${top.dev}:${top.ino}`]), entries);
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  for (const e of entries) {
    const f = entryFindings(show(e.path), await kindOf(e.path, e.stats, configFile), e.stats.mode, e.stats.uid, uid, await layout(e.path));
    found.refused.push(...f.refused);
    found.warned.push(...f.warned);
  }
  if (configFile !== null && (cfg === null || cfg.isDirectory())) found.refused.push(missingSshConfigProblem(show(configFile)));
  return found;
}

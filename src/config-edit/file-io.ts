import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MAX_CONFIG_BYTES } from '../config/yaml-loader.js';

/** The config file as read from disk, with the version the page sends back on save. */
export interface FileState {
  /** null when the file does not exist, or is too big to be edited. */
  text: string | null;
  missing: boolean;
  /** sha256 of the bytes; "missing" when there is no file. */
  version: string;
  /** Bytes, when the file is over the size limit the daemon also enforces (MAX_CONFIG_BYTES). */
  tooBig: number | null;
}

const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';

export function versionOf(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export async function readFileState(path: string): Promise<FileState> {
  try {
    const st = await stat(path);
    if (st.size > MAX_CONFIG_BYTES) {
      return { text: null, missing: false, version: `size-${st.size}-${st.mtimeMs}`, tooBig: st.size };
    }
    const bytes = await readFile(path);
    return { text: bytes.toString('utf8'), missing: false, version: versionOf(bytes), tooBig: null };
  } catch (e) {
    if (isNotFound(e)) return { text: null, missing: true, version: 'missing', tooBig: null };
    throw e;
  }
}

/** The file a write must replace: a symlinked config keeps its link and the target is replaced. */
async function target(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (e) {
    if (isNotFound(e)) return path;
    throw e;
  }
}

/**
 * Replaces the file atomically: a temp file in the same folder (so rename is atomic),
 * written, flushed to disk and renamed over the old one, then the folder flushed too.
 * The new file keeps the old one's mode and owner (when we may set it), so a 0600
 * config stays private. `beforeRename` runs last, to re-check that nobody wrote the
 * file meanwhile; when it says false nothing is replaced.
 */
export async function writeAtomic(path: string, text: string, beforeRename: () => Promise<boolean>): Promise<boolean> {
  const file = await target(path);
  const dir = dirname(file);
  const old = await stat(file).catch((e: unknown) => (isNotFound(e) ? null : Promise.reject(e)));
  const mode = old ? old.mode & 0o7777 : 0o644;
  const tmp = join(dir, `.${basename(file)}.panel-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(text, 'utf8');
    await fh.chmod(mode);
    // Only root may give a file away; anyone else writes files they own, as the old one was.
    const mine = await fh.stat();
    if (old && (old.uid !== mine.uid || old.gid !== mine.gid)) await fh.chown(old.uid, old.gid).catch(() => undefined);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  if (!(await beforeRename())) {
    await unlink(tmp).catch(() => undefined);
    return false;
  }
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  const d = await open(dir, 'r');
  await d.sync().catch(() => undefined);
  await d.close();
  return true;
}

const BACKUP = /^(.+)\.(\d{8}T\d{6}\.\d{3}Z)(?:-(\d+))?\.bak$/;

function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '');
}

/**
 * Keeps a copy of the file's previous text in `dir`, named `<file>.<UTC time>.bak`, and
 * removes the oldest copies beyond `keep`. Backups are private (0600, folder 0700):
 * a config may hold provider keys. Returns the backup's path.
 */
export async function saveBackup(dir: string, configPath: string, text: string, keep: number, now: Date = new Date()): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const base = basename(configPath);
  let name = `${base}.${stamp(now)}.bak`;
  const existing = new Set(await readdir(dir));
  for (let n = 1; existing.has(name); n++) name = `${base}.${stamp(now)}-${n}.bak`;
  const path = join(dir, name);
  await writeFile(path, text, { mode: 0o600, flag: 'wx' });
  await chmod(path, 0o600);
  const ours = [...existing, name]
    .map((f) => ({ f, m: BACKUP.exec(f) }))
    .filter((x) => x.m !== null && x.m[1] === base)
    .sort((a, b) => {
      const ta = a.m?.[2] ?? '';
      const tb = b.m?.[2] ?? '';
      return ta !== tb ? (ta < tb ? -1 : 1) : Number(a.m?.[3] ?? 0) - Number(b.m?.[3] ?? 0);
    });
  for (const old of ours.slice(0, Math.max(0, ours.length - keep))) await unlink(join(dir, old.f)).catch(() => undefined);
  return path;
}

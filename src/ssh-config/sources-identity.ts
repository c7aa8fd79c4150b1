// The identity of the files an `ssh -G` answer came from: what tells, without running
// ssh again, that the answer may still be used (host-views.ts reuses it for a new
// tunnel to a known destination). A file edited in place changes size or mtime; one
// replaced by rename changes inode; one created or removed changes from or to missing.
import { stat } from 'node:fs/promises';

/** One string for the files, in the order given: inode, size and mtime of each, or why stat failed. */
export async function sourcesIdentity(files: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    files.map(async (f) => {
      try {
        const s = await stat(f);
        return `${s.ino}:${s.size}:${s.mtimeMs}`;
      } catch (e) {
        return `error:${(e as NodeJS.ErrnoException).code ?? 'unknown'}`;
      }
    }),
  );
  return parts.join('|');
}

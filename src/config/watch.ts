import { createHash } from 'node:crypto';
import { lstat, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { watch } from 'chokidar';
import { watchRenameArrival, type RenameArrival } from './rename-arrival.js';

/** SPEC §2: a change written in place applies once the file has been stable this long (at most 200 ms). */
export const DEFAULT_DEBOUNCE_MS = 150;

/**
 * Kubernetes mounts a ConfigMap as `config.yaml -> ..data/config.yaml` and updates
 * it by swapping the `..data` symlink; the file's own entry never changes.
 */
const KUBERNETES_DATA_LINK = '..data';

/**
 * How often the file's identity (inode, size, mtime, type) is checked besides the
 * watcher's events. chokidar can lose track of a path after an odd state (a symlink
 * loop in its place, a file swapped for a folder and back within its atomic-write
 * window); a stat every few seconds makes sure such a change is still applied.
 */
export const SAFETY_CHECK_MS = 2_000;

export interface WatchOptions {
  debounceMs?: number;
  /** Default SAFETY_CHECK_MS. */
  safetyCheckMs?: number;
  /** Watcher failures (e.g. a folder became unreadable); the watch goes on. */
  onError?: (error: Error) => void;
}

export interface ConfigWatcher {
  /** Stops watching; no onChange call happens after it resolves. Idempotent. */
  close(): Promise<void>;
}

/**
 * Calls `onChange` once the config file has been created, changed, replaced or
 * deleted and then left alone for the debounce period; at once when it was replaced
 * by a rename (rename-arrival.ts), a complete file (SPEC §14). The caller reads and
 * validates the file.
 *
 * The folder is watched, not the file: editors save by writing a new file and
 * renaming it over the old one, and the file may not exist yet. Other files in the
 * folder (swap files, the panel's temp files and backups) are ignored. Every event
 * restarts the wait, so a half-written file whose rest follows within the debounce
 * period is never reported on its own: the caller reads the final state once.
 *
 * chokidar sees nothing in a folder that did not exist when it was added, so the
 * folder's ancestors are watched too (one level each): when the folder appears (or
 * reappears after being removed) it is added, and a change is reported in case the
 * file came with it. Resolves once the initial scan is done.
 */
export async function watchConfig(path: string, onChange: () => void, opts: WatchOptions = {}): Promise<ConfigWatcher> {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const file = resolve(path);
  const folder = dirname(file);
  const relevant = new Set([file, join(folder, KUBERNETES_DATA_LINK)]);
  /** The folder and its ancestors: the only directories looked at. */
  const chain = ancestorsOf(folder);
  const onChain = (p: string) => chain.includes(p);

  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // What the file was when onChange last ran (or when watching began).
  let seen = await identity(file);
  // The bytes and identity read at once after a rename: the watcher's own events for
  // that same rename, debounced, then find nothing new and call nobody.
  let readAtOnce: string | undefined;
  const schedule = () => {
    if (stop.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      void Promise.all([identity(file), readAtOnce === undefined ? undefined : contents(file)]).then(([now, bytes]) => {
        if (stop.signal.aborted) return;
        const same = readAtOnce !== undefined && readAtOnce === `${now}|${bytes}`;
        readAtOnce = undefined;
        seen = now;
        if (!same) onChange();
      });
    }, debounceMs);
  };
  const renamedIn = () => {
    if (stop.signal.aborted) return;
    // Whatever was waiting is superseded: the file now is the renamed one.
    clearTimeout(timer);
    void Promise.all([identity(file), contents(file)]).then(([now, bytes]) => {
      if (stop.signal.aborted) return;
      seen = now;
      readAtOnce = `${now}|${bytes}`;
      onChange();
    });
  };
  let arrivals: RenameArrival | undefined;
  const watchArrivals = () => {
    arrivals?.close();
    arrivals = watchRenameArrival(folder, new Set([basename(file), KUBERNETES_DATA_LINK]), renamedIn);
  };
  if (await isDirectory(folder)) watchArrivals();
  const safety = setInterval(() => {
    void identity(file).then((now) => {
      if (now !== seen && !stop.signal.aborted) schedule();
    });
  }, opts.safetyCheckMs ?? SAFETY_CHECK_MS);
  safety.unref();
  stop.signal.addEventListener(
    'abort',
    () => {
      clearTimeout(timer);
      clearInterval(safety);
      arrivals?.close();
    },
    { once: true },
  );

  const watched = new Set(await existingTail(chain));
  const watcher = watch([...watched], {
    ignoreInitial: true,
    depth: 0,
    ignored: (p: string) => {
      const abs = resolve(p);
      return !onChain(abs) && !relevant.has(abs);
    },
    // Our own debounce covers the editor's intermediate states; chokidar's
    // awaitWriteFinish would poll sizes and add a longer delay of its own.
    awaitWriteFinish: false,
  });

  /** Adds every folder of the chain that exists now and is not watched yet. */
  const advance = async () => {
    for (const dir of await existingTail(chain)) {
      if (stop.signal.aborted || watched.has(dir)) continue;
      watched.add(dir);
      watcher.add(dir);
      if (dir === folder) {
        watchArrivals();
        schedule();
      }
    }
  };

  watcher.on('all', (event, p) => {
    const abs = resolve(p);
    if (relevant.has(abs)) schedule();
    else if (event === 'addDir' && onChain(abs)) void advance();
    else if (event === 'unlinkDir' && onChain(abs)) {
      // Gone with the folder: watch it again when it comes back.
      for (const dir of watched) if (dir === abs || dir.startsWith(abs + sep)) watched.delete(dir);
      if (folder === abs || folder.startsWith(abs + sep)) schedule();
    }
  });
  watcher.on('error', (e) => {
    opts.onError?.(e instanceof Error ? e : new Error(String(e)));
    // An error about the file itself is news about the file: read it again.
    schedule();
  });

  await new Promise<void>((ready) => watcher.once('ready', () => ready()));

  let closing: Promise<void> | undefined;
  return {
    close() {
      stop.abort();
      closing ??= watcher.close();
      return closing;
    },
  };
}

/** The file's identity as a string: type, inode, size and mtime of what it points at, or the error that stat gives. */
async function identity(path: string): Promise<string> {
  try {
    const link = await lstat(path);
    const target = link.isSymbolicLink() ? await stat(path) : link;
    return `${link.isSymbolicLink() ? 'link:' : ''}${target.mode}:${target.ino}:${target.size}:${target.mtimeMs}`;
  } catch (e) {
    return `error:${(e as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}

/** A digest of the file's bytes (what it points at), or the error reading gives. */
async function contents(path: string): Promise<string> {
  try {
    return createHash('sha256').update(await readFile(path)).digest('hex');
  } catch (e) {
    return `error:${(e as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}

/** `/a/b/c` → [`/a/b/c`, `/a/b`, `/a`, `/`]. */
function ancestorsOf(dir: string): string[] {
  const out = [dir];
  for (let d = dir; dirname(d) !== d; d = dirname(d)) out.push(dirname(d));
  return out;
}

/**
 * The directories worth watching: the folder's parent (so its removal and return
 * are seen) and the folder, or, while the folder is missing, the nearest ancestor
 * that exists and the existing ones below it.
 */
async function existingTail(chain: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const dir of chain) {
    if (!(await isDirectory(dir))) continue;
    out.push(dir);
    if (dir !== chain[0]) break;
  }
  return out.reverse();
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

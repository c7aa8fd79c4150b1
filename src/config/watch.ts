import { watch as nodeWatch, type FSWatcher as NodeFsWatcher } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { watch as chokidarWatch, type FSWatcher } from 'chokidar';

/** SPEC §2: a change applies once the file has been stable this long (at most 200 ms). */
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
 * deleted and then left alone for the debounce period. The caller reads and
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

  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // What the file was when onChange last ran (or when watching began).
  let seen = await identity(file);
  const schedule = () => {
    if (stop.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      void identity(file).then((now) => {
        if (stop.signal.aborted) return;
        seen = now;
        onChange();
      });
    }, debounceMs);
  };
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
    },
    { once: true },
  );

  // The folder is watched by chokidar (editors' saves, symlink swaps); its ancestors
  // by the bare fs.watch, for one name each. chokidar lists a whole folder again on
  // every event in it: on a parent as busy as /tmp (thousands of entries, changing
  // all the time) that was a stat of every entry several times a second, enough to
  // add milliseconds to every request the process served (BENCHMARKS.md, "Chat proxy").
  const folderOptions = {
    ignoreInitial: true,
    depth: 0,
    ignored: (p: string) => !relevant.has(resolve(p)) && resolve(p) !== folder,
    // Our own debounce covers the editor's intermediate states; chokidar's
    // awaitWriteFinish would poll sizes and add a longer delay of its own.
    awaitWriteFinish: false,
  } as const;
  let watcher: FSWatcher | null = null;
  let folderWatched = false;
  const ancestors = new Map<string, NodeFsWatcher>();

  const watchFolder = (): FSWatcher => {
    const w = chokidarWatch(folder, folderOptions);
    w.on('all', (event, p) => {
      const abs = resolve(p);
      if (relevant.has(abs)) schedule();
      else if (event === 'unlinkDir' && abs === folder) void reconcile();
    });
    w.on('error', (e) => {
      opts.onError?.(e instanceof Error ? e : new Error(String(e)));
      // An error about the file itself is news about the file: read it again.
      schedule();
    });
    return w;
  };

  /** Watches `dir` for the one entry of the chain below it: nothing else in it costs more than a name compare. */
  const watchAncestor = (dir: string) => {
    const below = chain[chain.indexOf(dir) - 1];
    if (below === undefined) return;
    const name = basename(below);
    try {
      const w = nodeWatch(dir, (_event, entry) => {
        if (entry === null || entry.toString() === name) void reconcile();
      });
      w.on('error', () => {
        w.close();
        ancestors.delete(dir);
        void reconcile();
      });
      ancestors.set(dir, w);
    } catch {
      // Gone between the check and the watch: the next look at the chain sees it.
    }
  };

  /**
   * Brings the watches in line with what exists now: the folder and its parent, or,
   * while the folder is missing, the nearest ancestor that exists. Serialized, so two
   * events in a row cannot both add the folder.
   */
  let reconciling: Promise<void> = Promise.resolve();
  const reconcile = (): Promise<void> =>
    (reconciling = reconciling.then(async () => {
      if (stop.signal.aborted) return;
      const want = new Set(await existingTail(chain));
      if (stop.signal.aborted) return;
      for (const [dir, w] of ancestors) {
        if (want.has(dir) && dir !== folder) continue;
        w.close();
        ancestors.delete(dir);
      }
      for (const dir of want) if (dir !== folder && !ancestors.has(dir)) watchAncestor(dir);
      if (want.has(folder) && !folderWatched) {
        folderWatched = true;
        if (watcher === null) watcher = watchFolder();
        else watcher.add(folder);
        // The file may have come with the folder.
        schedule();
      } else if (!want.has(folder) && folderWatched) {
        folderWatched = false;
        watcher?.unwatch(folder);
        // Gone with the folder.
        schedule();
      }
    }));

  await reconcile();
  const first = watcher as FSWatcher | null;
  if (first !== null) await new Promise<void>((ready) => first.once('ready', () => ready()));
  // Nothing has changed yet: the schedule made when the folder was first added is not news.
  clearTimeout(timer);

  let closing: Promise<void> | undefined;
  return {
    close() {
      stop.abort();
      for (const w of ancestors.values()) w.close();
      ancestors.clear();
      closing ??= reconciling.then(() => watcher?.close());
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

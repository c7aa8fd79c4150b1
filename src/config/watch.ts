import { watch as nodeWatch, type FSWatcher as NodeFsWatcher } from 'node:fs';
import { createHash } from 'node:crypto';
import { lstat, readFile, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
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
 * watcher's events. A watch can lose track of a path after an odd state (a symlink
 * loop in its place, a file swapped for a folder and back between two events); a
 * stat every few seconds makes sure such a change is still applied.
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
 * A watch sees nothing in a folder that did not exist when it was set, so the
 * folder's parent is watched too (or, while the folder is missing, its nearest
 * ancestor that exists), for the one name below it: when the folder appears (or
 * reappears after being removed) it is watched, and a change is reported in case
 * the file came with it. Resolves once the watches are set.
 */
export async function watchConfig(path: string, onChange: () => void, opts: WatchOptions = {}): Promise<ConfigWatcher> {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const file = resolve(path);
  const folder = dirname(file);
  /** The folder and its ancestors: the only directories looked at. */
  const chain = ancestorsOf(folder);

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
    void (async () => {
      const now = await identity(file);
      const bytes = await contents(file);
      const after = await identity(file);
      if (stop.signal.aborted) return;
      // A writer may have opened the renamed file in place right after (truncated, and
      // writing): an empty file, or one that changed while it was read, is not known
      // to be complete, so it waits for the debounce like any write in place. Applied
      // at once, such a file could stop every tunnel ("no tunnels").
      if (after !== now || bytes === EMPTY_DIGEST) return schedule();
      seen = now;
      readAtOnce = `${now}|${bytes}`;
      onChange();
    })();
  };
  let arrivals: RenameArrival | undefined;
  const watchArrivals = () => {
    arrivals?.close();
    arrivals = watchRenameArrival(folder, new Set([basename(file), KUBERNETES_DATA_LINK]), renamedIn);
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
      arrivals?.close();
    },
    { once: true },
  );

  // Every folder is watched with the bare fs.watch, for its few names: the file and
  // `..data` in the config's folder, the next folder of the chain in an ancestor. An
  // event for any other entry costs a name compare. (chokidar, used before, listed
  // and stat'ed a whole folder again on every event in it: a config in or under a
  // folder as busy as /tmp added milliseconds to every request the process served;
  // BENCHMARKS.md, "Chat proxy".)
  // Each watch with the inode it was set on: a folder removed and made again between
  // two looks is a new folder, and the old watch would hear nothing from it.
  const watches = new Map<string, { w: NodeFsWatcher; ino: number }>();
  const watchDir = (dir: string, ino: number) => {
    const below = dir === folder ? null : chain[chain.indexOf(dir) - 1];
    const names = below === null ? new Set([basename(file), KUBERNETES_DATA_LINK]) : new Set(below === undefined ? [] : [basename(below)]);
    try {
      const drop = () => {
        w.close();
        if (watches.get(dir)?.w === w) watches.delete(dir);
        // Whatever happened to the folder is news about the file: read it again.
        if (dir === folder) schedule();
        void reconcile();
      };
      const w = nodeWatch(dir, (_event, entry) => {
        // No name (some platforms): anything may have changed.
        const name = entry === null ? null : entry.toString();
        // The watched folder itself removed (Linux names it so): this watch hears
        // nothing more, even from a folder made again under the same name (and
        // maybe the same inode). A file of that name inside costs a needless re-watch.
        if (name === basename(dir)) return drop();
        if (name !== null && !names.has(name)) return;
        if (dir === folder) schedule();
        if (dir !== folder || name === null) void reconcile();
      });
      w.on('error', (e) => {
        opts.onError?.(e);
        drop();
      });
      watches.set(dir, { w, ino });
      if (dir === folder) watchArrivals();
      return true;
    } catch {
      // Gone between the check and the watch: the parent's watch sees it come back.
      return false;
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
      const want = new Map<string, number>();
      for (const dir of await existingTail(chain)) {
        const ino = await inodeOf(dir);
        if (ino !== null) want.set(dir, ino);
      }
      if (stop.signal.aborted) return;
      for (const [dir, { w, ino }] of watches) {
        if (want.get(dir) === ino) continue;
        w.close();
        watches.delete(dir);
        // Gone with the folder (or replaced by another).
        if (dir === folder) schedule();
      }
      for (const [dir, ino] of want) {
        if (watches.has(dir)) continue;
        // The file may have come with the folder.
        if (watchDir(dir, ino) && dir === folder) schedule();
      }
    }));

  await reconcile();
  // Nothing has changed yet: the folder found at the start is not news.
  clearTimeout(timer);

  let closing: Promise<void> | undefined;
  return {
    close() {
      stop.abort();
      closing ??= reconciling.then(() => {
        for (const { w } of watches.values()) w.close();
        watches.clear();
      });
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

const EMPTY_DIGEST = createHash('sha256').digest('hex');

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

async function inodeOf(dir: string): Promise<number | null> {
  try {
    return (await stat(dir)).ino;
  } catch {
    return null;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

import { dirname, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { watch } from 'chokidar';

/** SPEC §2: a change applies once the file has been stable this long (at most 200 ms). */
export const DEFAULT_DEBOUNCE_MS = 150;

/**
 * Kubernetes mounts a ConfigMap as `config.yaml -> ..data/config.yaml` and updates
 * it by swapping the `..data` symlink; the file's own entry never changes.
 */
const KUBERNETES_DATA_LINK = '..data';

export interface WatchOptions {
  debounceMs?: number;
  /** Watcher failures (e.g. the folder became unreadable); the watch goes on. */
  onError?: (error: Error) => void;
}

export interface ConfigWatcher {
  /** Stops watching; no onChange call happens after it resolves. Idempotent. */
  close(): Promise<void>;
}

/**
 * Calls `onChange` once the config file has been created, changed, replaced or
 * deleted and then left alone for the debounce period. The folder is watched, not
 * the file: editors save by writing a new file and renaming it over the old one, and
 * the file may not exist yet. Other files in the folder (editor swap files, the
 * panel's temp files) are ignored. A half-written file whose rest follows within the
 * debounce period is never reported on its own: every event restarts the wait, so
 * the caller reads the final state once. The caller reads and validates the file.
 * Resolves once the initial scan is done, so a change made after it is seen.
 */
export async function watchConfig(path: string, onChange: () => void, opts: WatchOptions = {}): Promise<ConfigWatcher> {
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const file = resolve(path);
  const folder = dirname(file);
  const relevant = new Set([file, resolve(folder, KUBERNETES_DATA_LINK)]);

  // chokidar sees nothing inside a folder that did not exist when watching began; a
  // missing folder is watched through the file's own path, which chokidar follows
  // into existence (the folder first, then the file).
  const target = (await isDirectory(folder)) ? folder : file;
  const watcher = watch(target, {
    ignoreInitial: true,
    depth: 0,
    // The folder itself must pass, or nothing under it is watched.
    ignored: (p: string) => {
      const abs = resolve(p);
      return abs !== folder && !relevant.has(abs);
    },
    // Our own debounce covers the editor's intermediate states; chokidar's
    // awaitWriteFinish would poll sizes and add its own, longer delay.
    awaitWriteFinish: false,
  });

  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stop.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stop.signal.aborted) onChange();
    }, debounceMs);
  };
  stop.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });

  watcher.on('all', (_event, p) => {
    if (relevant.has(resolve(p))) schedule();
  });
  watcher.on('error', (e) => opts.onError?.(e instanceof Error ? e : new Error(String(e))));

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

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

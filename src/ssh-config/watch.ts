// Watches the user's ssh config and every file it Includes, so that an edit (a new
// Port, HostName, ProxyJump) counts without a daemon restart (SPEC §5). Which files
// count comes from `ssh -v -G` itself (configSources), so Include, Match and globs
// are ssh's business, not ours.
import { dirname, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

/** Editors save in bursts (temp file, rename, chmod); one re-read per burst. */
export const SSH_CONFIG_DEBOUNCE_MS = 150;

export interface SshConfigWatcher {
  /** Replaces the watched set: files ssh read, and folders where a new file could count. */
  watch(files: readonly string[], folders: readonly string[]): void;
  /** Stops watching; no onChange call happens after it resolves. Idempotent. */
  close(): Promise<void>;
}

/**
 * Calls `onChange` after a watched file is changed, replaced, created or deleted, or
 * a file appears in or leaves a watched folder. Folders are watched rather than files:
 * editors save by rename, and a file may not exist yet.
 */
export function watchSshConfig(onChange: () => void, onError: (e: Error) => void, debounceMs = SSH_CONFIG_DEBOUNCE_MS): SshConfigWatcher {
  let files = new Set<string>();
  let folders = new Set<string>();
  let watched = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const stop = new AbortController();
  const watcher: FSWatcher = watch([], { ignoreInitial: true, depth: 0, persistent: false });

  const relevant = (event: string, path: string): boolean => {
    const p = resolve(path);
    if (files.has(p)) return true;
    // In a folder of an Include glob, a new or removed file may change what it matches.
    return (event === 'add' || event === 'unlink') && folders.has(dirname(p));
  };
  watcher.on('all', (event, path) => {
    if (stop.signal.aborted || !relevant(event, path)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stop.signal.aborted) onChange();
    }, debounceMs);
  });
  watcher.on('error', (e) => onError(e instanceof Error ? e : new Error(String(e))));

  return {
    watch(nextFiles, nextFolders) {
      files = new Set(nextFiles.map((f) => resolve(f)));
      folders = new Set(nextFolders.map((f) => resolve(f)));
      const dirs = new Set([...[...files].map((f) => dirname(f)), ...folders]);
      const gone = [...watched].filter((d) => !dirs.has(d));
      const added = [...dirs].filter((d) => !watched.has(d));
      if (gone.length > 0) watcher.unwatch(gone);
      if (added.length > 0) watcher.add(added);
      watched = dirs;
    },
    async close() {
      if (stop.signal.aborted) return;
      stop.abort();
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

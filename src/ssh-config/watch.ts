// Watches the user's ssh config and every file it Includes, so that an edit (a new
// Port, HostName, ProxyJump) counts without a daemon restart (SPEC §5). Which files
// count comes from `ssh -v -G` itself (configSources), so Include, Match and globs
// are ssh's business, not ours.
import type { Stats } from 'node:fs';
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
 * Calls `onChange` (with the paths that changed in the burst) after a watched file is changed, replaced, created or deleted, or
 * a regular file appears in a watched folder (an Include's). Folders are watched rather
 * than files: editors save by rename, and a file may not exist yet.
 */
export function watchSshConfig(onChange: (paths: readonly string[]) => void, onError: (e: Error) => void, debounceMs = SSH_CONFIG_DEBOUNCE_MS): SshConfigWatcher {
  let pending: string[] = [];
  let files = new Set<string>();
  let folders = new Set<string>();
  let watched = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const stop = new AbortController();
  const watcher: FSWatcher = watch([], { ignoreInitial: true, depth: 0, persistent: false, alwaysStat: true });

  const relevant = (event: string, path: string, stats: Stats | undefined): boolean => {
    const p = resolve(path);
    // A file ssh read: changed, replaced or gone.
    if (files.has(p)) return true;
    // A new file in the folder of an Include may be one its glob matches. Only a regular
    // file: ssh's own control sockets, often kept in ~/.ssh, come and go all day. (A file
    // that leaves, if it mattered, was one ssh read, above.)
    return event === 'add' && folders.has(dirname(p)) && (stats === undefined || stats.isFile());
  };
  watcher.on('all', (event, path, stats) => {
    if (stop.signal.aborted || !relevant(event, path, stats)) return;
    pending.push(resolve(path));
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = pending;
      pending = [];
      if (!stop.signal.aborted) onChange(paths);
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

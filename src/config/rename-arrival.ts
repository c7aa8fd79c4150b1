// Tells when the config file's entry arrived by rename (an atomic replace: editors, the
// panel, the API, the kubelet's `..data` swap), which is a complete file and needs no
// debounce (SPEC §14). Node's fs.watch does not say whether an entry was created or
// moved in, so the rename is recognised by its shape in one read of the folder's events:
// the source name leaves and the target name arrives, back to back. A file created in
// place and then written shows no such pair (and its writes follow it), so it keeps the
// debounce; anything that does not fit the shape exactly keeps it too.
import { lstatSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export interface RenameArrival {
  close(): void;
}

interface FolderEvent {
  type: string;
  name: string;
}

/**
 * Calls `onArrived` once per batch of folder events in which one of `names` was last
 * touched by a rename whose source (the event just before, another name) no longer
 * exists, while the entry itself exists. Never throws: when the folder cannot be
 * watched, nothing is reported and the caller's debounce does the work.
 */
export function watchRenameArrival(folder: string, names: ReadonlySet<string>, onArrived: () => void): RenameArrival {
  let batch: FolderEvent[] = [];
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(folder, { persistent: false }, (type, name) => {
      if (typeof name !== 'string') return;
      // Events read together arrive in one turn of the loop: decide once they all are in.
      if (batch.length === 0) setImmediate(decide);
      batch.push({ type, name });
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  const decide = () => {
    const events = batch;
    batch = [];
    if (watcher === undefined) return;
    if (arrivedByRename(events, names, (n) => exists(join(folder, n)))) onArrived();
  };
  return {
    close() {
      watcher?.close();
      watcher = undefined;
    },
  };
}

/** The rule, pure: see watchRenameArrival. */
export function arrivedByRename(events: readonly FolderEvent[], names: ReadonlySet<string>, exists: (name: string) => boolean): boolean {
  let last = -1;
  events.forEach((e, i) => {
    if (names.has(e.name)) last = i;
  });
  const target = events[last];
  const source = events[last - 1];
  if (target === undefined || source === undefined) return false;
  if (target.type !== 'rename' || source.type !== 'rename' || names.has(source.name)) return false;
  // A name moved away from the target (vim's backup) arrives right after it and exists.
  const after = events[last + 1];
  if (after !== undefined && after.type === 'rename' && exists(after.name)) return false;
  return !exists(source.name) && exists(target.name);
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

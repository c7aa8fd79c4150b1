import { lstat, realpath } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';

// Kubernetes mounts a Secret or a ConfigMap as a folder the kubelet alone may change:
// each file is a symbolic link into `..data`, itself a link to a timestamped folder
// that is swapped whole on every update. Modes and owners there come from the
// manifest (defaultMode, fsGroup), so a fix for such a file is an edit of the
// manifest, never a chmod on the (read-only) mount. docker/entrypoint.sh tells these
// files apart by the same rule; change both together.

/** The kubelet's own names in such a folder (`..data`, `..2026_11_27_…`); Kubernetes forbids keys that begin with `..`. */
export function isKubeletInternalName(name: string): boolean {
  return name.startsWith('..') && name.length > 2;
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Whether `path` is managed by the kubelet: a folder holding a `..data` link (the
 * volume itself), or a file or folder whose real path lies under the `..data` target
 * of a folder above it — reached by the Secret's own names or by a link from elsewhere.
 */
export async function isKubeletManaged(path: string): Promise<boolean> {
  const abs = resolve(path);
  if (await isLink(join(abs, '..data'))) return true;
  let real: string;
  try {
    real = await realpath(abs);
  } catch {
    return false;
  }
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const data = join(dir, '..data');
    if (await isLink(data)) {
      const target = await realpath(data).catch(() => null);
      if (target !== null && real.startsWith(target + sep)) return true;
    }
    if (dirname(dir) === dir) return false;
  }
}

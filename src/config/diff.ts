import type { TunnelSpec } from '../tunnel/spec.js';

/** What a reload changes, tunnel by tunnel. */
export interface TunnelDiff {
  /** In the new config only: to start. In the new config's order. */
  added: TunnelSpec[];
  /** In the old config only: to stop. In the old config's order. */
  removed: TunnelSpec[];
  /** Same hash, same effective ssh options: leave running as they are (same pid). The new specs. */
  unchanged: TunnelSpec[];
  /**
   * Same hash, different effective ssh options (or health_check, or shared): the hash leaves ssh_options out (it
   * must equal the reference implementation's), yet the running ssh was started
   * with the old ones, so it is restarted.
   */
  changed: { before: TunnelSpec; after: TunnelSpec }[];
}

function sameOptions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** Compares the config in force with a new one, by hash. Pure. */
export function diffTunnels(current: readonly TunnelSpec[], next: readonly TunnelSpec[]): TunnelDiff {
  const before = new Map(current.map((t) => [t.hash, t]));
  const after = new Set(next.map((t) => t.hash));
  const out: TunnelDiff = { added: [], removed: [], unchanged: [], changed: [] };
  for (const t of next) {
    const old = before.get(t.hash);
    if (old === undefined) out.added.push(t);
    else if (sameOptions(old.ssh_options, t.ssh_options) && JSON.stringify(old.health_check) === JSON.stringify(t.health_check) && old.shared === t.shared) out.unchanged.push(t);
    else out.changed.push({ before: old, after: t });
  }
  for (const t of current) if (!after.has(t.hash)) out.removed.push(t);
  return out;
}

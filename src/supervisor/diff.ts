// Which tunnels a new config adds, removes, changes or leaves alone, by hash. The
// hash covers every field but ssh_options, so the same hash with other options is a
// change (restart) rather than an unchanged tunnel. Pure.
import type { TunnelSpec } from '../tunnel/spec.js';

export interface TunnelDiff {
  added: TunnelSpec[];
  removed: TunnelSpec[];
  unchanged: TunnelSpec[];
  changed: { before: TunnelSpec; after: TunnelSpec }[];
}

function sameOptions(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  // Order matters too: ssh keeps the first value it sees.
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

export function diffTunnels(current: readonly TunnelSpec[], next: readonly TunnelSpec[]): TunnelDiff {
  const before = new Map(current.map((t) => [t.hash, t]));
  const after = new Map(next.map((t) => [t.hash, t]));
  const out: TunnelDiff = { added: [], removed: [], unchanged: [], changed: [] };
  for (const t of next) {
    const old = before.get(t.hash);
    if (old === undefined) out.added.push(t);
    else if (sameOptions(old.ssh_options, t.ssh_options)) out.unchanged.push(t);
    else out.changed.push({ before: old, after: t });
  }
  for (const t of current) if (!after.has(t.hash)) out.removed.push(t);
  return out;
}

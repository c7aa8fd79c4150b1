// The order in which a reload's removals and additions go (SPEC §2, §14): a removed
// tunnel goes before the new ones start only when one of them listens on its port (the
// port must be free first). Every other removal waits until the new tunnels have
// started, which costs nothing and lets a renamed tunnel on a shared connection take
// over its predecessor's forward (same spec on the same connection, forward-queue.ts)
// with no `-O` run and no moment without a listener, and keeps a connection whose only
// tunnel is replaced from ending in between.
import type { TunnelPlan } from './tunnel-plan.js';

/** The port a tunnel listens on: the remote one for -R, the local one otherwise. */
function listenPort(plan: TunnelPlan): number {
  return plan.flag === '-R' ? plan.spec.remote_port.port : plan.spec.local_port.port;
}

/** Same forward on the same shared connection: to the master they are one listener. */
function sameForward(a: TunnelPlan, b: TunnelPlan): boolean {
  return (
    a.shared !== null &&
    b.shared !== null &&
    a.shared.connection.id === b.shared.connection.id &&
    a.shared.forward.flag === b.shared.forward.flag &&
    a.shared.forward.value === b.shared.forward.value
  );
}

export interface RemovalOrder<T> {
  /** Stopped, and gone, before any new or changed tunnel starts. */
  before: T[];
  /** Stopped once the new and changed tunnels have started. */
  after: T[];
}

/** Splits the removed tunnels (`plan` gives each one's plan) by whether an incoming tunnel needs its port first. */
export function removalOrder<T>(removed: readonly T[], plan: (t: T) => TunnelPlan, incoming: readonly TunnelPlan[]): RemovalOrder<T> {
  const ports = new Set(incoming.map(listenPort));
  const out: RemovalOrder<T> = { before: [], after: [] };
  for (const t of removed) {
    const p = plan(t);
    const needed = ports.has(listenPort(p)) && !incoming.some((q) => sameForward(p, q));
    (needed ? out.before : out.after).push(t);
  }
  return out;
}

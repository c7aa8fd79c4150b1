import type { Endpoint } from '../tunnel/endpoint.js';
import { forwardFlag, listensHere } from '../tunnel/ssh-args.js';
import type { DirectionMode, TunnelSpec } from '../tunnel/spec.js';
import type { TunnelEntry } from './tunnel-entry.js';
import type { Tree } from './tree.js';

/** Where a tunnel listens: this machine, or a remote server, at a set of addresses and a port. */
interface Listener {
  /** `local`, or `remote <host>` for the server the forward is opened on. */
  side: string;
  port: number;
  /** Addresses bound; `*` stands for every address (0.0.0.0, ::). */
  addresses: ReadonlySet<string>;
  field: 'local_port' | 'remote_port';
}

const WILDCARD = '*';
const LOOPBACK_V4 = '127.0.0.1';
const LOOPBACK_V6 = '::1';

/**
 * The addresses an endpoint binds. ssh binds a bare -L port on 127.0.0.1 (the argv
 * builder names it); a bare -R port is bound by sshd on its loopback, both families;
 * `localhost` means both families too.
 */
function addressesOf(e: Endpoint, bareMeansBoth: boolean): Set<string> {
  const host = e.host?.toLowerCase() ?? null;
  if (host === null) return new Set(bareMeansBoth ? [LOOPBACK_V4, LOOPBACK_V6] : [LOOPBACK_V4]);
  if (host === 'localhost') return new Set([LOOPBACK_V4, LOOPBACK_V6]);
  if (host === '0.0.0.0' || host === '::' || /^[0:]+$/.test(host)) return new Set([WILDCARD]);
  if (host === '0:0:0:0:0:0:0:1') return new Set([LOOPBACK_V6]);
  return new Set([host]);
}

/** The server part of `user@host`: two users forwarding the same port on one server still collide. */
const serverOf = (remoteHost: string) => remoteHost.slice(remoteHost.lastIndexOf('@') + 1).toLowerCase();

/** Which side listens depends on the direction mode (SPEC §4): -L listens here, -R on the server. */
function listenerOf(spec: TunnelSpec, mode: DirectionMode): Listener {
  if (listensHere(forwardFlag(spec.direction, mode))) {
    return { side: 'local', port: spec.local_port.port, addresses: addressesOf(spec.local_port, false), field: 'local_port' };
  }
  return { side: `remote ${serverOf(spec.remote_host)}`, port: spec.remote_port.port, addresses: addressesOf(spec.remote_port, true), field: 'remote_port' };
}

function overlaps(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.has(WILDCARD) || b.has(WILDCARD)) return true;
  for (const x of a) if (b.has(x)) return true;
  return false;
}

/**
 * The field on which `b` would listen where `a` already listens (same side, port and
 * an overlapping address), or null when they can both listen.
 */
export function sharedListener(a: TunnelSpec, b: TunnelSpec, mode: DirectionMode): 'local_port' | 'remote_port' | null {
  const la = listenerOf(a, mode);
  const lb = listenerOf(b, mode);
  return la.side === lb.side && la.port === lb.port && overlaps(la.addresses, lb.addresses) ? lb.field : null;
}

/**
 * Refuses two tunnels with the same hash (the API could not tell them apart) and two
 * that would listen on the same address and port (the second could never start).
 * Each problem sits on the later entry and names the earlier one's position; the
 * entries without a conflict are returned, in order.
 */
export function checkConflicts(tree: Tree, entries: readonly TunnelEntry[], mode: DirectionMode): TunnelEntry[] {
  const accepted: TunnelEntry[] = [];
  const byHash = new Map<string, TunnelEntry>();
  const byPort = new Map<string, { entry: TunnelEntry; listener: Listener }[]>();
  for (const entry of entries) {
    const first = byHash.get(entry.spec.hash);
    if (first) {
      const { line, column } = tree.at(first.node);
      tree.error(
        entry.node,
        `tunnels[${entry.index}]`,
        'a tunnel that differs from every other in name, remote_host, ports, direction or interactive',
        `the same tunnel as tunnels[${first.index}] at line ${line}, column ${column} (hash ${entry.spec.hash})`,
      );
      continue;
    }
    byHash.set(entry.spec.hash, entry);

    const listener = listenerOf(entry.spec, mode);
    const key = `${listener.side}|${listener.port}`;
    const same = byPort.get(key) ?? [];
    const clash = same.find((o) => overlaps(o.listener.addresses, listener.addresses));
    if (clash) {
      const { line, column } = tree.at(clash.entry.portNodes[clash.listener.field]);
      const where = listener.side === 'local' ? 'on this machine' : `on ${listener.side.slice('remote '.length)}`;
      tree.error(
        entry.portNodes[listener.field],
        `tunnels[${entry.index}].${listener.field}`,
        `a listening address and port no other tunnel uses (this tunnel listens ${where})`,
        `${JSON.stringify(entry.spec[listener.field].text)}, where tunnels[${clash.entry.index}] (line ${line}, column ${column}) already listens`,
      );
      continue;
    }
    same.push({ entry, listener });
    byPort.set(key, same);
    accepted.push(entry);
  }
  return accepted;
}

import { parseEndpoint, sshAddress } from '../tunnel/endpoint.js';
import { forwardFlag, type ForwardFlag } from '../tunnel/ssh-args.js';
import type { Direction, DirectionMode } from '../tunnel/spec.js';

/** The fields a sentence about a tunnel needs, as written in the file. */
export interface DescribeInput {
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
}

/** `user@bastion` → `bastion`: the person reading wants the machine, not the account. */
function machine(remoteHost: string): string {
  const at = remoteHost.lastIndexOf('@');
  return at >= 0 ? remoteHost.slice(at + 1) : remoteHost;
}

function side(written: string): { host: string | null; port: string } {
  const e = parseEndpoint(written);
  if (!e.ok) return { host: null, port: written };
  return { host: e.value.host === null ? null : sshAddress(e.value.host), port: String(e.value.port) };
}

/**
 * What a tunnel does, in parts a sentence is made of (the page words them in its
 * language): `bring` makes `source` (via the ssh host when the remote side names
 * another machine) reachable at `local`; `expose` offers `local` on `target`, bound to
 * `bind` when the remote side names an address. An address on the listening side is
 * where it binds; on the other side it is what is connected to.
 */
export type TunnelWords =
  | { kind: 'bring'; source: string; via: string | null; local: string }
  | { kind: 'expose'; local: string; target: string; bind: string | null }
  | { kind: 'socks'; local: string; via: string };

/** The parts under the direction mode (SPEC §4); null when the direction is not one the daemon knows. */
export function tunnelWords(t: DescribeInput, mode: DirectionMode): TunnelWords | null {
  if (t.direction !== 'local_to_remote' && t.direction !== 'remote_to_local' && t.direction !== 'socks') return null;
  const host = machine(t.remote_host) || '?';
  const local = side(t.local_port);
  const remote = side(t.remote_port);
  const localText = `${local.host ?? ''}:${local.port}`;
  if (t.direction === 'socks') return { kind: 'socks', local: localText, via: host };
  if (forwardFlag(t.direction as Direction, mode) === '-R') {
    return { kind: 'expose', local: localText, target: `${host}:${remote.port}`, bind: remote.host };
  }
  return remote.host !== null
    ? { kind: 'bring', source: `${remote.host}:${remote.port}`, via: host, local: localText }
    : { kind: 'bring', source: `${host}:${remote.port}`, via: null, local: localText };
}

/**
 * One sentence in English, e.g. "expose local :18120 on bastion:22323" (-R) or
 * "bring bastion:8000 to local :8001" (-L). Null when the direction is unknown.
 */
export function describeTunnel(t: DescribeInput, mode: DirectionMode): string | null {
  const w = tunnelWords(t, mode);
  if (w === null) return null;
  if (w.kind === 'socks') return `SOCKS proxy on local ${w.local} through ${w.via}`;
  if (w.kind === 'expose') return `expose local ${w.local} on ${w.target}${w.bind !== null ? ` (bound to ${w.bind})` : ''}`;
  return `bring ${w.source}${w.via !== null ? ` via ${w.via}` : ''} to local ${w.local}`;
}

/** How each direction value reads under the mode, for the form's choices. */
export function directionChoices(mode: DirectionMode): { value: Direction; label: string; flag: ForwardFlag }[] {
  const label = (d: Direction) => {
    const flag = forwardFlag(d, mode);
    if (flag === '-D') return 'a SOCKS proxy here that reaches anything the remote host can, no remote port (ssh -D)';
    return flag === '-R' ? 'expose a local service on the remote host (ssh -R)' : 'bring a remote service to this machine (ssh -L)';
  };
  return (['remote_to_local', 'local_to_remote', 'socks'] as const).map((value) => ({ value, label: label(value), flag: forwardFlag(value, mode) }));
}

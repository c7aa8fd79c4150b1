import { parseEndpoint, sshAddress } from '../tunnel/endpoint.js';
import { forwardFlag } from '../tunnel/ssh-args.js';
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
 * One sentence saying what a tunnel does under the direction mode (SPEC §4), e.g.
 * "expose local :18120 on bastion:22323" (-R) or "bring bastion:8000 to local :8001" (-L).
 * An address on the listening side is where it binds; on the other side it is what is
 * connected to. Null when the direction is not one the daemon knows.
 */
export function describeTunnel(t: DescribeInput, mode: DirectionMode): string | null {
  if (t.direction !== 'local_to_remote' && t.direction !== 'remote_to_local' && t.direction !== 'socks') return null;
  const host = machine(t.remote_host) || '?';
  const local = side(t.local_port);
  const remote = side(t.remote_port);
  const localText = `local ${local.host ?? ''}:${local.port}`;
  if (t.direction === 'socks') return `SOCKS proxy on ${localText} through ${host}`;
  if (forwardFlag(t.direction as Direction, mode) === '-R') {
    const bind = remote.host !== null ? ` (bound to ${remote.host})` : '';
    return `expose ${localText} on ${host}:${remote.port}${bind}`;
  }
  const source = remote.host !== null ? `${remote.host}:${remote.port} via ${host}` : `${host}:${remote.port}`;
  return `bring ${source} to ${localText}`;
}

/** How each direction value reads under the mode, for the form's choices. */
export function directionChoices(mode: DirectionMode): { value: Direction; label: string }[] {
  const label = (d: Direction) => {
    const flag = forwardFlag(d, mode);
    if (flag === '-D') return 'a SOCKS proxy here that reaches anything the remote host can, no remote port (ssh -D)';
    return flag === '-R' ? 'expose a local service on the remote host (ssh -R)' : 'bring a remote service to this machine (ssh -L)';
  };
  return (['remote_to_local', 'local_to_remote', 'socks'] as const).map((value) => ({ value, label: label(value) }));
}

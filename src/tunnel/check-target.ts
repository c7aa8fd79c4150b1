// Where a health_check connects through a tunnel's forward (SPEC §5). Pure: the one
// rule the daemon runs checks by and `check` warns by.
import type { TunnelSpec } from './spec.js';
import { listensHere, type ForwardFlag } from './ssh-args.js';

/** The listening side of the forward, as reached from the daemon. */
export interface CheckTarget {
  host: string;
  port: number;
}

const WILDCARD: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1', '*': '127.0.0.1', '': '127.0.0.1' };
const isLoopback = (h: string) => h === 'localhost' || h === '::1' || /^127\./.test(h);

/**
 * Our listening address for -L; for -R, the server's side when it listens beyond
 * loopback and the server is reached directly (`serverEndpoint` from ssh -G, null
 * behind a proxy). A loopback bind on the server is out of our reach: null.
 */
export function checkTarget(spec: TunnelSpec, flag: ForwardFlag, serverEndpoint: { host: string } | null): CheckTarget | null {
  if (listensHere(flag)) {
    const bind = spec.local_port.host ?? '127.0.0.1';
    return { host: WILDCARD[bind] ?? bind, port: spec.local_port.port };
  }
  const bind = spec.remote_port.host;
  if (bind === null || isLoopback(bind) || serverEndpoint === null) return null;
  return { host: bind in WILDCARD ? serverEndpoint.host : bind, port: spec.remote_port.port };
}

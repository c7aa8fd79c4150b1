import type { Endpoint } from './endpoint.js';

/** `socks`: a dynamic SOCKS5 forward (ssh -D) on local_port, with no remote_port (SPEC §14). */
export type Direction = 'local_to_remote' | 'remote_to_local' | 'socks';
export const DIRECTIONS: readonly Direction[] = ['local_to_remote', 'remote_to_local', 'socks'];
/** What a config problem says `direction` must be; the page codes problems by this text. */
export const DIRECTION_EXPECTED = `${DIRECTIONS.slice(0, -1).join(', ')} or ${DIRECTIONS[DIRECTIONS.length - 1]}`;

/** How `direction` is read: the seed's "expose/bring" sense, or ssh's own -L/-R sense. */
export type DirectionMode = 'default' | 'ssh-standard';
export const DIRECTION_MODES: readonly DirectionMode[] = ['default', 'ssh-standard'];

/** The remote_port of a `socks` tunnel, which has none: its text (in the hash and the status record) is empty. */
export const NO_REMOTE_PORT: Endpoint = Object.freeze({ host: null, port: 0, text: '' });

/** A validated tunnel entry from the config file. */
export interface TunnelSpec {
  hash: string;
  name: string;
  remote_host: string;
  remote_port: Endpoint;
  local_port: Endpoint;
  direction: Direction;
  interactive: boolean;
  /** ssh options from the entry, already merged over the file's top-level ssh_options. */
  ssh_options: Record<string, string>;
  /** The entry as written (every key, unknown ones too), for the API's /list. */
  written: Record<string, unknown>;
  /** 1-based line of the entry in the file, for messages. */
  line: number;
  /** The entry's `health_check:`; absent when it has none. */
  health_check?: HealthCheck;
  /** `false`: a connection of its own (SPEC §14); absent: shared with the host's other tunnels. */
  shared?: false;
}

/** Whether a tunnel shares its host's connection (SPEC §14). */
export function sharesConnection(spec: Pick<TunnelSpec, 'shared'>): boolean {
  return spec.shared !== false;
}

/** A tunnel's `health_check:` (SPEC §5), validated by config/health-check.ts. */
export interface HealthCheck {
  /** tcp: a connection through the forward stays open; http: a request through it gets any answer. */
  type: 'tcp' | 'http';
  /** Seconds between checks. */
  interval: number;
  /** Consecutive failures after which the tunnel is restarted. */
  failures: number;
  /** For http: the request path (default `/`). */
  path: string;
}

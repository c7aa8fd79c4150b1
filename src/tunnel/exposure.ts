// Exposure (SPEC §5): a forward that opens a port to more than this machine is told,
// never refused — the user may mean it. Pure: the one rule `check`, the daemon's log,
// the API's answers and the panel all warn by. The config's endpoints are TCP only
// (`host:port`), so a unix socket (the daemon's own among them) can never be forwarded
// by a tunnel and is not a case here.
import { ok } from '../kernel/result.js';
import { parseEndpoint, sshAddress, type Endpoint } from './endpoint.js';
import { forwardFlag, LOOPBACK_BIND, type ForwardFlag } from './ssh-args.js';
import { DIRECTIONS, NO_REMOTE_PORT, type Direction, type DirectionMode, type TunnelSpec } from './spec.js';

/** Which of the product's own TCP listeners: the daemon's API (with /v1, as `tunnel-manager proxy` serves it), or the panel. */
export type OwnListenerKind = 'api' | 'panel';

/** One of the product's own TCP listeners, where it listens; port 0 (not bound yet) is never matched. */
export interface OwnListener {
  kind: OwnListenerKind;
  host: string;
  port: number;
}

/** Who can connect to a forward's listening side. */
export type Reach =
  /** Loopback here: every account on this machine. */
  | 'local_accounts'
  /** A non-loopback address here: whoever reaches this machine. */
  | 'local_network'
  /** Loopback on the server: every account on the server. */
  | 'server_accounts'
  /** All (or a non-loopback) address of the server: whoever reaches the server. */
  | 'server_network';

/**
 * One warning. Every text is as it goes into a sentence: `listen` the address and port
 * listened on, `server` the ssh destination as written, `target` what connections go to.
 */
export type Exposure =
  /** An -L or -D listener on a non-loopback address here (`all`: every address of this machine). */
  | { kind: 'open_listener'; flag: '-L' | '-D'; all: boolean; listen: string; server: string; target: string | null; reach: 'local_network' }
  /** An -R bound to all of the server's addresses. */
  | { kind: 'remote_all'; flag: '-R'; listen: string; server: string; target: string; reach: 'server_network' }
  /** A forward whose target is one of the product's own listeners. */
  | { kind: 'own_listener'; flag: '-L' | '-R'; listener: OwnListenerKind; address: string; listen: string; server: string; reach: Reach };

/** What the rule reads of a tunnel (a TunnelSpec has it all). */
export type ExposureInput = Pick<TunnelSpec, 'remote_host' | 'remote_port' | 'local_port' | 'direction'>;

type Scope = 'all' | 'loopback' | 'other';

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 as the last two), or null when it is not one. */
function v6Groups(h: string): number[] | null {
  if (!h.includes(':')) return null;
  let addr = h.split('%')[0] ?? '';
  let tail: number[] = [];
  const lastColon = addr.lastIndexOf(':');
  const v4 = V4.exec(addr.slice(lastColon + 1));
  if (v4) {
    const o = v4.slice(1).map(Number);
    if (o.some((x) => x > 255)) return null;
    tail = [(o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!];
    // "::ffff:10.0.0.1" leaves "::ffff", "::10.0.0.1" leaves "::".
    addr = addr.slice(0, lastColon + 1);
    if (!addr.endsWith('::')) addr = addr.slice(0, -1);
  }
  const halves = addr.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':'));
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const width = head.length + rest.length + tail.length;
  if (halves.length === 1 ? width !== 8 : width > 7) return null;
  const zeros = halves.length === 2 ? Array<number>(8 - width).fill(0) : [];
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}

/** The address in one canonical text: IPv4 dotted (an IPv4-mapped IPv6 too), IPv6 as its groups, a name lower-cased. */
function canonical(host: string): string {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const g = v6Groups(h);
  if (g === null) return h;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  return g.map((x) => x.toString(16)).join(':');
}

const V6_ANY = '0:0:0:0:0:0:0:0';
const V6_LOOPBACK = '0:0:0:0:0:0:0:1';

/**
 * Where an address listens (or what it connects to): every address (`0.0.0.0`, `::`,
 * and ssh's `*` and empty bind), loopback (`127.0.0.0/8`, `::1`, `localhost`), or
 * anything else — a LAN address, a public one, a host name.
 */
export function addressScope(host: string): Scope {
  const c = canonical(host);
  if (c === '' || c === '*' || c === '0.0.0.0' || c === V6_ANY) return 'all';
  if (c === 'localhost' || c.endsWith('.localhost') || c === V6_LOOPBACK) return 'loopback';
  const v4 = V4.exec(c);
  if (v4 && v4.slice(1).every((o) => Number(o) <= 255)) return v4[1] === '127' ? 'loopback' : 'other';
  return 'other';
}

/** The address a listening endpoint binds: a bare port binds 127.0.0.1, named (ssh-args.ts). */
const bindOf = (e: Endpoint): string => e.host ?? LOOPBACK_BIND;
const shown = (host: string, port: number): string => `${host === '' ? '' : sshAddress(host)}:${port}`;
/** What a target endpoint connects to: a bare port is `localhost` on that side (ssh-args.ts). */
const targetHost = (e: Endpoint): string => e.host ?? 'localhost';

/** The server part of `user@host`, for telling whether the server is this machine. */
const serverHost = (remoteHost: string): string => remoteHost.slice(remoteHost.lastIndexOf('@') + 1);

const isLocalhostName = (c: string): boolean => c === 'localhost' || c.endsWith('.localhost');
/** What `localhost` connects to: either loopback address. */
const LOCALHOST = new Set(['localhost', '127.0.0.1', V6_LOOPBACK]);

/**
 * Whether connecting to `host:port` (from this machine) reaches `own`. A listener on
 * every address answers on loopback (`0.0.0.0` the IPv4 side only, `::` both: Linux's
 * dual-stack default); a loopback listener answers its own address, and `localhost`
 * stands for either loopback address; another address answers itself. A LAN address
 * that happens to be this machine's cannot be told without asking the system, so it is
 * matched only when it is the very address the listener names.
 */
function reaches(host: string, port: number, own: OwnListener): boolean {
  if (own.port === 0 || own.port !== port) return false;
  const t = canonical(host);
  const o = canonical(own.host);
  const ts = addressScope(host);
  switch (addressScope(own.host)) {
    case 'all':
      return (ts === 'loopback' || ts === 'all') && (o === V6_ANY || isLocalhostName(t) || !t.includes(':'));
    case 'loopback':
      return ts === 'loopback' && (t === o || (isLocalhostName(t) && LOCALHOST.has(o)) || (isLocalhostName(o) && LOCALHOST.has(t)));
    case 'other':
      return t === o;
  }
}

const ownListenerAt = (own: readonly OwnListener[], host: string, port: number): OwnListener | undefined => own.find((l) => reaches(host, port, l));

/**
 * Every way `t` opens a port to more than this machine, under the direction mode
 * (SPEC §4: which side listens). A forward of one of the product's own listeners is
 * told once, with who can reach it, instead of also as an open listener.
 */
export function exposureOf(t: ExposureInput, mode: DirectionMode, own: readonly OwnListener[]): Exposure[] {
  const flag: ForwardFlag = forwardFlag(t.direction, mode);
  const server = t.remote_host;
  if (flag === '-D') {
    const bind = bindOf(t.local_port);
    const scope = addressScope(bind);
    if (scope === 'loopback') return [];
    return [{ kind: 'open_listener', flag, all: scope === 'all', listen: shown(bind, t.local_port.port), server, target: null, reach: 'local_network' }];
  }
  if (flag === '-L') {
    const bind = bindOf(t.local_port);
    const scope = addressScope(bind);
    const listen = shown(bind, t.local_port.port);
    const target = targetHost(t.remote_port);
    // The target is connected to from the server: one of ours only when the server is
    // this machine, or when it is the address one of ours listens on by name.
    const serverHere = addressScope(serverHost(server)) === 'loopback';
    const hit = serverHere || addressScope(target) === 'other' ? ownListenerAt(own, target, t.remote_port.port) : undefined;
    if (hit !== undefined) {
      return [{ kind: 'own_listener', flag, listener: hit.kind, address: shown(hit.host, hit.port), listen, server, reach: scope === 'loopback' ? 'local_accounts' : 'local_network' }];
    }
    if (scope === 'loopback') return [];
    return [{ kind: 'open_listener', flag, all: scope === 'all', listen, server, target: shown(target, t.remote_port.port), reach: 'local_network' }];
  }
  const bind = bindOf(t.remote_port);
  const scope = addressScope(bind);
  const listen = shown(bind, t.remote_port.port);
  const target = targetHost(t.local_port);
  const hit = ownListenerAt(own, target, t.local_port.port);
  if (hit !== undefined) {
    return [{ kind: 'own_listener', flag, listener: hit.kind, address: shown(hit.host, hit.port), listen, server, reach: scope === 'loopback' ? 'server_accounts' : 'server_network' }];
  }
  if (scope !== 'all') return [];
  return [{ kind: 'remote_all', flag, listen, server, target: shown(target, t.local_port.port), reach: 'server_network' }];
}

const LISTENER_WORDS: Record<OwnListenerKind, { name: string; power: string; token: string }> = {
  api: { name: "the daemon's API", power: 'start, stop and rewrite every tunnel', token: 'TUNNEL_API_TOKEN' },
  panel: { name: 'the web panel', power: 'edit the tunnels and log in to the interactive ones', token: 'PANEL_TOKEN' },
};

function reachWords(r: Reach, server: string): string {
  switch (r) {
    case 'local_accounts':
      return 'every account on this machine';
    case 'local_network':
      return 'anyone who can reach this machine';
    case 'server_accounts':
      return `every account on ${server}`;
    case 'server_network':
      return `anyone who can reach ${server}`;
  }
}

/** The warning as one English sentence, naming who can reach what (check, the log, the API). */
export function exposureText(e: Exposure): string {
  const who = reachWords(e.reach, e.server);
  switch (e.kind) {
    case 'open_listener': {
      const where = e.all ? `every address of this machine (${e.listen})` : `${e.listen}, not loopback`;
      const what = e.flag === '-D'
        ? `can use it as a proxy from ${e.server} into every network ${e.server} reaches, its own loopback services included`
        : `reaches ${e.target ?? '?'} through ${e.server}`;
      return `its ${e.flag === '-D' ? 'SOCKS proxy' : '-L forward'} listens on ${where}: ${who} ${what}; bind it to 127.0.0.1 unless that is meant`;
    }
    case 'remote_all':
      return `its -R forward asks ${e.server} to listen on all of its addresses (${e.listen}): ${who} reaches ${e.target} on this machine (once the server's sshd allows it: GatewayPorts clientspecified or yes); bind it to 127.0.0.1 unless that is meant`;
    case 'own_listener': {
      const l = LISTENER_WORDS[e.listener];
      const where = e.flag === '-R' ? `${e.listen} on ${e.server}` : `${e.listen} on this machine`;
      return `it forwards ${l.name} (${e.address}) to ${where}: ${who} gets to it as this machine's own account, and with it can ${l.power} (${l.token}, when set, is still asked for)`;
    }
  }
}

/** A tunnel's fields as written (the panel's form, a /config body): strings, as in the file. */
export interface WrittenForward {
  remote_host: string;
  remote_port: string;
  local_port: string;
  direction: string;
}

/**
 * The same rule for fields as written, before (or without) the loader: none for fields
 * it would refuse, since such a tunnel never runs.
 */
export function exposureOfWritten(f: WrittenForward, mode: DirectionMode, own: readonly OwnListener[]): Exposure[] {
  // Absent means remote_to_local (SPEC §3).
  const direction = f.direction === '' ? 'remote_to_local' : f.direction;
  if (!(DIRECTIONS as readonly string[]).includes(direction)) return [];
  const local = parseEndpoint(f.local_port);
  const remote = direction === 'socks' ? ok(NO_REMOTE_PORT) : parseEndpoint(f.remote_port);
  if (!local.ok || !remote.ok || f.remote_host === '') return [];
  return exposureOf({ remote_host: f.remote_host, remote_port: remote.value, local_port: local.value, direction: direction as Direction }, mode, own);
}

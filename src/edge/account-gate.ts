/**
 * The one identity rule for local callers (SPEC §6, "No other account"), in front of
 * every TCP listener the product opens — the daemon's, `tunnel-manager proxy`'s, the
 * panel's — and of their WebSocket upgrades. A loopback port is open to every account
 * of the machine, and these listeners hold the owner's SSH login and provider keys:
 * without a credential, only the account the process runs as and root get through.
 *
 * Who may pass:
 * - the owner's account, root, and the accounts named in TUNNEL_API_ALLOWED_USERS;
 * - a peer from the network (no socket of this machine's namespace is at the other
 *   end): the listen rules already demand a token off loopback;
 * - any other account, or a loopback peer whose account cannot be read, only to a
 *   route whose credential is set (TUNNEL_API_TOKEN, proxy keys, PANEL_TOKEN): the
 *   route's own check then asks for it, as it asks the owner.
 * The unix socket has no such rule: its mode (0600) is the rule.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, pathOf, type RequestListener } from './http-listener.js';
import { answerRefusal, refuseUpgrade, type Refusal } from './browser-guard.js';
import { showAccount, type AllowedAccounts } from './account-names.js';
import { peerOf, type Peer } from './peer-account.js';

/** A credential that guards some routes: how the owner hands it out, and whether it is set now. */
export interface Credential {
  /** Said in a refusal: what the owner does to let another account in with it. */
  grant: string;
  isSet(): boolean;
}

/** What a request's route is guarded by: open to every account, or the credentials its route checks. */
export type Guards = 'open' | readonly Credential[];

/** The rule as one listener applies it. */
export interface AccountGate {
  /** The uid the listener's process runs as. */
  ownUid: number;
  /** TUNNEL_API_ALLOWED_USERS. */
  allowed: AllowedAccounts;
  /** The listener, for messages ("this daemon's API", "the panel"). */
  what: string;
  /**
   * The guards of a request path. A path that could be routed to more than one group
   * (not plain, see isPlainPath) lists every credential it could meet.
   */
  guardsOf(path: string): Guards;
  /** The peer of a connection (tests hand in their own table reader). */
  peer?(socket: IncomingMessage['socket']): Peer;
}

/** True for peers that pass without a credential. */
export function trusted(peer: Peer, gate: Pick<AccountGate, 'ownUid' | 'allowed'>): boolean {
  if (gate.allowed.kind === 'any' || peer.kind === 'network') return true;
  if (peer.kind === 'unknown') return false;
  return peer.uid === gate.ownUid || peer.uid === 0 || gate.allowed.uids.has(peer.uid);
}

/**
 * Why the peer may not reach `path`, or null when it may go on. The peer is asked for
 * only when it matters (a route with a credential unset): reading the kernel's tables
 * costs more the more sockets the machine has, and a route whose credential is set
 * lets every account through to its own check anyway.
 */
export function accountRefusal(peerOf: Peer | (() => Peer), path: string, gate: AccountGate): Refusal | null {
  const guards = gate.guardsOf(path);
  if (guards === 'open') return null;
  const unset = guards.filter((c) => !c.isSet());
  if (guards.length > 0 && unset.length === 0) return null;
  const peer = typeof peerOf === 'function' ? peerOf() : peerOf;
  if (trusted(peer, gate)) return null;
  const who = peer.kind === 'account' ? showAccount(peer.uid) : `a connection whose account cannot be known (${peer.kind === 'unknown' ? peer.why : ''})`;
  const owner = gate.ownUid === 0 ? `${showAccount(0)}` : `${showAccount(gate.ownUid)}, and root`;
  // A path the router could read as more than one group needs every credential it could meet.
  const credential = unset.map((c) => c.grant).join(', and ');
  return {
    status: 403,
    code: 'account_not_allowed',
    message: `${who} may not use ${gate.what}: without a credential it serves only the account it runs as, ${owner}. To let another account in, the owner can ${credential}, or name the account in TUNNEL_API_ALLOWED_USERS (account names or uids, comma-separated) in the environment it starts with`,
  };
}

// Each connection's peer is read once: kept-alive requests on it come from the same socket.
const peers = new WeakMap<object, Peer>();

function peerOfRequest(req: IncomingMessage, gate: AccountGate): Peer {
  const socket = req.socket;
  let peer = peers.get(socket);
  if (peer === undefined) {
    peer = gate.peer?.(socket) ?? peerOf(socket);
    peers.set(socket, peer);
  }
  return peer;
}

/** The refusal of a request under the rule, or null. */
export function refusalOfAccount(req: IncomingMessage, gate: AccountGate): Refusal | null {
  return accountRefusal(() => peerOfRequest(req, gate), pathOf(req.url), gate);
}

/**
 * The listener with the rule in front of it. `shape`: the body of a refusal in the
 * shape the route's clients read (the proxy's, under /v1); absent, the API's.
 */
export function guardAccounts(listener: RequestListener, gate: AccountGate, shape?: (req: IncomingMessage, refused: Refusal) => string | undefined): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const refused = refusalOfAccount(req, gate);
    if (refused === null) return listener(req, res);
    answerRefusal(res, refused, shape?.(req, refused) ?? errorBody(refused.code, refused.message));
  };
}

/** The same rule for WebSocket upgrades (the login terminals), answered on the raw socket. */
export function guardAccountsUpgrade(handler: (req: IncomingMessage, socket: Duplex, head: Buffer) => void, gate: AccountGate) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const refused = refusalOfAccount(req, gate);
    if (refused === null) return handler(req, socket, head);
    refuseUpgrade(socket, refused, errorBody(refused.code, refused.message));
  };
}

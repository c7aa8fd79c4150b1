/**
 * How `tunnel-cli` and the panel connect to the daemon (SPEC §6): only to a server
 * the user owns, checked after the connection is made and before a byte is sent. A
 * unix socket must be the user's, in folders no other account can write
 * (owned-path.ts); a TCP server on this machine must run as the user or root
 * (peer-account.ts: another account may have taken the daemon's port while it was
 * down, to collect the token and the one-time codes sent to it). A server on another
 * machine is trusted as its URL says (TLS, the token). The function is the
 * `createConnection` option of `http.request` and of `ws`.
 */
import net from 'node:net';
import { showAccount } from './account-names.js';
import { socketTrustProblem } from './owned-path.js';
import { peerOf, type Peer } from './peer-account.js';

/** The error a refused server gives: its message names the owner and the fix. */
export class UntrustedServer extends Error {
  override readonly name = 'UntrustedServer';
  readonly code = 'EUNTRUSTED';
}

/** Why a TCP server whose connection has `peer` is not to be trusted by `uid`, or null. */
export function serverTrustProblem(peer: Peer, uid: number, where: string): string | null {
  switch (peer.kind) {
    case 'network':
      return null;
    case 'unknown':
      // Where the system cannot tell (not Linux), the client cannot check: it goes on, as before the rule.
      return peer.unsupported === true ? null : `the server at ${where} cannot be told apart from another account's: ${peer.why}`;
    case 'account':
      if (peer.uid === uid || peer.uid === 0) return null;
      return `the server at ${where} runs as ${showAccount(peer.uid)}, not as you (${showAccount(uid)}) or root: it is not your daemon (another account may have taken its port); nothing was sent to it. Stop it, or point --url at your daemon`;
  }
}

type Done = (err: Error | null, socket?: net.Socket) => void;
type ConnectOptions = { socketPath?: string; host?: string | null; hostname?: string | null; port?: number | string | null; family?: number };

/**
 * A `createConnection` that hands over only a connection to a server `uid` owns.
 * `socketNamed`: the socket's path was given by the user (see socketTrustProblem).
 */
export function trustedConnection(uid: number, socketNamed = false): (options: ConnectOptions, done: Done) => undefined {
  return (options, done) => {
    if (options.socketPath !== undefined) {
      const problem = socketTrustProblem(options.socketPath, uid, socketNamed);
      if (problem !== null) {
        done(new UntrustedServer(problem));
        return undefined;
      }
      handOver(net.connect({ path: options.socketPath }), null, done);
      return undefined;
    }
    const host = (options.hostname ?? options.host ?? 'localhost').replace(/^\[|\]$/g, '');
    const port = Number(options.port ?? 80);
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    handOver(net.connect({ host, port, ...(options.family === undefined ? {} : { family: options.family }) }), (s) => serverTrustProblem(peerOf(s), uid, where), done);
    return undefined;
  };
}

function handOver(socket: net.Socket, check: ((s: net.Socket) => string | null) | null, done: Done): void {
  const failed = (e: Error) => done(e);
  socket.once('error', failed);
  socket.once('connect', () => {
    socket.off('error', failed);
    const problem = check?.(socket) ?? null;
    if (problem === null) return done(null, socket);
    socket.destroy();
    done(new UntrustedServer(problem));
  });
}

import { chmod } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { getRequestListener, RequestError } from '@hono/node-server';
import type { Hono } from 'hono';
import { answerParserErrors, closeEveryConnection, errorBody, isV1Path, LISTENER_OPTIONS, pathOf, requireHost, type RequestListener } from '../edge/http-listener.js';
import { guardRequests, guardUpgrade, type ListenerPolicy } from '../edge/browser-guard.js';
import { guardAccounts, guardAccountsUpgrade, type AccountGate } from '../edge/account-gate.js';
import { NO_OTHER_ACCOUNT, type AllowedAccounts } from '../edge/account-names.js';
import { apiTokenCredential, daemonGuards, localGate, proxyKeysCredential } from '../edge/credentials.js';
import { listenFailure, showAddress } from '../edge/listen-failure.js';
import { err, ok, type Result } from '../kernel/result.js';
import { checkListenSecurity, type ListenAddress } from '../edge/listen-address.js';
import { loadingAudience, loadingGate, refuseUpgradeWhileLoading, type LoadingAudience } from './loading.js';
import { prepareSocketPath, removeSocket, socketInode } from './socket.js';

/** Serves a request before the Hono app and returns true, or returns false and leaves it to the app. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Takes over a connection that asked to become a WebSocket. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** The daemon's two listeners, serving the API on TCP and on the unix socket. */
export interface Listeners {
  /** The TCP port actually bound (useful with port 0). */
  tcpPort: number;
  socketPath: string;
  /** Stops accepting, ends open connections (SSE too), removes the socket file; idempotent. */
  close(): Promise<void>;
}

/**
 * Why the listeners could not start (a user's setup problem, not a bug): the daemon
 * prints `message` and exits. Nothing is left listening when it is thrown.
 */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(readonly reason: 'insecure' | 'tcp' | 'socket', message: string) {
    super(message);
  }
}

/**
 * A request without `Host` (HTTP/1.0 allows it) is served as if it named this host,
 * since the app needs a URL. One the adapter cannot turn into a URL (a backslash in
 * the path, a host that does not parse) or that Node's parser refuses gets the JSON
 * error body, as every other error does. `fast`: requests served without the app
 * (the chat proxy's endpoints, whose answers the app would only pass through).
 * `guard`: the browser guard (TCP only), after the target is made a path and before
 * the fast path, so that no route escapes it.
 */
function serverFor(app: Hono, fast: FastPath | undefined, loading: () => boolean, audience: LoadingAudience, guard?: { browser: ListenerPolicy; accounts: AccountGate }): Server {
  const listener = getRequestListener(app.fetch, {
    hostname: 'localhost',
    errorHandler: (e) =>
      e instanceof RequestError
        ? jsonError(400, 'bad_request', `the request cannot be served: ${e.message}`)
        : jsonError(500, 'internal_error', 'internal error'),
  });
  const gate = loadingGate(loading, audience);
  const served: RequestListener = (req, res) => {
    if (gate(req, res)) return;
    if (fast?.(req, res) === true) return;
    void listener(req, res);
  };
  const server = createServer(
    LISTENER_OPTIONS,
    // The control API's methods (PUT /config) and the proxy's (DELETE /v1/responses/{id}).
    requireHost(
      // The browser guard first: it reads headers only, while the account rule may read the
      // kernel's socket table (about 4 ms on a large machine), which a refused page is not worth.
      guard === undefined ? served : guardRequests(guardAccounts(served, guard.accounts, (req, refused) => (isV1Path(pathOf(req.url)) ? guard.browser.v1ErrorJson?.(req, refused) : undefined)), guard.browser),
      'GET, HEAD, POST, PUT, DELETE, OPTIONS',
    ),
  );
  answerParserErrors(server);
  return server;
}

const jsonError = (status: number, code: string, message: string): Response =>
  new Response(errorBody(code, message), { status, headers: { 'content-type': 'application/json' } });

function listenOn(server: Server, bind: () => void): Promise<Result<void, Error>> {
  return new Promise((resolve) => {
    const onError = (e: Error) => resolve(err(e));
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve(ok(undefined));
    });
    bind();
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    if (!server.listening) return done();
    server.close(() => done());
    // Open SSE streams and keep-alive connections would hold close() forever.
    closeEveryConnection(server);
  });
}

/**
 * Starts the TCP listener and the unix socket, or throws a ListenError. Refuses a
 * non-loopback TCP address without a token. The socket is created mode 0600: the umask is narrowed around the
 * bind itself, so there is no moment when another user could connect, and the chmod
 * after it only confirms it.
 */
export async function startListeners(opts: {
  tcpApp: Hono;
  /** Tried before tcpApp on every TCP request (the chat proxy's endpoints at /v1). */
  tcpFastPath?: FastPath;
  socketApp: Hono;
  listen: ListenAddress;
  socketPath: string;
  tokens: readonly string[] | null;
  /** Owner expected for the socket's folder; defaults to the current user. */
  uid?: number | null;
  /** WebSocket upgrades (the login terminals), per listener. */
  upgrade?: { tcp: UpgradeHandler; socket: UpgradeHandler };
  /** TUNNEL_API_ALLOWED_HOSTS: names besides loopback and the listen address that TCP requests may give as Host. */
  allowedHosts?: readonly string[];
  /** `proxy.cors_origins` in force, for the Origin rule of /v1 on TCP. */
  corsOrigins?: () => readonly string[] | null;
  /** The body of a browser-guard refusal under /v1, in its clients' shape (the proxy's v1RefusalJson). */
  v1ErrorJson?: ListenerPolicy['v1ErrorJson'];
  /** TUNNEL_API_ALLOWED_USERS: accounts besides this one and root let in without a credential (SPEC §6). */
  allowedAccounts?: AllowedAccounts;
  /** Whether the config in force has proxy keys (`proxy.api_keys` or `proxy.clients`), which let other accounts reach /v1; false unless told. */
  proxyKeysSet?: () => boolean;
  /** True until the first load of the config file is done: every route but /health answers 503 `loading` (api/loading.ts), on TCP with tokens only to a request that passed the token. */
  loading?: () => boolean;
}): Promise<Listeners> {
  const loading = opts.loading ?? (() => false);
  const upgradeWith = (handler: UpgradeHandler, audience: LoadingAudience): UpgradeHandler => (req, socket, head) => {
    if (!refuseUpgradeWhileLoading(loading, req, socket, audience)) handler(req, socket, head);
  };
  const secure = checkListenSecurity(opts.listen, opts.tokens);
  if (!secure.ok) throw new ListenError('insecure', secure.error);

  const { host, port } = opts.listen;
  const shown = showAddress(host, port);
  // Every TCP request passes the browser guard (SPEC §6); the socket needs none.
  const guard: ListenerPolicy = { listenHost: host, allowedHosts: opts.allowedHosts ?? [], corsOrigins: opts.corsOrigins ?? (() => null), ...(opts.v1ErrorJson === undefined ? {} : { v1ErrorJson: opts.v1ErrorJson }) };
  // On TCP the token is checked before anyone learns the daemon is loading; the socket has no token.
  const tcpAudience = loadingAudience(opts.tokens);
  // And every TCP request passes the identity rule (SPEC §6, "No other account").
  const accounts = localGate("this daemon's API", opts.allowedAccounts ?? NO_OTHER_ACCOUNT, daemonGuards(apiTokenCredential(opts.tokens), proxyKeysCredential(opts.proxyKeysSet ?? (() => false))));
  const tcp = serverFor(opts.tcpApp, opts.tcpFastPath, loading, tcpAudience, { browser: guard, accounts });
  if (opts.upgrade) tcp.on('upgrade', guardUpgrade(guardAccountsUpgrade(upgradeWith(opts.upgrade.tcp, tcpAudience), accounts), guard));
  const tcpUp = await listenOn(tcp, () => tcp.listen(port, host));
  if (!tcpUp.ok) throw new ListenError('tcp', listenFailure(shown, tcpUp.error));

  const path = opts.socketPath;
  const ready = await prepareSocketPath(path, opts.uid === undefined ? (process.getuid?.() ?? null) : opts.uid);
  if (!ready.ok) {
    await closeServer(tcp);
    throw new ListenError('socket', ready.error);
  }
  const unix = serverFor(opts.socketApp, undefined, loading, null);
  if (opts.upgrade) unix.on('upgrade', upgradeWith(opts.upgrade.socket, null));
  const unixUp = await listenOn(unix, () => {
    // listen() binds synchronously, so the narrowed umask covers exactly the bind.
    const previous = process.umask(0o177);
    try {
      unix.listen(path);
    } finally {
      process.umask(previous);
    }
  });
  if (!unixUp.ok) {
    await closeServer(tcp);
    throw new ListenError('socket', listenFailure(path, unixUp.error, 'socket'));
  }
  let ino: number | null;
  try {
    await chmod(path, 0o600);
    ino = await socketInode(path);
  } catch (e) {
    // Nothing stays listening when the start fails (the socket file was just made by us).
    await Promise.all([closeServer(tcp), closeServer(unix)]);
    throw new ListenError('socket', `cannot listen on ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }

  let closing: Promise<void> | null = null;
  return {
    tcpPort: (tcp.address() as AddressInfo).port,
    socketPath: path,
    close() {
      closing ??= (async () => {
        await Promise.all([closeServer(tcp), closeServer(unix)]);
        await removeSocket(path, ino);
      })();
      return closing;
    },
  };
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenFailure, showAddress } from '../edge/listen-failure.js';
import { answerParserErrors, closeEveryConnection, LISTENER_OPTIONS, requireHost } from '../edge/http-listener.js';
import { guardRequests } from '../edge/browser-guard.js';
import { guardAccounts } from '../edge/account-gate.js';
import { NO_OTHER_ACCOUNT, type AllowedAccounts } from '../edge/account-names.js';
import { localGate, proxyHasKeys, proxyKeysCredential } from '../edge/credentials.js';
import { v1RefusalJson } from './listener-refusal.js';
import { bearerMatches, clientAuthorization } from './clients/api-keys.js';
import { callerOf } from './clients/gate.js';
import type { ProxyDeps } from './deps.js';
import { sendError } from './errors.js';
import { createDispatch } from './dispatch.js';
import { createProxyMetrics } from './observe/metrics.js';
import { runtimeCache } from './route/providers.js';
import { pickRequestId } from './request/request-id.js';

/** A running `tunnel-manager proxy` listener. */
export interface ProxyServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting, ends open requests (their upstream requests are aborted) and resolves when the listener is closed. */
  close(): Promise<void>;
}

/**
 * Serves the `/v1` group alone on host:port, with the node:http fast path, and the
 * proxy's series on `GET /metrics` (behind `proxy.api_keys` like `/v1`, since this
 * listener is the clients').
 */
export function startProxyServer(options: {
  host: string;
  port: number;
  deps: ProxyDeps;
  /** How long a request may take to arrive (REQUEST_TIMEOUT_MS unless set, as for a test). */
  requestTimeoutMs?: number;
  /** How long a CONNECT's connection is kept after its answer (http-listener's default unless set, as for a test). */
  connectLingerMs?: number;
  /** TUNNEL_API_ALLOWED_HOSTS: names besides loopback and `host` that requests may give as Host. */
  allowedHosts?: readonly string[];
  /** TUNNEL_API_ALLOWED_USERS: accounts besides this one and root let in without a key (SPEC §6). */
  allowedAccounts?: AllowedAccounts;
}): Promise<ProxyServer> {
  const deps = { ...options.deps, metrics: options.deps.metrics ?? createProxyMetrics() };
  // No framework between the socket and the upstream: the route table's dispatch itself.
  const handler = createDispatch(deps);
  const runtimeOf = runtimeCache(deps.env ?? process.env);
  const metrics: http.RequestListener = (req, res) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    const runtime = runtimeOf(deps.getConfig());
    const keys = runtime.clientKeys;
    if (keys !== null && !bearerMatches(clientAuthorization(req.headers), keys)) {
      return sendError(res, requestId, { status: 401, type: 'authentication_error', code: 'invalid_api_key', message: 'GET /metrics needs "Authorization: Bearer <one of proxy.api_keys>"' }, true);
    }
    // Without shared keys, a group guarded by client keys does not leave its series open.
    if (keys === null && runtime.clients !== null && !callerOf(clientAuthorization(req.headers), null, runtime.clients).ok) {
      return sendError(res, requestId, { status: 401, type: 'authentication_error', code: 'invalid_api_key', message: 'GET /metrics needs "Authorization: Bearer <the key of one of proxy.clients>"' }, true);
    }
    void deps.metrics.registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': deps.metrics.registry.contentType, 'x-request-id': requestId });
      res.end(req.method === 'HEAD' ? undefined : text);
    });
  };
  // Every route of this listener, /metrics included, is the clients': the proxy keys let other accounts in.
  const keys = [proxyKeysCredential(() => proxyHasKeys(deps.getConfig()))];
  const accounts = localGate('this model proxy', options.allowedAccounts ?? NO_OTHER_ACCOUNT, () => keys);
  const server = http.createServer(
    { noDelay: true, ...LISTENER_OPTIONS, ...(options.requestTimeoutMs === undefined ? {} : { requestTimeout: options.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, options.requestTimeoutMs) }) },
    // The browser guard (SPEC §6), then the identity rule, before every route, /metrics included.
    requireHost(
      guardRequests(
        guardAccounts(
          (req, res) => {
            if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) return metrics(req, res);
            handler(req, res);
          },
          accounts,
          v1RefusalJson,
        ),
        { listenHost: options.host, allowedHosts: options.allowedHosts ?? [], corsOrigins: () => deps.getConfig()?.cors_origins ?? null, v1ErrorJson: v1RefusalJson },
      ),
      'GET, HEAD, POST, DELETE, OPTIONS',
    ),
  );
  answerParserErrors(server, options.connectLingerMs);
  return new Promise((resolve, reject) => {
    const refused = (e: Error) => reject(new Error(listenFailure(showAddress(options.host, options.port), e)));
    server.once('error', refused);
    server.listen(options.port, options.host, () => {
      server.off('error', refused);
      let closing: Promise<void> | null = null;
      resolve({
        port: (server.address() as AddressInfo).port,
        close() {
          closing ??= new Promise<void>((done) => {
            server.close(() => done());
            closeEveryConnection(server);
            handler.close();
          });
          return closing;
        },
      });
    });
  });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerMatches } from './auth.js';
import { readBody } from './body.js';
import { parseChatRequest } from './chat-request.js';
import { DEFAULT_MAX_BODY_BYTES, type ProxyDeps } from './deps.js';
import { sendError, type ProxyError } from './errors.js';
import { forwardChat } from './forward.js';
import { createModelCatalog } from './models.js';
import { describeKeyProblem, runtimeCache, type Provider, type Runtime } from './providers.js';
import { pickRequestId } from './request-id.js';
import { createUpstreamPool } from './upstream.js';

/** A request handler for plain node:http. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The two routes, each taking the node request and response; shared by the node:http handler and the Hono app. */
export interface ProxyRoutes {
  chatCompletions: NodeHandler;
  models: NodeHandler;
  /** Closes idle upstream connections (for shutdown). */
  close(): void;
}

export function createProxyRoutes(deps: ProxyDeps): ProxyRoutes {
  const pool = createUpstreamPool();
  const runtimeOf = runtimeCache(deps.env ?? process.env, deps.log);
  const catalog = createModelCatalog(pool, deps.log);
  const maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  /** The runtime when the caller may use the group, else null after answering 401 (or 503 when no key can ever match). */
  function authorize(req: IncomingMessage, res: ServerResponse, requestId: string): Runtime | null {
    const runtime = runtimeOf(deps.getConfig());
    if (runtime.clientKeys === null) return runtime;
    if (runtime.clientKeys.length === 0) {
      // Fail closed, and say it is the server's setup, not the caller's key.
      sendError(res, requestId, { status: 503, type: 'server_error', code: 'proxy_keys_unset', message: 'proxy.api_keys refers only to environment variables that are not set; see the server log' }, true);
      return null;
    }
    if (bearerMatches(req.headers.authorization, runtime.clientKeys)) return runtime;
    const message = req.headers.authorization === undefined ? 'missing API key: send "Authorization: Bearer <key>"' : 'incorrect API key';
    sendError(res, requestId, { status: 401, type: 'authentication_error', code: 'invalid_api_key', message }, true);
    return null;
  }

  function tunnelHint(p: Provider): string {
    const t = deps.tunnelForLocalEndpoint?.(p.hostname, p.port);
    if (t === undefined) return '';
    const via = `; ${p.hostname}:${p.port} is the local end of tunnel '${t.name}' (${t.hash.slice(0, 8)})`;
    // A running tunnel accepts the connection itself: then the fault is at its far end.
    return t.status === 'RUNNING'
      ? `${via}, which is RUNNING: nothing answers at the tunnel's far end`
      : `${via}, which is ${t.status}, not RUNNING`;
  }

  const chatCompletions: NodeHandler = (req, res) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    if (req.method !== 'POST') return methodNotAllowed(res, requestId, 'POST');
    const runtime = authorize(req, res, requestId);
    if (runtime === null) return;
    readBody(req, maxBody, (body) => {
      if (!Buffer.isBuffer(body)) {
        if (body.reason === 'too_large') {
          sendError(res, requestId, { status: 413, type: 'invalid_request_error', code: 'request_too_large', message: `the request body is larger than ${body.limit} bytes` });
          discardRest(req, body.limit);
        } else {
          deps.log?.({ event: 'proxy_client_closed', request_id: requestId, stage: 'reading_request' });
        }
        return;
      }
      const parsed = parseChatRequest(body);
      if (!parsed.ok) return sendError(res, requestId, parsed.error);
      const provider = runtime.providers.get(parsed.value.prefix);
      if (provider === undefined) return sendError(res, requestId, unknownPrefix(parsed.value.prefix, runtime));
      if (!provider.key.ok) {
        const code = provider.key.error.reason === 'unset_variable' ? 'provider_key_unset' : 'provider_key_unusable';
        return sendError(res, requestId, { status: 500, type: 'server_error', code, message: describeKeyProblem(provider.prefix, provider.key.error) });
      }
      forwardChat({
        req,
        res,
        requestId,
        provider,
        pool,
        payload: parsed.value.payload,
        forwardHeaders: deps.getConfig()?.forward_headers,
        tunnelHint: () => tunnelHint(provider),
        log: deps.log,
      });
    });
  };

  const models: NodeHandler = (req, res) => {
    const requestId = pickRequestId(req.headers['x-request-id']);
    if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, requestId, 'GET');
    const runtime = authorize(req, res, requestId);
    if (runtime === null) return;
    void catalog.list(runtime).then((data) => {
      if (res.destroyed) return;
      const body = JSON.stringify({ object: 'list', data });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  };

  return {
    chatCompletions,
    models,
    close() {
      pool.close();
    },
  };
}

// How much of a refused body is read and thrown away, and for how long, before the
// connection is cut anyway.
const DISCARD_BYTES_FACTOR = 4;
const DISCARD_MS = 10_000;

/**
 * Reads and drops the rest of a refused body, bounded. Closing at once would make a
 * client that is still sending (no `Expect: 100-continue`) fail with EPIPE before it
 * reads the 413; reading forever would let a client hold the connection.
 */
function discardRest(req: IncomingMessage, limit: number): void {
  let dropped = 0;
  const cut = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  cut.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_BYTES_FACTOR * limit) req.socket.destroy();
  });
  req.once('close', () => clearTimeout(cut));
  req.resume();
}

function unknownPrefix(prefix: string, runtime: Runtime): ProxyError {
  const known = [...runtime.providers.keys()];
  const list = known.length === 0 ? 'no providers are configured' : `known prefixes: ${known.join(', ')}`;
  return { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model', message: `no provider ${JSON.stringify(prefix.length > 64 ? `${prefix.slice(0, 64)}…` : prefix)} (${list})` };
}

/** Any path of the group other than the two routes. */
export function notFound(method: string, path: string): ProxyError {
  return {
    status: 404,
    type: 'invalid_request_error',
    code: 'not_found',
    message: `no route ${method} ${path.slice(0, 200)}; the proxy serves POST /v1/chat/completions and GET /v1/models`,
  };
}

function methodNotAllowed(res: ServerResponse, requestId: string, allow: string): void {
  res.setHeader('allow', allow);
  sendError(res, requestId, { status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: `use ${allow} for this path` }, true);
}

/**
 * The node:http fast path: the daemon's listener hands over every request whose
 * path starts with `/v1/`. No framework sits between the socket and the upstream,
 * which keeps the added latency of a hop well under a millisecond.
 */
export function createProxyHandler(deps: ProxyDeps): NodeHandler & { close(): void } {
  const routes = createProxyRoutes(deps);
  const handler: NodeHandler = (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === '/v1/chat/completions') return routes.chatCompletions(req, res);
    if (path === '/v1/models') return routes.models(req, res);
    sendError(res, pickRequestId(req.headers['x-request-id']), notFound(req.method ?? '', path), true);
  };
  return Object.assign(handler, { close: routes.close });
}

import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyDeps } from './deps.js';
import { errorJson, sendError, type ProxyError } from './errors.js';
import { createProxyRoutes, restOf, type NodeHandler } from './endpoints/handlers.js';
import { pickRequestId } from './request/request-id.js';

/** The Hono sub-app, and the way around Hono for the busiest paths. */
export type ProxyApp = Hono<{ Bindings: HttpBindings }> & {
  /**
   * For the host's node:http listener, before its Hono app: serves a request whose
   * path is `/v1` or under it and returns true; returns false, untouched, for any
   * other. The answer is the one the app at `/v1` gives (the same routes); what is
   * saved is the adapter's WHATWG `Request`, its headers and its close handler per
   * request. HEAD needs it: Hono answers HEAD by running the GET route and wrapping
   * its result, which @hono/node-server then writes over the route's own answer
   * (a bare 200 with `x-hono-already-sent`, and ERR_HTTP_HEADERS_SENT on stderr).
   */
  fastPath(req: IncomingMessage, res: ServerResponse): boolean;
};

const INTERNAL: ProxyError = { status: 500, type: 'server_error', code: 'internal_error', message: 'internal error' };

/**
 * The proxy as a Hono sub-app, for `app.route('/v1', createProxyApp(deps))` on a
 * server run by @hono/node-server. The routes work on the node request and response
 * that the adapter passes in `c.env` (the body is streamed both ways and never
 * turned into Web streams); `createProxyHandler` (serve.ts) does the same without Hono in
 * between.
 */
export function createProxyApp(deps: ProxyDeps): ProxyApp {
  const routes = createProxyRoutes(deps);
  const app = new Hono<{ Bindings: HttpBindings }>();
  const answer = (requestId: string, e: ProxyError): Response =>
    new Response(errorJson(e), { status: e.status, headers: { 'content-type': 'application/json', 'x-request-id': requestId } });
  const viaNode = (handler: NodeHandler) => (c: { env: HttpBindings | undefined; req: { header(name: string): string | undefined } }) => {
    if (c.env?.incoming === undefined || c.env.outgoing === undefined) {
      return answer(pickRequestId(c.req.header('x-request-id')), {
        status: 500,
        type: 'server_error',
        code: 'needs_node_server',
        message: 'the proxy routes run only under @hono/node-server',
      });
    }
    handler(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  for (const [path, handler] of routes.endpoints) app.all(path, viaNode(handler));
  app.all('/models', viaNode(routes.models));
  app.all('/models/*', viaNode(routes.model));
  app.all('/responses/*', viaNode(routes.responseById));
  // The group owns every path under /v1: a client that asks for an endpoint the proxy
  // lacks (audio, say) gets an error its client can read, not the daemon's; a
  // browser's preflight is answered here too.
  app.all('*', viaNode(routes.other));
  app.onError((e, c) => {
    deps.log?.({ event: 'proxy_bug', error: String(e) });
    return answer(pickRequestId(c.req.header('x-request-id')), INTERNAL);
  });
  const fastPath = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '';
    if (!url.startsWith('/v1/') && url !== '/v1' && !url.startsWith('/v1?')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const handler = routes.byUrlPath.get(path) ?? restOf(routes, path);
    try {
      handler(req, res);
    } catch (e) {
      // As app.onError above.
      deps.log?.({ event: 'proxy_bug', error: String(e) });
      sendError(res, pickRequestId(req.headers['x-request-id']), INTERNAL);
    }
    return true;
  };
  return Object.assign(app, { fastPath });
}

import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ProxyDeps } from './deps.js';
import { errorJson, type ProxyError } from './errors.js';
import { createProxyRoutes, type NodeHandler } from './handler.js';
import { pickRequestId } from './request-id.js';

/**
 * The proxy as a Hono sub-app, for `app.route('/v1', createProxyApp(deps))` on a
 * server run by @hono/node-server. The routes work on the node request and response
 * that the adapter passes in `c.env` (the body is streamed both ways and never
 * turned into Web streams); `createProxyHandler` does the same without Hono in
 * between.
 */
export function createProxyApp(deps: ProxyDeps): Hono<{ Bindings: HttpBindings }> {
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
  // The group owns every path under /v1: a client that asks for an endpoint the proxy
  // lacks (audio, say) gets an error its client can read, not the daemon's; a
  // browser's preflight is answered here too.
  app.all('*', viaNode(routes.other));
  app.onError((e, c) => {
    deps.log?.({ event: 'proxy_bug', error: String(e) });
    return answer(pickRequestId(c.req.header('x-request-id')), { status: 500, type: 'server_error', code: 'internal_error', message: 'internal error' });
  });
  return app;
}

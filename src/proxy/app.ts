import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ProxyDeps } from './deps.js';
import { errorJson } from './errors.js';
import { createProxyRoutes, type NodeHandler } from './handler.js';

/**
 * The proxy as a Hono sub-app, for `app.route('/v1', createProxyApp(deps))` on a
 * server run by @hono/node-server. The routes work on the node request and response
 * that the adapter passes in `c.env` (the body is streamed both ways and never
 * turned into Web streams); the faster `createProxyHandler` does the same without
 * Hono in between.
 */
export function createProxyApp(deps: ProxyDeps): Hono<{ Bindings: HttpBindings }> {
  const routes = createProxyRoutes(deps);
  const app = new Hono<{ Bindings: HttpBindings }>();
  const viaNode = (handler: NodeHandler) => (c: { env: HttpBindings | undefined }) => {
    if (c.env?.incoming === undefined || c.env.outgoing === undefined) {
      return new Response(
        errorJson({ status: 500, type: 'server_error', code: 'needs_node_server', message: 'the proxy routes run only under @hono/node-server' }),
        { status: 500, headers: { 'content-type': 'application/json' } },
      );
    }
    handler(c.env.incoming, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
  app.all('/chat/completions', viaNode(routes.chatCompletions));
  app.all('/models', viaNode(routes.models));
  app.onError((e) => {
    deps.log?.({ event: 'proxy_bug', error: String(e) });
    return new Response(errorJson({ status: 500, type: 'server_error', code: 'internal_error', message: 'internal error' }), {
      status: 500,
      headers: { 'content-type': 'application/json' },
    });
  });
  return app;
}

import { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyDeps } from './deps.js';
import { createDispatch } from './dispatch.js';
import { errorJson, sendError, type ProxyError } from './errors.js';
import { answerInMemory } from './in-memory-http.js';
import { pickRequestId } from './request/request-id.js';

/** The Hono sub-app, and the way around Hono for the busiest paths. */
export type ProxyApp = Hono<{ Bindings: HttpBindings }> & {
  /**
   * For the host's node:http listener, before its Hono app: serves a request whose
   * path is `/v1` or under it and returns true; returns false, untouched, for any
   * other. The answer is the one the app at `/v1` gives (the same dispatch); what is
   * saved is the adapter's WHATWG `Request`, its headers and its close handler per
   * request. HEAD needs it: Hono answers HEAD by running the GET route and wrapping
   * its result, which @hono/node-server then writes over the route's own answer
   * (a bare 200 with `x-hono-already-sent`, and ERR_HTTP_HEADERS_SENT on stderr).
   */
  fastPath(req: IncomingMessage, res: ServerResponse): boolean;
  /** Ends the upstream connections (for shutdown). */
  close(): void;
};

const INTERNAL: ProxyError = { status: 500, type: 'server_error', code: 'internal_error', message: 'internal error' };

/**
 * The proxy as a Hono sub-app, for `app.route('/v1', createProxyApp(deps))`. Every
 * path of the group runs the route table's dispatch (dispatch.ts) on node's request
 * and response: under @hono/node-server those the adapter passes in `c.env` (the body
 * is streamed both ways and never turned into Web streams); anywhere else, as for
 * `app.request()` in tests, over an in-memory HTTP connection (in-memory-http.ts).
 */
export function createProxyApp(deps: ProxyDeps): ProxyApp {
  const dispatch = createDispatch(deps);
  const app = new Hono<{ Bindings: HttpBindings }>();
  const bug = (e: unknown): void => deps.log?.({ event: 'proxy_bug', error: String(e) });
  app.all('*', (c) => {
    const incoming = c.env?.incoming;
    const outgoing = c.env?.outgoing;
    if (incoming === undefined || outgoing === undefined) return answerInMemory(c.req.raw, guarded);
    dispatch(incoming, outgoing);
    return RESPONSE_ALREADY_SENT;
  });
  app.onError((e, c) => {
    bug(e);
    const requestId = pickRequestId(c.req.header('x-request-id'));
    return new Response(errorJson(INTERNAL), { status: INTERNAL.status, headers: { 'content-type': 'application/json', 'x-request-id': requestId } });
  });
  // A bug in a route is the client's 500 (as onError above), never a request left hanging.
  function guarded(req: IncomingMessage, res: ServerResponse): void {
    try {
      dispatch(req, res);
    } catch (e) {
      bug(e);
      sendError(res, pickRequestId(req.headers['x-request-id']), INTERNAL);
    }
  }
  const fastPath = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '';
    if (!url.startsWith('/v1/') && url !== '/v1' && !url.startsWith('/v1?')) return false;
    guarded(req, res);
    return true;
  };
  return Object.assign(app, { fastPath, close: dispatch.close });
}

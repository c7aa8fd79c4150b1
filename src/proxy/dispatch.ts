import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestListener } from '../edge/http-listener.js';
import type { ProxyDeps } from './deps.js';
import { createHandlers } from './endpoints/handlers.js';
import { ROUTES } from './routes.js';

/** Answers any request whose path is `/v1` or under it; `close` ends the upstream connections. */
export type ProxyDispatch = RequestListener & { close(): void };

/**
 * The `/v1` group as one node:http handler, built from the route table (routes.ts):
 * what `tunnel-manager proxy` serves, what the daemon's listener calls before its Hono
 * app (its fast path), and what the Hono sub-app runs (app.ts). A path of the table
 * goes to its route's handler whatever the method (which answers a wrong one 405); a
 * path below a route's `{id}` goes to that route's handler (which knows its ids and
 * subpaths); any other path to the group's 404.
 */
export function createDispatch(deps: ProxyDeps): ProxyDispatch {
  const handlers = createHandlers(deps);
  // Whole paths (`/v1/chat/completions`): a request URL without a query is looked up as it is.
  const exact = new Map<string, RequestListener>();
  // What comes before a route's first `{`: `/v1/models/`, `/v1/responses/`; the first route of each in the table owns it.
  const below: Array<{ prefix: string; handler: RequestListener }> = [];
  for (const route of ROUTES) {
    const open = route.path.indexOf('{');
    if (open === -1) {
      if (!exact.has(route.path)) exact.set(route.path, handlers.of(route));
      continue;
    }
    const prefix = route.path.slice(0, open);
    if (!below.some((b) => b.prefix === prefix)) below.push({ prefix, handler: handlers.of(route) });
  }
  const handlerAt = (path: string): RequestListener => {
    const found = exact.get(path);
    if (found !== undefined) return found;
    for (const b of below) if (path.length > b.prefix.length && path.startsWith(b.prefix)) return b.handler;
    return handlers.unknown;
  };
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    handlerAt(q === -1 ? url : url.slice(0, q))(req, res);
  };
  return Object.assign(dispatch, { close: handlers.close });
}

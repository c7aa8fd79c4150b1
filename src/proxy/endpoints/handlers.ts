import type { RequestListener } from '../../edge/http-listener.js';
import { ClientLimiter } from '../clients/limiter.js';
import type { ProxyDeps } from '../deps.js';
import type { Provider } from '../relay/provider.js';
import { createUpstreamPool } from '../relay/upstream.js';
import type { Shared } from '../route/fallback.js';
import { createModelCatalog } from '../route/model-catalog.js';
import { runtimeCache } from '../route/providers.js';
import { ResponseOwners } from '../route/response-owners.js';
import { createRests } from '../route/retry-after-rests.js';
import { ROUTES, type Route } from '../routes.js';
import { createAdmission } from './admission.js';
import { createModelRoutes } from './model-list.js';
import { modelRouted } from './model-routed.js';
import { createStoredResponseRoute } from './stored-response.js';
import { unknownPath } from './unknown-path.js';

/** The handler of each route of the table, and of the paths outside it; made once per proxy. */
export interface ProxyHandlers {
  /** The handler of a route of ROUTES (the same for every method of its path: the handler answers the others 405). */
  of(route: Route): RequestListener;
  /** Any other path under /v1: a CORS preflight, or 404. */
  unknown: RequestListener;
  /** Closes idle upstream connections (for shutdown). */
  close(): void;
}

/** The methods the table gives `path` (a route's own pattern). */
const methodsOf = (path: string) => ROUTES.filter((r) => r.path === path).map((r) => r.method);

export function createHandlers(deps: ProxyDeps): ProxyHandlers {
  const pool = createUpstreamPool();
  const runtimeOf = runtimeCache(deps.env ?? process.env, deps.log);
  const catalog = createModelCatalog(pool, deps.log);
  const owners = new ResponseOwners();
  const admission = createAdmission(deps, runtimeOf, new ClientLimiter(deps.now), owners);

  function tunnelHint(p: Provider): string {
    const t = deps.tunnelForLocalEndpoint?.(p.hostname, p.port);
    if (t === undefined) return '';
    const via = `; ${p.hostname}:${p.port} is the local end of tunnel '${t.name}' (${t.hash.slice(0, 8)})`;
    // A running tunnel accepts the connection itself: then the fault is at its far end.
    return t.status === 'RUNNING'
      ? `${via}, which is RUNNING: nothing answers at the tunnel's far end`
      : `${via}, which is ${t.status}, not RUNNING`;
  }

  const shared: Shared = { pool, rests: createRests(deps.now), tunnel: deps.tunnel, tunnelHint, log: deps.log, owners };
  const ctx = { deps, admission, shared };
  const models = createModelRoutes(admission, catalog, deps.tunnel, { list: methodsOf('/v1/models'), one: methodsOf('/v1/models/{id*}') });
  const stored = createStoredResponseRoute(admission, shared);
  // One handler per path of the table, made up front: a request costs a lookup.
  const byPath = new Map<string, RequestListener>();

  return {
    of(route) {
      let handler = byPath.get(route.path);
      if (handler === undefined) {
        // A route's handler is the one for where its model comes from.
        switch (route.model) {
          case 'body':
          case 'form':
            handler = modelRouted(ctx, route.endpoint, methodsOf(route.path));
            break;
          case 'listed':
            handler = models.models;
            break;
          case 'path':
            handler = models.model;
            break;
          case 'stored-response':
            handler = stored;
            break;
          default: {
            const source: never = route;
            throw new Error(`no handler for routes whose model comes from ${JSON.stringify(source)}`);
          }
        }
        byPath.set(route.path, handler);
      }
      return handler;
    },
    unknown: unknownPath(admission),
    close() {
      pool.close();
    },
  };
}

import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { IncomingMessage } from 'node:http';
import { discardRest } from '../edge/http-listener.js';
import type { ConfigStore } from '../config-edit/store.js';
import type { EngineApi } from './engine-api.js';
import { bearerAuth } from './auth.js';
import { createConfigApp } from './config-routes.js';
import { createControlApp } from './control.js';
import { apiError, internalErrorHandler } from './errors.js';
import { createEventsApp, type EventStreamSlots } from './events.js';
import { createHealthApp } from './health.js';
import { createLogsApp } from './logs.js';
import { createMetricsApp, type DaemonMetrics } from './metrics.js';
import { createReloadApp } from './reload.js';

export interface DaemonAppOptions {
  engine: EngineApi;
  /** The config file, edited through the /config routes (the only way the daemon writes it); without it (tests of other routes) those routes are absent. */
  configFile?: ConfigStore;
  /** Which listener the app serves: the token applies to TCP only (the socket is mode 0600). */
  transport: 'tcp' | 'socket';
  /** Accepted bearer tokens (TUNNEL_API_TOKEN), or null for none. */
  tokens: readonly string[] | null;
  /** The chat proxy sub-app, mounted at /v1 outside the token (it has its own keys). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the proxy app declares the node server's bindings; route() takes any env
  proxy?: Hono<any, any, any>;
  metrics: DaemonMetrics;
  /** Where bugs caught by onError are reported (never to the client). */
  onBug?: (e: unknown, c: Context) => void;
  /** Interval of SSE keep-alive comments (tests shorten it). */
  keepAliveMs?: number;
  /** The /events cap; pass one instance to every listener's app so that the cap is daemon-wide. */
  eventSlots?: EventStreamSlots;
}

/**
 * The largest body a control route reads: a `PUT /config` of a config file at its own
 * limit (1 MiB of YAML) written as JSON fits; anything bigger is refused before it is
 * read (a declared length) or as soon as it passes the limit (a chunked body).
 */
export const CONTROL_BODY_LIMIT = 2 * 1024 * 1024;

/**
 * The methods the app's own routes take at `path`, for a 405 with an Allow header
 * instead of a misleading 404. Read from the routes the sub-apps registered (Hono's
 * `app.routes`), so there is no second list to keep in step: a literal segment
 * matches itself, `:name` any one segment. Middleware (method ALL) and the /v1 group
 * (which answers its own 405s) are not routes here.
 */
function allowedMethods(apps: readonly Hono[]): (path: string) => string[] {
  let routes: Array<{ method: string; segments: string[] }> | null = null;
  return (path) => {
    routes ??= apps.flatMap((app) => app.routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method, segments: r.path.split('/') })));
    const asked = path.split('/');
    const fits = (segments: string[]): boolean =>
      segments.length === asked.length && segments.every((s, i) => (s.startsWith(':') ? asked[i] !== '' : s === asked[i]));
    return [...new Set(routes.filter((r) => fits(r.segments)).map((r) => r.method))];
  };
}

/** The store of a config app built only for its list of routes: none of its handlers runs. */
const NEVER_READ = new Proxy({}, {
  get(_target, name) {
    throw new Error(`the config app built for its route list was asked for its store's ${String(name)}`);
  },
}) as ConfigStore;

/** The daemon's HTTP app (SPEC §6), one per listener: control routes, /health, /events, /metrics and the /v1 proxy group. */
export function createDaemonApp(opts: DaemonAppOptions): Hono {
  const { engine, onBug } = opts;
  const app = new Hono();
  // /v1 has its own limit (the proxy's, for prompts and uploads).
  const limit = bodyLimit({
    maxSize: CONTROL_BODY_LIMIT,
    onError: (c) => {
      // The rest of the body is read and dropped (bounded), never kept.
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      if (incoming !== undefined) discardRest(incoming, CONTROL_BODY_LIMIT);
      return apiError('request_too_large', `the request body is larger than ${CONTROL_BODY_LIMIT} bytes (2 MiB), the control API's limit`, { headers: { connection: 'close' } });
    },
  });
  app.use('*', (c, next) => (c.req.path === '/v1' || c.req.path.startsWith('/v1/') ? next() : limit(c, next)));
  if (opts.transport === 'tcp' && opts.tokens !== null && opts.tokens.length > 0) {
    // Skips /health and /v1 by path, so the order of the routes below cannot open or close them by accident.
    app.use('*', bearerAuth(opts.tokens));
  }
  app.route('/', createHealthApp(engine, onBug));
  app.route('/', createControlApp(engine, onBug));
  app.route('/', createLogsApp(engine, onBug));
  if (opts.configFile) app.route('/', createConfigApp(engine, opts.configFile, onBug));
  app.route('/', createReloadApp(engine, onBug));
  app.route('/', createEventsApp(engine, { keepAliveMs: opts.keepAliveMs, slots: opts.eventSlots, onBug }));
  app.route('/', createMetricsApp(opts.metrics, onBug));
  if (opts.proxy) app.route('/v1', opts.proxy);

  // Without a config file the /config routes are not mounted, yet they are the API's
  // routes (SPEC §6): a wrong method there is a 405 as with one. Their list is read
  // from the config app itself, built only for that and never run (no store to read).
  const unmounted = opts.configFile ? [] : [createConfigApp(engine, NEVER_READ, onBug)];
  const methodsAt = allowedMethods([app, ...unmounted]);
  app.notFound((c) => {
    const path = c.req.path;
    const allowed = methodsAt(path);
    if (allowed.length > 0) {
      const allow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
      return apiError('method_not_allowed', `${c.req.method} is not allowed on ${path}: use ${allowed.join(' or ')}`, {
        headers: { allow: allow.join(', ') },
      });
    }
    return apiError('not_found', `no route ${c.req.method} ${path.slice(0, 200)}`);
  });
  app.onError(internalErrorHandler(onBug));
  return app;
}

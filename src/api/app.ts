import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { IncomingMessage } from 'node:http';
import { discardRest } from '../http-listener.js';
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

/** The routes, for 405 answers with an Allow header instead of a misleading 404. */
const ROUTES: ReadonlyArray<{ path: RegExp; method: string }> = [
  { path: /^\/(list|status|health|events|metrics|logs)$/, method: 'GET' },
  { path: /^\/logs\/[^/]+$/, method: 'GET' },
  { path: /^\/(start|stop|reload)$/, method: 'POST' },
  { path: /^\/(start|stop|restart)\/[^/]+$/, method: 'POST' },
  { path: /^\/config$/, method: 'GET' },
  { path: /^\/config$/, method: 'POST' },
  { path: /^\/config$/, method: 'PUT' },
  { path: /^\/config\/new$/, method: 'POST' },
  { path: /^\/config\/[^/]+$/, method: 'GET' },
  { path: /^\/config\/[^/]+$/, method: 'POST' },
  { path: /^\/config\/[^/]+$/, method: 'PUT' },
  { path: /^\/config\/[^/]+$/, method: 'DELETE' },
  { path: /^\/config\/[^/]+\/delete$/, method: 'POST' },
];

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

  app.notFound((c) => {
    const path = c.req.path;
    const allowed = [...new Set(ROUTES.filter((r) => r.path.test(path)).map((r) => r.method))];
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

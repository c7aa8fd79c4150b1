import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createAssetsApp, type Assets } from './assets.js';
import { createAuthApp, isAuthenticated, type AuthDeps } from './routes-auth.js';
import { createConfigApp, DEFAULT_OWN_LISTENERS, type ConfigRoutesDeps } from './routes-config.js';
import type { OwnListener } from '../tunnel/exposure.js';
import { createDaemonApp, type DaemonRoutesDeps } from './routes-daemon.js';
import { createEventsApp, type EventsRoutesDeps } from './routes-events.js';
import { apiError } from './http-errors.js';
import { PANEL_REQUEST_HEADER, panelHostAllowed, panelOriginAllowed } from '../edge/host-origin-rules.js';

export interface PanelDeps extends AuthDeps, ConfigRoutesDeps, DaemonRoutesDeps, EventsRoutesDeps {
  assets: Assets;
  log: (e: Record<string, unknown>) => void;
}

// Only the panel's own files and connections back to it; no inline script, no framing.
// Inline styles are allowed because the terminal emulator (xterm.js) sizes its rows
// with <style> elements it creates; scripts stay 'self' only.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The daemon's API where the panel reaches it (its --api URL), and the panel at its
 * default address unless told (SPEC §2): the listeners a tunnel should not forward.
 */
export function ownListenersOf(apiOrigin: string, panelAt?: { host: string; port: number }): readonly OwnListener[] {
  const u = URL.canParse(apiOrigin) ? new URL(apiOrigin) : null;
  const port = u === null ? NaN : Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const panel: readonly OwnListener[] = panelAt === undefined ? DEFAULT_OWN_LISTENERS.filter((l) => l.kind === 'panel') : [{ kind: 'panel', ...panelAt }];
  return u === null || !Number.isInteger(port) ? DEFAULT_OWN_LISTENERS : [{ kind: 'api', host: u.hostname.replace(/^\[|\]$/g, ''), port }, ...panel];
}

/**
 * The panel: its page, and a JSON API for that page under /api. Every request passes
 * the host check (DNS rebinding), every state-changing one the Origin check (CSRF),
 * and with a password every /api call but login needs a session.
 */
export function createPanelApp(deps: PanelDeps): Hono {
  const app = new Hono();
  const passwordSet = deps.password !== null;

  app.use('*', async (c, next) => {
    c.header('content-security-policy', CSP);
    c.header('x-content-type-options', 'nosniff');
    c.header('x-frame-options', 'DENY');
    c.header('referrer-policy', 'no-referrer');
    if (!panelHostAllowed(c.req.header('host'), passwordSet)) {
      return apiError(c, 403, 'host_not_allowed', 'this panel answers only to a loopback host name (localhost, 127.0.0.1, [::1]); set PANEL_TOKEN to serve it under another name');
    }
    const origin = { origin: c.req.header('origin'), host: c.req.header('host'), panelHeader: c.req.header(PANEL_REQUEST_HEADER) };
    if (!panelOriginAllowed(c.req.method, origin)) {
      return apiError(c, 403, 'foreign_origin', 'state-changing requests must come from the panel\'s own page');
    }
    await next();
  });

  app.use('/api/*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => apiError(c, 413, 'too_large', 'the request body is over 64 KiB') }));
  app.use('/api/*', async (c, next) => {
    c.header('cache-control', 'no-store');
    const path = c.req.path;
    if (path === '/api/session' || path === '/api/login' || path === '/api/logout') return next();
    if (!isAuthenticated(c, deps)) return apiError(c, 401, 'login_required', 'log in with the panel password first');
    await next();
  });

  app.route('/api', createAuthApp(deps));
  app.route('/api', createConfigApp({ ...deps, ownListeners: deps.ownListeners ?? ownListenersOf(deps.daemon.where) }));
  app.route('/api', createEventsApp(deps));
  app.route('/api/daemon', createDaemonApp(deps));
  app.route('/', createAssetsApp(deps.assets));

  app.notFound((c) => apiError(c, 404, 'not_found', `no such page: ${c.req.method} ${c.req.path}`));
  app.onError((e, c) => {
    deps.log({ event: 'panel_error', method: c.req.method, path: c.req.path, error: e instanceof Error ? e.message : String(e) });
    return apiError(c, 500, 'internal', 'the panel failed to handle this request; see its log');
  });
  return app;
}

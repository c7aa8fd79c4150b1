import { Hono, type Context } from 'hono';
import type { Result } from '../kernel/result.js';
import type { DaemonClient, DaemonFailure } from './daemon-client.js';
import { apiError, daemonErrorAnswer } from './http-errors.js';
import { unreachable } from '../kernel/unreachable.js';

export interface DaemonRoutesDeps {
  daemon: DaemonClient;
}

const HASH = /^[0-9a-f]{4,32}$/;

/** A connection failure is the panel's 502 with its own code; the daemon's own errors pass on as it said them. */
function daemonError(c: Context, f: DaemonFailure) {
  switch (f.reason) {
    case 'connection':
      return apiError(c, f.code === 'daemon_loading' ? 503 : 502, f.code, f.message, { params: f.params });
    case 'daemon':
      return daemonErrorAnswer(c, f.status === 404 || f.status === 409 || f.status === 400 || f.status === 503 ? f.status : 502, f.code, f.message);
    default:
      return unreachable(f, 'failure');
  }
}

/** Start, stop and logs, through the daemon's API with the token kept here. */
export function createDaemonApp(deps: DaemonRoutesDeps): Hono {
  const app = new Hono();
  const { daemon } = deps;

  const forward = async (c: Context, call: Promise<Result<unknown, DaemonFailure>>) => {
    const r = await call;
    return r.ok ? c.json(r.value as object) : daemonError(c, r.error);
  };
  const hashOf = (c: Context) => {
    const h = c.req.param('hash') ?? '';
    return HASH.test(h) ? h : null;
  };

  app.post('/start', (c) => forward(c, daemon.post('/start')));
  app.post('/stop', (c) => forward(c, daemon.post('/stop')));
  for (const action of ['start', 'stop'] as const) {
    app.post(`/${action}/:hash`, (c) => {
      const h = hashOf(c);
      return h === null ? apiError(c, 400, 'invalid_hash', 'expected a tunnel hash (hex)') : forward(c, daemon.post(`/${action}/${h}`));
    });
  }

  app.get('/logs/:hash', async (c) => {
    const h = hashOf(c);
    if (h === null) return apiError(c, 400, 'invalid_hash', 'expected a tunnel hash (hex)');
    const r = await daemon.get<unknown>(`/logs/${h}`);
    if (!r.ok) return daemonError(c, r.error);
    const v = r.value as { lines?: unknown } | unknown[];
    const lines = Array.isArray(v) ? v : Array.isArray((v as { lines?: unknown }).lines) ? (v as { lines: unknown[] }).lines : [];
    return c.json({ lines: lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))) });
  });

  return app;
}

import { Hono } from 'hono';
import { formatProblem } from '../config/load.js';
import type { EngineApi } from './engine-api.js';
import { internalErrorHandler } from './errors.js';
import { stillLoading } from './loading.js';
import type { HealthBody, HealthDetails } from './types.js';

/** What `error` says on /health: that there are problems, never which. */
export const HEALTH_ERROR = 'the config file has problems: tunnel-cli validate (or GET /health/details, a control route) names them';

/**
 * GET /health and GET /health/details. /health is open to every caller (no token, any
 * account: container and kubelet probes use it), so it says only whether the daemon
 * runs, whether the config file is usable and there, and counts — no tunnel, host,
 * path, line or message. /health/details is a control route (the token on TCP, the
 * owner's account, none on the socket) and has what /health leaves out: the file's
 * problems with line and column, the entries left out, the warnings, the exposure.
 */
export function createHealthApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  // Counted once per change, not per probe: a thousand tunnels make no probe slower.
  let counts: { tunnels: number; running: number } | null = null;
  engine.supervisor.subscribe(() => (counts = null));
  engine.subscribeReloads(() => (counts = null));
  const countsNow = () => {
    if (counts !== null) return counts;
    const statuses = engine.supervisor.statuses();
    counts = { tunnels: statuses.length, running: statuses.filter((s) => s.status === 'RUNNING').length };
    return counts;
  };

  app.get('/health', (c) => {
    if (stillLoading(engine)) return c.json({ ok: true, loading: true, config: null, tunnels: 0, running: 0 } satisfies HealthBody);
    const h = engine.configHealth();
    const body: HealthBody = {
      ok: true,
      loading: false,
      config: { valid: h.valid, error: h.valid ? null : HEALTH_ERROR, missing: h.missing, problems: h.problems.length },
      ...countsNow(),
    };
    return c.json(body);
  });

  app.get('/health/details', (c) => {
    // The file's absolute path, also while loading: the panel edits the file the daemon runs.
    const config_path = engine.configHealth().path;
    if (stillLoading(engine)) return c.json({ ok: true, loading: true, config_path, config: null, tunnels: 0, running: 0, exposure: [] } satisfies HealthDetails);
    const h = engine.configHealth();
    const rejected = h.rejected.map((r) => ({ index: r.index, line: r.line, column: r.column, problems: r.problems.map(formatProblem) }));
    const body: HealthDetails = {
      ok: true,
      loading: false,
      config_path,
      config: { valid: h.valid, error: h.error, missing: h.missing, problems: h.problems.length, applied: h.applied, rejected, warnings: h.warnings },
      ...countsNow(),
      exposure: h.exposure.map((e) => ({ hash: e.hash, name: e.name, line: e.line, kind: e.exposure.kind, message: e.message })),
    };
    return c.json(body);
  });
  app.onError(internalErrorHandler(onBug));
  return app;
}

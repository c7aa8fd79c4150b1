import { Hono } from 'hono';
import { formatProblem } from '../config/load.js';
import type { EngineApi } from './engine-api.js';
import { internalErrorHandler } from './errors.js';
import { stillLoading } from './loading.js';
import type { HealthBody } from './types.js';

/**
 * GET /health: open without a token, so it says only whether the config file is
 * usable — no tunnel, host or path — or that its first load still runs.
 */
export function createHealthApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  app.get('/health', (c) => {
    if (stillLoading(engine)) return c.json({ ok: true, loading: true, config: null } satisfies HealthBody);
    const h = engine.configHealth();
    // Positions and problems only: the entries' names stay behind the token.
    const rejected = h.rejected.map((r) => ({ index: r.index, line: r.line, column: r.column, problems: r.problems.map(formatProblem) }));
    const body: HealthBody = { ok: true, loading: false, config: { valid: h.valid, error: h.error, missing: h.missing, applied: h.applied, rejected } };
    return c.json(body);
  });
  app.onError(internalErrorHandler(onBug));
  return app;
}

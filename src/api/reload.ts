import { Hono } from 'hono';
import type { EngineApi } from './engine-api.js';
import { apiError, internalErrorHandler } from './errors.js';

/**
 * POST /reload: reads the config file now. A reload that applied nothing is an error
 * (503 config_invalid with the problems), never a 200 whose body says it failed.
 */
export function createReloadApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  app.post('/reload', async (c) => {
    const record = await engine.reload();
    if (record.ok) return c.json(record);
    const path = engine.configHealth().path;
    return apiError('config_invalid', `nothing was applied, the last good config keeps running: ${path}: ${record.error ?? 'invalid config'}`);
  });
  app.onError(internalErrorHandler(onBug));
  return app;
}

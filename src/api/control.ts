import { Hono } from 'hono';
import type { EngineApi } from './engine-api.js';
import { internalErrorHandler } from './errors.js';
import { requireSomeConfig, resolveHash } from './resolve.js';
import type { ListRecord } from './types.js';

/** GET /list, /status, /logs/:hash and POST /start, /stop (all or one): the tunnels as the user drives them. */
export function createControlApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  const sup = engine.supervisor;

  app.get('/list', (c) =>
    c.json(engine.tunnels().map((t): ListRecord => ({ ...t.written, hash: t.hash, name: t.name }))),
  );

  app.get('/status', (c) => c.json(sup.statuses()));

  app.post('/start', async (c) => {
    const ready = requireSomeConfig(engine);
    if (!ready.ok) return ready.error;
    return c.json(await sup.startAll());
  });

  app.post('/stop', async (c) => c.json(await sup.stopAll()));

  app.post('/start/:hash', async (c) => {
    const hash = resolveHash(engine, c.req.param('hash'), true);
    if (!hash.ok) return hash.error;
    return c.json(await sup.start(hash.value));
  });

  app.post('/stop/:hash', async (c) => {
    const hash = resolveHash(engine, c.req.param('hash'));
    if (!hash.ok) return hash.error;
    return c.json(await sup.stop(hash.value));
  });

  app.get('/logs/:hash', (c) => {
    const hash = resolveHash(engine, c.req.param('hash'));
    if (!hash.ok) return hash.error;
    return c.json(sup.logs(hash.value) ?? []);
  });

  app.onError(internalErrorHandler(onBug));
  return app;
}

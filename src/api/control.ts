import { Hono } from 'hono';
import { CachedJson } from './cached-json.js';
import type { EngineApi } from './engine-api.js';
import { internalErrorHandler } from './errors.js';
import { requireSomeConfig, resolveHash } from './resolve.js';
import type { ListRecord } from './types.js';

/** GET /list, /status and POST /start, /stop (all or one), /restart/:hash: the tunnels as the user drives them. */
export function createControlApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  const sup = engine.supervisor;

  // `status` too: the reference's /list carried it, and its scripts read it there.
  app.get('/list', (c) =>
    c.json(engine.tunnels().map((t): ListRecord => ({ ...t.written, hash: t.hash, name: t.name, status: sup.status(t.hash)?.status ?? 'STOPPED' }))),
  );

  // Every change to a record is a supervisor event; a reload adds, removes and reorders them.
  const statusBody = new CachedJson(() => sup.statuses());
  sup.subscribe(() => statusBody.invalidate());
  engine.subscribeReloads(() => statusBody.invalidate());
  app.get('/status', (c) => c.body(statusBody.bytes(), 200, { 'content-type': 'application/json' }));

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

  // Stop then start, as the reference's panel and CLI did in two requests.
  app.post('/restart/:hash', async (c) => {
    const hash = resolveHash(engine, c.req.param('hash'), true);
    if (!hash.ok) return hash.error;
    await sup.stop(hash.value);
    return c.json(await sup.start(hash.value));
  });

  app.onError(internalErrorHandler(onBug));
  return app;
}

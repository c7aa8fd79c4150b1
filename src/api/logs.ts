import { Hono } from 'hono';
import type { EngineApi } from './engine-api.js';
import { internalErrorHandler } from './errors.js';
import { resolveHash } from './resolve.js';
import type { LogsBody, LogsListEntry } from './types.js';

/**
 * GET /logs and /logs/:hash in the reference implementation's shapes, which its web
 * panel reads (`status`, `tunnel_hash`, `log`), plus the lines as an array for scripts
 * that would rather not split text. A tunnel without output yet has an empty log (the
 * reference answered 404 there, which its panel showed as a load failure).
 */
export function createLogsApp(engine: EngineApi, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  const sup = engine.supervisor;

  app.get('/logs', (c) => {
    const entries: LogsListEntry[] = [];
    for (const s of sup.statuses()) {
      const lines = sup.logs(s.hash) ?? [];
      if (lines.length > 0) entries.push({ hash: s.hash, name: s.name, lines: lines.length, modified: sup.logsModified(s.hash) });
    }
    return c.json(entries);
  });

  app.get('/logs/:hash', (c) => {
    const hash = resolveHash(engine, c.req.param('hash'));
    if (!hash.ok) return hash.error;
    const lines = sup.logs(hash.value) ?? [];
    const body: LogsBody = { status: 'success', tunnel_hash: hash.value, log: lines.join('\n'), lines };
    return c.json(body);
  });

  app.onError(internalErrorHandler(onBug));
  return app;
}

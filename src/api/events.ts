import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { EngineApi } from './engine-api.js';
import type { ReloadRecord } from './types.js';
import type { StatusRecord } from '../tunnel/status.js';
import { internalErrorHandler } from './errors.js';

/** Comment lines keep idle connections (and proxies in between) from timing out. */
export const KEEP_ALIVE_MS = 15_000;

type Outgoing = { event: 'status'; record: StatusRecord } | { event: 'reload'; record: ReloadRecord };

/**
 * GET /events: server-sent events. `event: status` carries a status record on every
 * state change, `event: reload` a reload record on every reload; `data:` is the
 * record's JSON exactly as the other routes return it. A `: connected` comment is sent
 * first, so a client knows it is subscribed before it acts (no missed change).
 */
export function createEventsApp(
  engine: EngineApi,
  opts: { keepAliveMs?: number; onBug?: Parameters<typeof internalErrorHandler>[0] } = {},
): Hono {
  const app = new Hono();
  const keepAliveMs = opts.keepAliveMs ?? KEEP_ALIVE_MS;

  app.get('/events', (c) => {
    c.header('x-accel-buffering', 'no');
    return streamSSE(c, async (stream) => {
      // Events are written in order through one chain; a write after the client left is a no-op.
      let chain: Promise<unknown> = stream.write(': connected\n\n');
      const send = (o: Outgoing) => {
        chain = chain.then(() => stream.writeSSE({ event: o.event, data: JSON.stringify(o.record) }));
      };
      const unsubscribe = [
        engine.supervisor.subscribe((e) => send({ event: 'status', record: e.record })),
        engine.subscribeReloads((r) => send({ event: 'reload', record: r })),
      ];
      const timer = setInterval(() => {
        chain = chain.then(() => stream.write(': keep-alive\n\n'));
      }, keepAliveMs);
      await new Promise<void>((done) => {
        const end = () => done();
        stream.onAbort(end);
        c.req.raw.signal.addEventListener('abort', end, { once: true });
        if (stream.aborted || c.req.raw.signal.aborted) end();
      });
      clearInterval(timer);
      for (const u of unsubscribe) u();
    });
  });

  app.onError(internalErrorHandler(opts.onBug));
  return app;
}

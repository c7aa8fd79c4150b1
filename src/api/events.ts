import { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { EngineApi } from './engine-api.js';
import type { ReloadRecord } from './types.js';
import type { StatusRecord } from '../tunnel/status.js';
import { apiError, internalErrorHandler } from './errors.js';

/** Comment lines keep idle connections (and proxies in between) from timing out. */
export const KEEP_ALIVE_MS = 15_000;

/**
 * At most this many GET /events streams at once, over all of the daemon's listeners:
 * each holds a socket, a timer and two subscriptions that every state change walks, so
 * a client that opens streams in a loop must not be able to grow them without end.
 */
export const MAX_EVENT_STREAMS = 64;

/** The open /events streams, shared by the TCP and socket apps so that the cap is daemon-wide. */
export class EventStreamSlots {
  #open = 0;
  constructor(readonly max: number = MAX_EVENT_STREAMS) {}

  get open(): number {
    return this.#open;
  }

  /** Takes a slot; false when all `max` are in use. */
  take(): boolean {
    if (this.#open >= this.max) return false;
    this.#open++;
    return true;
  }

  release(): void {
    this.#open = Math.max(0, this.#open - 1);
  }
}

type Outgoing = { event: 'status'; record: StatusRecord } | { event: 'reload'; record: ReloadRecord };

/**
 * GET /events: server-sent events. `event: status` carries a status record on every
 * state change, `event: reload` a reload record on every reload; `data:` is the
 * record's JSON exactly as the other routes return it. A `: connected` comment is sent
 * first, so a client knows it is subscribed before it acts (no missed change).
 */
export function createEventsApp(
  engine: EngineApi,
  opts: { keepAliveMs?: number; slots?: EventStreamSlots; onBug?: Parameters<typeof internalErrorHandler>[0] } = {},
): Hono {
  const app = new Hono();
  const keepAliveMs = opts.keepAliveMs ?? KEEP_ALIVE_MS;
  const slots = opts.slots ?? new EventStreamSlots();

  app.get('/events', (c) => {
    if (!slots.take()) {
      return apiError('too_many_streams', `the daemon already serves ${slots.max} /events streams, its limit; close one (each tunnel-cli watch and panel holds one) and retry`, {
        headers: { 'retry-after': '5' },
      });
    }
    c.header('x-accel-buffering', 'no');
    return streamSSE(c, async (stream) => {
      try {
        await serve(stream, c.req.raw.signal);
      } finally {
        slots.release();
      }
    });
  });

  /** One stream: subscribed until the client leaves. */
  async function serve(stream: SSEStreamingApi, signal: AbortSignal): Promise<void> {
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
      signal.addEventListener('abort', end, { once: true });
      if (stream.aborted || signal.aborted) end();
    });
    clearInterval(timer);
    for (const u of unsubscribe) u();
  }

  app.onError(internalErrorHandler(opts.onBug));
  return app;
}

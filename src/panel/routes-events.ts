import { setInterval } from 'node:timers/promises';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { StatusRecord } from '../tunnel/status.js';
import type { DirectionMode } from '../tunnel/spec.js';
import { describeTunnel, tunnelWords } from './describe.js';
import type { EventsHub, HubMessage } from './events-hub.js';
import { unreachable } from '../kernel/unreachable.js';

export interface EventsRoutesDeps {
  hub: EventsHub;
  mode: DirectionMode;
  /** Aborted when the panel shuts down: open event streams end. */
  shutdown: AbortSignal;
}

const KEEPALIVE_MS = 15_000;

/** Status records carry their sentence too: the page also lists tunnels the file no longer has. */
function forPage(m: HubMessage, mode: DirectionMode): unknown {
  const withWords = (s: StatusRecord) => ({ ...s, description: describeTunnel(s, mode), words: tunnelWords(s, mode) });
  switch (m.event) {
    case 'snapshot':
      return { ...m.data, statuses: m.data.statuses.map(withWords) };
    case 'status':
      return withWords(m.data);
    case 'reload':
      return m.data;
    default:
      return unreachable(m, 'message');
  }
}

/**
 * GET /events for the page: a snapshot (daemon reachable?, every status, the daemon's
 * view of the config) on connect and whenever it changes as a whole, then each status
 * change and reload as the daemon reports them. Every page shares the hub's one
 * upstream connection.
 */
export function createEventsApp(deps: EventsRoutesDeps): Hono {
  const app = new Hono();
  const { hub } = deps;

  app.get('/events', (c) => {
    c.header('x-accel-buffering', 'no');
    return streamSSE(c, async (stream) => {
      const ended = new AbortController();
      stream.onAbort(() => ended.abort());
      const signal = AbortSignal.any([ended.signal, deps.shutdown]);
      // Writes go through one chain so events reach the browser in the order they happened.
      let chain: Promise<unknown> = Promise.resolve();
      const send = (write: () => Promise<unknown>) => {
        chain = chain.then(write).catch(() => ended.abort());
      };
      const unsubscribe = hub.subscribe((m) => send(() => stream.writeSSE({ event: m.event, data: JSON.stringify(forPage(m, deps.mode)) })));
      try {
        for await (const _ of setInterval(KEEPALIVE_MS, undefined, { signal })) send(() => stream.write(': keep-alive\n\n'));
      } catch {
        // Aborted: the browser left or the panel is shutting down.
      } finally {
        unsubscribe();
      }
    });
  });

  return app;
}

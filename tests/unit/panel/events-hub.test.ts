import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDaemonClient } from '../../../src/panel/daemon-client.js';
import { EventsHub, type HubMessage } from '../../../src/panel/events-hub.js';

const rec = (name: string, status: string) => ({
  hash: 'a'.repeat(32), name, remote_host: 'user@bastion', remote_port: '5432', local_port: '127.0.0.1:15432', direction: 'remote_to_local',
  status, pid: null, since: new Date().toISOString(), restarts: 0, last_exit: null, last_error: null, next_retry_at: null,
});

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/**
 * A stand-in daemon on a real port. Its first /events stream holds its `: connected`
 * until `release()`, sends one event and ends; the second sends its items in awkward
 * pieces (inside a CRLF, inside a UTF-8 character) and stays open.
 */
async function daemon() {
  const calls: string[] = [];
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  let streams = 0;
  const app = new Hono();
  app.use('*', async (c, next) => {
    calls.push(`${c.req.method} ${c.req.path}`);
    await next();
  });
  app.get('/status', (c) => c.json([rec('db', 'RUNNING')]));
  app.get('/health/details', (c) => c.json({ ok: true, config: { valid: true, error: null, missing: false } }));
  app.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      if (++streams === 1) {
        await held;
        await stream.write(': connected\n\n');
        await stream.writeSSE({ event: 'status', data: JSON.stringify(rec('db', 'RETRYING')) });
        return;
      }
      const event = new TextEncoder().encode(`event: status\r\ndata: ${JSON.stringify(rec('café', 'STOPPED'))}\r\n\r\n`);
      const inE = event.indexOf(0xc3) + 1;
      for (const piece of [': conn', 'ected\r', '\n\r', '\n', event.subarray(0, inE), event.subarray(inE)]) {
        await stream.write(piece);
        await stream.sleep(20);
      }
      await stream.sleep(60_000);
    }),
  );
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise((r) => server.once('listening', r));
  cleanups.push(() => new Promise((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { calls, release, url, server };
}

describe('the panel events hub', () => {
  it('reads the state once the daemon says it is subscribed, and reconnects when the stream ends', async () => {
    const d = await daemon();
    const hub = new EventsHub(createDaemonClient(d.url, null));
    const seen: HubMessage[] = [];
    const unsubscribe = hub.subscribe((m) => seen.push(m));
    cleanups.push(async () => {
      unsubscribe();
      await hub.close();
      d.server.closeAllConnections();
    });

    await vi.waitFor(() => expect(d.calls).toContain('GET /events'));
    // The stream's headers are in, its `: connected` is not: the state is not read yet.
    await new Promise((r) => setTimeout(r, 100));
    expect(d.calls).toEqual(['GET /events']);
    expect(seen).toEqual([{ event: 'snapshot', data: expect.objectContaining({ daemon: expect.objectContaining({ reachable: false, code: 'daemon_connecting' }) }) }]);

    d.release();
    await vi.waitFor(() => expect(seen.some((m) => m.event === 'status' && m.data.status === 'RETRYING')).toBe(true));
    expect(d.calls.slice(0, 3)).toEqual(['GET /events', 'GET /status', 'GET /health/details']);
    const reachable = seen.find((m) => m.event === 'snapshot' && m.data.daemon.reachable);
    expect(reachable?.event === 'snapshot' && reachable.data.statuses.map((s) => s.status)).toEqual(['RUNNING']);

    // The first stream ended: the page is told, and the hub opens a second one.
    await vi.waitFor(() => expect(seen.some((m) => m.event === 'status' && m.data.name === 'café')).toBe(true), { timeout: 5000 });
    const lost = seen.findIndex((m) => m.event === 'snapshot' && /lost the connection to the daemon at .*; reconnecting/.test(m.data.daemon.message ?? ''));
    const second = seen.findIndex((m) => m.event === 'status' && m.data.name === 'café');
    expect(lost).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(lost);
    expect(seen[second]).toMatchObject({ event: 'status', data: { status: 'STOPPED' } });
    expect(d.calls.filter((c) => c === 'GET /events')).toHaveLength(2);
    // A page opened now gets the state read on reconnecting, with the event after it applied.
    const late: HubMessage[] = [];
    hub.subscribe((m) => late.push(m))();
    expect(late[0]?.event === 'snapshot' && late[0].data.daemon).toMatchObject({ reachable: true, message: null });
    expect(late[0]?.event === 'snapshot' && late[0].data.statuses.map((s) => `${s.name} ${s.status}`)).toEqual(['café STOPPED']);
  });
});

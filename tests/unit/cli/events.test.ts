import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openEvents } from '../../../src/cli/client.js';
import type { SseItem } from '../../../src/api/sse-reader.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

/** A stand-in daemon on a Unix socket whose /events body the test writes piece by piece. */
async function daemon() {
  const path = join(mkdtempSync(join(tmpdir(), 'tm-cli-events-')), 'api.sock');
  let res: http.ServerResponse | null = null;
  const server = http.createServer((_req, r) => {
    r.writeHead(200, { 'content-type': 'text/event-stream' });
    r.flushHeaders();
    res = r;
  });
  await new Promise<void>((r) => server.listen(path, r));
  cleanups.push(() => new Promise((r) => server.close(() => r())));
  cleanups.push(async () => void server.closeAllConnections());
  const write = async (piece: string | Uint8Array) => {
    await vi.waitFor(() => expect(res).not.toBeNull());
    await new Promise((r) => res!.write(piece, r));
  };
  return { target: { kind: 'socket' as const, path }, write, end: () => res!.end() };
}

describe('tunnel-cli: following GET /events', () => {
  it('is open once the `: connected` comment is whole; items arrive whole however the bytes are cut', async () => {
    const d = await daemon();
    let settled = false;
    const opening = openEvents(d.target).finally(() => (settled = true));
    await d.write(': conn');
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    await d.write('ected\r');
    await d.write('\n\r');
    await d.write('\n');
    const opened = await opening;
    if (!opened.ok) throw new Error(JSON.stringify(opened.error));

    const items: SseItem[] = [];
    let ended = false;
    opened.value.on({ item: (i) => items.push(i), end: () => (ended = true) });
    const event = new TextEncoder().encode('event: status\r\ndata: {"name":"café"}\r\ndata: →\r\n\r\n');
    const inE = event.indexOf(0xc3) + 1;
    await d.write(event.subarray(0, inE));
    await d.write(event.subarray(inE));
    await d.write(': keep-alive\n\n');
    await vi.waitFor(() => expect(items).toHaveLength(3));
    expect(items).toEqual([
      { kind: 'comment', text: 'connected' },
      { kind: 'event', event: 'status', data: '{"name":"café"}\n→' },
      { kind: 'comment', text: 'keep-alive' },
    ]);
    expect(ended).toBe(false);
    d.end();
    await vi.waitFor(() => expect(ended).toBe(true));
  });

  it('a stream that closes before its first item is an unreachable daemon', async () => {
    const d = await daemon();
    const opening = openEvents(d.target);
    await d.write(': conn');
    d.end();
    const opened = await opening;
    expect(opened.ok).toBe(false);
    expect(!opened.ok && opened.error).toEqual({ reason: 'unreachable', message: `the daemon at the socket ${d.target.path} closed the event stream` });
  });
});

/**
 * Requests that never reach an app (no Host on HTTP/1.1, or refused by Node's parser)
 * get the JSON error body on both listeners: `tunnel-manager proxy`'s and the daemon's;
 * an HTTP/1.0 request without Host, which that version allows, is served.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../../src/api/app.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { startListeners, type Listeners } from '../../../src/api/server.js';
import { createProxyApp, startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { FakeEngine, SAMPLE } from '../../unit/api/fake-engine.js';
import { rawExchange } from '../harness.js';

// Answers made before any route gets an id of their own (SPEC §9: every response has one).
const REQUEST_ID = /\r\nx-request-id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\r\n|$)/;

const cases = (name: string, port: () => number) =>
  describe(name, () => {
    it('serves an HTTP/1.0 request without Host', async () => {
      const r = await rawExchange(port(), `GET /v1/models HTTP/1.0\r\n\r\n`);
      expect(r.status).toBe(200);
    });

    it('answers an HTTP/1.1 request without Host with the JSON error body', async () => {
      const r = await rawExchange(port(), 'GET /v1/models HTTP/1.1\r\nconnection: close\r\n\r\n');
      expect(r.status).toBe(400);
      expect(r.headers).toContain('content-type: application/json');
      expect(r.headers).toMatch(REQUEST_ID);
      expect(JSON.parse(r.body)).toEqual({ error: { message: 'an HTTP/1.1 request needs a Host header', type: 'invalid_request_error', param: null, code: 'bad_request' } });
    });

    it('answers a malformed request after a good one on a kept-alive connection with the JSON error body', async () => {
      const got = await new Promise<string>((resolve, reject) => {
        const s = net.connect(port(), '127.0.0.1', () => s.write('GET /v1/models HTTP/1.1\r\nhost: localhost\r\n\r\n'));
        let text = '';
        s.on('data', (d) => {
          const first = text === '';
          text += d.toString('utf8');
          // The second request goes once the first answer is in: the connection is idle between them.
          if (first) setTimeout(() => s.write('GARBAGE\r\n\r\n'), 50);
        });
        s.on('error', reject);
        s.on('close', () => resolve(text));
      });
      expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(got).toContain('HTTP/1.1 400 Bad Request\r\n');
      expect(got).toContain('"code":"bad_request"');
    });

    it('answers what Node\'s parser refuses with the JSON error body', async () => {
      for (const raw of ['GARBAGE\r\n\r\n', 'POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-length: abc\r\n\r\n']) {
        const r = await rawExchange(port(), raw);
        expect(r.status).toBe(400);
        expect(r.headers).toMatch(REQUEST_ID);
        expect(JSON.parse(r.body).error).toMatchObject({ code: 'bad_request', message: 'the request is not valid HTTP/1.1' });
      }
    });

    it('answers headers over 16 KiB with a JSON 431 that has a request id', async () => {
      const r = await rawExchange(port(), `GET /v1/models HTTP/1.1\r\nhost: localhost\r\nx-big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
      expect(r.status).toBe(431);
      expect(r.headers).toMatch(REQUEST_ID);
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'request_too_large', message: 'the request line or headers are larger than 16 KiB' });
    });

    it('gives each refusal an id of its own', async () => {
      const ids = await Promise.all([0, 1].map(async () => (await rawExchange(port(), 'GARBAGE\r\n\r\n')).headers.match(REQUEST_ID)?.[0]));
      expect(ids[0]).toBeDefined();
      expect(ids[0]).not.toBe(ids[1]);
    });
  });

describe('malformed requests', () => {
  let proxy: ProxyServer;
  let daemon: Listeners;
  let engine: FakeEngine;
  let dir: string;
  beforeAll(async () => {
    proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => null } });
    dir = mkdtempSync(join(tmpdir(), 'tm-malformed-'));
    engine = new FakeEngine(SAMPLE);
    const metrics = createMetrics(engine, { processMetrics: false });
    const v1 = createProxyApp({ getConfig: () => null });
    daemon = await startListeners({
      tcpApp: createDaemonApp({ engine, transport: 'tcp', tokens: null, metrics, proxy: v1 }),
      socketApp: createDaemonApp({ engine, transport: 'socket', tokens: null, metrics }),
      listen: { host: '127.0.0.1', port: 0 },
      socketPath: join(dir, 'api.sock'),
      tokens: null,
    });
  });
  afterAll(async () => {
    await proxy.close();
    await daemon.close();
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  cases('`tunnel-manager proxy` listener', () => proxy.port);
  cases('the daemon\'s TCP listener', () => daemon.tcpPort);

  // A Host that is not host[:port] names none of the server's names: refused before any app builds a URL of it.
  it('both listeners refuse a request whose Host cannot be made into a URL with the JSON error body', async () => {
    for (const p of [daemon.tcpPort, proxy.port]) {
      const r = await rawExchange(p, 'GET /v1/models HTTP/1.1\r\nhost: a b\r\nconnection: close\r\n\r\n');
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'host_not_allowed', message: expect.stringContaining('"a b"') });
    }
  });
});

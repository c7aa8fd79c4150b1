/**
 * CORS preflights on both listeners: answered with an `x-request-id` (every answer
 * has one, SPEC §9) on the routes and on unknown paths, and allowing every method of
 * the routes — DELETE included, so that a page in headless Chromium can delete a
 * stored response.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startHarness, type Harness, type Listener } from '../harness.js';

const KEY = 'sk-proxy-cors';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let browser: Browser;
// The page's own server: its origin is the one the proxy lists.
let site: http.Server;
let origin: string;
beforeAll(async () => {
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => site.close(r));
});

describe.each<Listener>(['proxy', 'daemon'])('CORS preflights on the %s listener', (listener) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness((base) => ({ api_keys: ['${PROXY_KEY}'], providers: { mock: { base_url: base } }, default_provider: 'mock', cors_origins: [origin] }), { env: { PROXY_KEY: KEY } }, listener);
  });
  afterAll(() => h.close());
  const preflight = (path: string, method: string, headers: Record<string, string> = {}) =>
    call(h.url, { method: 'OPTIONS', path, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization', ...headers } });

  it('carries the client\'s x-request-id, or a new one, on a route and on an unknown path', async () => {
    for (const path of ['/v1/chat/completions', '/v1/models', '/v1/responses/resp_1', '/v1/no-such-thing']) {
      const mine = await preflight(path, 'POST', { 'x-request-id': 'pre-1' });
      expect([mine.status, mine.headers['x-request-id']], path).toEqual([204, 'pre-1']);
      const fresh = await preflight(path, 'POST');
      expect(fresh.status, path).toBe(204);
      expect(fresh.headers['x-request-id'], path).toMatch(UUID);
    }
  });

  it('allows every method of the routes, DELETE included', async () => {
    const r = await preflight('/v1/responses/resp_1', 'DELETE');
    expect(r.headers['access-control-allow-methods']).toBe('GET, POST, DELETE, OPTIONS');
  });

  it('lets a page in Chromium delete a stored response', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(origin);
      const got = await page.evaluate(
        async ([url, key]) => {
          const r = await fetch(`${url}/v1/responses/resp_from_page`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
          return { status: r.status, requestId: r.headers.get('x-request-id') };
        },
        [h.url, KEY] as const,
      );
      expect(got.status).toBe(200);
      expect(got.requestId).toMatch(UUID);
      const last = h.mock.received[h.mock.received.length - 1]!;
      expect([last.method, last.url]).toEqual(['DELETE', '/v1/responses/resp_from_page']);
    } finally {
      await page.close();
    }
  });
});

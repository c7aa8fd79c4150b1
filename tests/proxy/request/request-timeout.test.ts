// The time a request may take to arrive: a client that trickles its body gets a JSON
// 408 and nothing reaches the provider, while an answer that streams for longer than
// that time is never cut. Shown with a 1 s limit on `tunnel-manager proxy`'s listener
// (in production it is REQUEST_TIMEOUT_MS, the same on the daemon's listener).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { answerParserErrors, LISTENER_OPTIONS, REQUEST_TIMEOUT_MS } from '../../../src/edge/http-listener.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { call, chat, open } from '../harness.js';
import { startMockUpstream, type MockUpstream } from '../mock-upstream.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sends the head and one byte of a 100-byte body, then one more byte every 300 ms; resolves with the answer or the error. */
function trickle(port: number): Promise<{ status: number; body: string; requestId: string | undefined } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'content-length': 100 } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, requestId: res.headers['x-request-id'] as string | undefined }));
    });
    req.on('error', (e) => resolve({ error: e.message }));
    req.write('{');
    const t = setInterval(() => req.write(' '), 300);
    req.on('close', () => clearInterval(t));
    setTimeout(() => clearInterval(t), 5000).unref();
  });
}

describe('the time a request may take to arrive', () => {
  let mock: MockUpstream;
  let proxy: ProxyServer;
  beforeAll(async () => {
    mock = await startMockUpstream();
    proxy = await startProxyServer({ host: '127.0.0.1', port: 0, requestTimeoutMs: 1000, deps: { getConfig: () => proxySchema.parse({ providers: { mock: { base_url: mock.baseUrl } } }) } });
  });
  afterAll(async () => {
    await proxy.close();
    await mock.close();
  });

  it('cuts off a client that trickles its body with a JSON 408, and nothing reaches the provider', async () => {
    const got = await trickle(proxy.port);
    expect(got).toEqual({
      status: 408,
      body: JSON.stringify({ error: { message: 'the request was not received in full within 1 s', type: 'invalid_request_error', param: null, code: 'request_timeout' } }),
      requestId: expect.stringMatching(UUID),
    });
    expect(mock.received).toHaveLength(0);
  });

  it('does not cut an answer that streams for longer than that', async () => {
    const x = open(`http://127.0.0.1:${proxy.port}`, chat('mock:stream:25:80', { stream: true }));
    expect(await x.done).toBe('end');
    expect(x.text()).toContain('c24 ');
    expect(x.text()).toMatch(/data: \[DONE\]\n\n$/);
  });

  /** Writes `first`, then `then` once the first answer is in; resolves with all that came back before the server closed. */
  const exchange = (first: string, then: string): Promise<string> =>
    new Promise((resolve) => {
      const s = net.connect(proxy.port, '127.0.0.1', () => s.write(first));
      let text = '';
      let sent = false;
      s.on('data', (d) => {
        text += d;
        if (!sent && text.includes('\r\n\r\n')) {
          sent = true;
          setTimeout(() => s.write(then), 50);
        }
      });
      s.on('close', () => resolve(text));
    });
  const models = 'GET /v1/models HTTP/1.1\r\nhost: localhost\r\n\r\n';

  it('answers a second request on a kept-alive connection whose head never completes with the 408, and the server goes on', async () => {
    const got = await exchange(models, 'GET /v1/models HTTP/1.1\r\nhost: localhost\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got).toContain('HTTP/1.1 408 Request Timeout\r\n');
    expect(got).toContain('"code":"request_timeout"');
    // Still serving.
    expect((await call(`http://127.0.0.1:${proxy.port}`, { body: chat('mock:llama3:8b') })).status).toBe(200);
  });

  it('answers a malformed second request on a kept-alive connection with the JSON 400', async () => {
    const got = await exchange(models, 'GARBAGE\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got).toContain('HTTP/1.1 400 Bad Request\r\n');
    expect(got).toContain('"code":"bad_request"');
  });

  it('never writes a 408 in place of the answer to an earlier, complete request still waiting on its provider (a pipelined second one)', async () => {
    const before = mock.received.length;
    const body = chat('mock:slow:1500');
    const got = await new Promise<string>((resolve) => {
      const s = net.connect(proxy.port, '127.0.0.1', () =>
        s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n`),
      );
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('close', () => resolve(text));
      s.on('error', () => resolve(text));
    });
    expect(mock.received.length).toBe(before + 1);
    // The first answer on the connection is the first request's; a 408, if any, can only follow it.
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(got.indexOf('408')).not.toBe(9);
  });

  it('is Node\'s own 300 s on every listener unless set', () => {
    expect(REQUEST_TIMEOUT_MS).toBe(300_000);
    const server = http.createServer(LISTENER_OPTIONS);
    answerParserErrors(server);
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    server.close();
  });

  it('answers a request whose head never completes with the JSON 408 too', async () => {
    const server = http.createServer({ ...LISTENER_OPTIONS, requestTimeout: 500, headersTimeout: 500, connectionsCheckingInterval: 100 }, () => {});
    answerParserErrors(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const got = await new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n'));
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('close', () => resolve(text));
    });
    server.close();
    expect(got).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(got).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
    expect(got).toContain('"code":"request_timeout"');
  });
});

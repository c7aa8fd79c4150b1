// Every route that reads a body has a limit (SPEC §6): the control API's is 2 MiB on
// both of the daemon's listeners, /v1's is proxy.max_body_mib (16 MiB by default). A
// body over it gets 413 naming the limit, as soon as it is known, and the connection
// is cut long before the rest arrives: the daemon never reads, let alone keeps, the
// rest of an upload it refused.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_BODY_LIMIT, createDaemonApp } from '../../../src/api/app.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { startListeners, type Listeners } from '../../../src/api/server.js';
import { proxySchema } from '../../../src/config/proxy-schema.js';
import { startProxyServer, type ProxyServer } from '../../../src/proxy/index.js';
import { FakeEngine, SAMPLE } from '../../unit/api/fake-engine.js';

const MiB = 1024 * 1024;
const SENT_AT_MOST = 256 * MiB;

interface Upload {
  status: number;
  body: string;
  /** Bytes of the body written before the server cut the connection. */
  written: number;
}

/**
 * Streams a body of `total` bytes (declared, or chunked when `declared` is false)
 * until the server answers and closes, and says how much of it was written by then.
 */
function upload(to: { port: number } | { path: string }, path: string, total: number, declared: boolean): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const s = 'port' in to ? net.connect(to.port, '127.0.0.1') : net.connect(to.path);
    let got = '';
    let written = 0;
    let closed = false;
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const framing = declared ? `content-length: ${total}` : 'transfer-encoding: chunked';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => {
      closed = true;
      const cut = got.indexOf('\r\n\r\n');
      if (got === '') return reject(new Error(`no answer; ${written} bytes written`));
      resolve({ status: Number(got.slice(9, 12)), body: got.slice(cut + 4), written });
    });
    const start = '{"tunnels": "';
    s.write(`POST ${path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n${framing}\r\n\r\n${declared ? start : `${start.length.toString(16)}\r\n${start}\r\n`}`);
    const pump = () => {
      while (!closed && written < total) {
        const piece = declared ? chunk : Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
        written += chunk.length;
        if (!s.write(piece)) return void s.once('drain', pump);
      }
      if (!closed && !declared) s.write('0\r\n\r\n');
    };
    pump();
  });
}

const errorOf = (body: string) => {
  // A chunked answer has its size line first.
  const json = body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1);
  return (JSON.parse(json) as { error: { code: string; message: string } }).error;
};

let daemon: Listeners;
let proxy: ProxyServer;
let engine: FakeEngine;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tm-body-limit-'));
  engine = new FakeEngine(SAMPLE);
  const metrics = createMetrics(engine, { processMetrics: false });
  daemon = await startListeners({
    tcpApp: createDaemonApp({ engine, transport: 'tcp', tokens: null, metrics }),
    socketApp: createDaemonApp({ engine, transport: 'socket', tokens: null, metrics }),
    listen: { host: '127.0.0.1', port: 0 },
    socketPath: join(dir, 'api.sock'),
    tokens: null,
  });
  const config = proxySchema.parse({ providers: { mock: { base_url: 'http://127.0.0.1:9/v1' } }, max_body_mib: 1 });
  proxy = await startProxyServer({ host: '127.0.0.1', port: 0, deps: { getConfig: () => config } });
});

afterAll(async () => {
  await daemon.close();
  await proxy.close();
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the control API refuses a body over 2 MiB and cuts the rest', () => {
  const targets = () => [
    { name: 'TCP', to: { port: daemon.tcpPort } },
    { name: 'unix socket', to: { path: join(dir, 'api.sock') } },
  ];
  for (const declared of [true, false]) {
    it(`a ${declared ? 'declared 1 GiB' : 'chunked'} body to POST /config/new: 413 naming the limit, cut after at most a few MiB`, async () => {
      for (const t of targets()) {
        const r = await upload(t.to, '/config/new', declared ? 1024 * MiB : SENT_AT_MOST, declared);
        expect({ on: t.name, status: r.status }).toEqual({ on: t.name, status: 413 });
        expect(errorOf(r.body)).toMatchObject({ code: 'request_too_large', message: expect.stringContaining(`${CONTROL_BODY_LIMIT} bytes (2 MiB)`) });
        // Read (and dropped) at most 4 times the limit past it, plus what the kernel's buffers held.
        expect({ on: t.name, cutEarly: r.written < 32 * MiB }).toEqual({ on: t.name, cutEarly: true });
      }
    });
  }

  it('a body within the limit is read as before', async () => {
    const body = JSON.stringify({ tunnels: [] });
    const res = await new Promise<number>((resolve) => {
      const s = net.connect(daemon.tcpPort, '127.0.0.1');
      let got = '';
      s.on('data', (d) => (got += String(d)));
      s.on('close', () => resolve(Number(got.slice(9, 12))));
      s.end(`PUT /config HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    });
    // No config file in this app: the route is absent (405), which shows the body limit let it through.
    expect(res).toBe(405);
  });
});

describe('/v1 takes proxy.max_body_mib', () => {
  for (const declared of [true, false]) {
    it(`a ${declared ? 'declared' : 'chunked'} body over 1 MiB: 413 naming 1048576 bytes, cut early`, async () => {
      const r = await upload({ port: proxy.port }, '/v1/chat/completions', declared ? 1024 * MiB : SENT_AT_MOST, declared);
      expect(r.status).toBe(413);
      expect(errorOf(r.body)).toMatchObject({ code: 'request_too_large', message: expect.stringContaining('1048576 bytes') });
      expect(r.written).toBeLessThan(32 * MiB);
    });
  }

  it('refuses a max_body_mib that is not a whole number of MiB from 1 to 1024, saying what it expected', () => {
    for (const [value, expected] of [[0, 'at least 1 MiB'], [2048, 'at most 1024 MiB'], [1.5, 'whole number'], ['16MiB', 'number of MiB']] as const) {
      const r = proxySchema.safeParse({ max_body_mib: value });
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]).toMatchObject({ path: ['max_body_mib'], message: expect.stringContaining(expected) });
    }
  });
});

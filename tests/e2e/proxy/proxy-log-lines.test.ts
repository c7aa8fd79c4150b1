// The log as `tunnel-manager proxy` writes it: its lines are gathered into one write
// per turn of the event loop (src/daemon/log.ts), so these check that none is lost,
// torn or reordered by that: concurrent requests each get exactly one whole
// `proxy_request` line, and a SIGTERM right after the last answer still finds every
// line on stderr, then `shutdown` and `stopped` last.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batchLines, createLog, LINE_BATCH_BYTES, type Line } from '../../../src/daemon/log.js';
import { OWN_JSON } from '../../../src/kernel/log-entry.js';
import { proxyRequestJson, type ProxyRequestEntry } from '../../../src/proxy/observe/request-record.js';
import { startMockUpstream, type MockUpstream } from '../../proxy/mock-upstream.js';
import { MAIN, port } from '../daemon-harness.js';

let upstream: MockUpstream;
let dir: string;

beforeAll(async () => {
  upstream = await startMockUpstream();
  dir = mkdtempSync(join(tmpdir(), 'tm-proxy-log-'));
});

afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('batchLines', () => {
  it('writes what one window queued in one write, in order, and flushes on demand', () => {
    const writes: string[] = [];
    const turns: (() => void)[] = [];
    const b = batchLines((t) => writes.push(t), (run) => turns.push(run));
    b.write('a\n');
    b.write('b\n');
    expect(writes).toEqual([]);
    expect(turns).toHaveLength(1);
    turns.shift()?.();
    expect(writes).toEqual(['a\nb\n']);
    b.write('c\n');
    b.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
    // The window's own flush finds nothing left and writes nothing.
    turns.shift()?.();
    expect(writes).toHaveLength(2);
  });

  it('writes at once what reaches LINE_BATCH_BYTES, without waiting for the window', () => {
    const writes: string[] = [];
    const turns: (() => void)[] = [];
    const b = batchLines((t) => writes.push(t), (run) => turns.push(run));
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < LINE_BATCH_BYTES / line.length - 1; i++) b.write(line);
    expect(writes).toEqual([]);
    b.write(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(LINE_BATCH_BYTES);
    b.write('after\n');
    turns.splice(0).forEach((run) => run());
    expect(writes).toEqual([writes[0], 'after\n']);
  });
});

describe('the proxy_request line made by hand', () => {
  const base: ProxyRequestEntry = { event: 'proxy_request', request_id: 'r-1', endpoint: '/chat/completions', model: 'bench:instant', provider: 'bench', client: undefined, status: 200, complete: true, ms: 0.4, ttfb_ms: 0.3 };
  const entries: ProxyRequestEntry[] = [
    base,
    { ...base, client: 'bob', tokens_in: 12, tokens_out: 0 },
    { ...base, model: null, provider: null, status: null, complete: false, ms: 1234.5, ttfb_ms: null },
    { ...base, model: 'm"\\\n\u2028é…𝄞\u0000', provider: 'p', fallbacks: [{ provider: 'a', reason: 'timeout' }, { provider: 'b"', reason: 'status_5xx' }] },
    { ...base, ms: 1e21, ttfb_ms: 0, tokens_in: 2 ** 53 },
  ];
  it.each(entries.map((e, i) => [i, e] as const))('writes entry %i as JSON.stringify would', (_, e) => {
    expect(proxyRequestJson(e)).toBe(JSON.stringify(e).slice(1, -1));
    const made: Line[] = [];
    createLog((l) => made.push(l), () => 0)({ ...e, [OWN_JSON]: proxyRequestJson } as unknown as Record<string, unknown>);
    // The line is made when its batch is written: what is queued is its maker.
    expect(made.map((l) => typeof l)).toEqual(['function']);
    const lines = made.map((l) => (typeof l === 'string' ? l : l()));
    expect(lines).toEqual([`${JSON.stringify({ time: '1970-01-01T00:00:00.000Z', ...e })}\n`]);
  });
});

describe('batchLines with lines made later', () => {
  it('makes them when the batch is written, in order among the others; a maker that throws costs its own line only', () => {
    const writes: string[] = [];
    const turns: (() => void)[] = [];
    const b = batchLines((t) => writes.push(t), (run) => turns.push(run));
    let made = 0;
    b.write('a\n');
    b.write(() => `${++made}\n`);
    b.write(() => {
      throw new Error('a bug');
    });
    b.write('c\n');
    expect(made).toBe(0);
    turns.shift()?.();
    expect(made).toBe(1);
    expect(writes).toEqual([`a\n1\n${JSON.stringify({ event: 'log_line_failed', error: 'Error: a bug' })}\nc\n`]);
  });

  it('counts a line made later toward LINE_BATCH_BYTES', () => {
    const writes: string[] = [];
    const b = batchLines((t) => writes.push(t), () => undefined);
    for (let i = 0; i < 1000 && writes.length === 0; i++) b.write(() => 'x\n');
    expect(writes).toHaveLength(1);
    expect(writes[0]?.length).toBeLessThan(LINE_BATCH_BYTES);
  });
});

describe('createLog', () => {
  it('writes each entry as one JSON line with the time first, as JSON.stringify({ time, ...entry }) would', () => {
    const lines: string[] = [];
    const at = Date.parse('2026-11-27T23:00:00.123Z');
    const log = createLog((l) => lines.push(typeof l === 'string' ? l : l()), () => at);
    const entries: Record<string, unknown>[] = [
      { event: 'proxy_request', model: 'a"b\n', ms: 0.4, status: null, complete: true, fallbacks: [{ provider: 'x', reason: 'timeout' }] },
      {},
      { time: 'its own', event: 'x' },
      { event: 'y', skipped: undefined },
    ];
    for (const e of entries) log(e);
    const time = '2026-11-27T23:00:00.123Z';
    expect(lines).toEqual(entries.map((e) => `${JSON.stringify({ time, ...e })}\n`));
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(entries.map((e) => JSON.parse(JSON.stringify({ time, ...e })) as unknown));
  });
});

describe('tunnel-manager proxy', () => {
  it('writes one whole line per request, every one of them before it stops on SIGTERM', async () => {
    const p = await port();
    writeFileSync(join(dir, 'config.yaml'), `proxy:\n  providers:\n    direct:\n      base_url: ${upstream.baseUrl}\n`);
    const child = spawn(process.execPath, [MAIN, 'proxy', '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${p}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const seen = () => (stderr.includes('"event":"proxy_started"') ? resolve() : undefined);
        child.stderr.on('data', seen);
        void exited.then(() => reject(new Error(`tunnel-manager proxy exited:\n${stderr}`)));
      });
      const ask = async (i: number) => {
        const res = await fetch(`http://127.0.0.1:${p}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': `log-line-${i}` },
          body: JSON.stringify({ model: 'direct:m', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.status).toBe(200);
        await res.text();
      };
      // Three waves of 20 at once: several lines come due in one turn.
      for (let wave = 0; wave < 3; wave++) await Promise.all(Array.from({ length: 20 }, (_, i) => ask(wave * 20 + i)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    const lines = stderr.split('\n');
    expect(lines.pop()).toBe('');
    const entries = lines.map((l) => JSON.parse(l) as { event: string; request_id?: string; status?: number });
    const requests = entries.filter((e) => e.event === 'proxy_request');
    expect(requests.map((e) => e.request_id).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `log-line-${i}`).sort());
    expect(requests.every((e) => e.status === 200)).toBe(true);
    expect(entries.map((e) => e.event).slice(-2)).toEqual(['shutdown', 'stopped']);
    expect(entries[0]?.event).toBe('proxy_config');
  });
});

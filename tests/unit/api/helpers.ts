// Shared by the API tests: build the app over the fake engine, read SSE bodies.
import { Hono } from 'hono';
import { createDaemonApp } from '../../../src/api/app.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStreamSlots } from '../../../src/api/events.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { ConfigStore } from '../../../src/config-edit/store.js';
import { createSseReader, type SseItem } from '../../../src/api/sse-reader.js';
import { FakeEngine, SAMPLE, type Entry } from './fake-engine.js';

export function build(opts: { entries?: Entry[]; transport?: 'tcp' | 'socket'; tokens?: string[] | null; proxy?: boolean; keepAliveMs?: number; eventSlots?: EventStreamSlots; configPath?: string } = {}) {
  const engine = new FakeEngine(opts.entries ?? SAMPLE);
  const logs: Record<string, unknown>[] = [];
  const { configPath, configFile } = tempConfigFile(opts.configPath, (e) => logs.push(e));
  const metrics = createMetrics(engine, { processMetrics: false });
  const bugs: unknown[] = [];
  const proxy = new Hono();
  proxy.get('/models', (c) => c.json({ object: 'list', data: [] }));
  const app = createDaemonApp({
    engine,
    configFile,
    transport: opts.transport ?? 'tcp',
    tokens: opts.tokens ?? null,
    metrics,
    proxy: opts.proxy ? proxy : undefined,
    keepAliveMs: opts.keepAliveMs,
    eventSlots: opts.eventSlots,
    onBug: (e) => bugs.push(e),
  });
  return { engine, app, metrics, bugs, configPath, logs };
}

/** The file the /config routes edit: a config.yaml in a fresh temp folder unless `path` is given (it need not exist). */
export function tempConfigFile(path?: string, log: (e: Record<string, unknown>) => void = () => undefined) {
  const configPath = path ?? join(mkdtempSync(join(tmpdir(), 'tm-api-')), 'config.yaml');
  const configFile = new ConfigStore({ path: configPath, writer: 'api', mode: 'default', backupDir: join(configPath, '..', 'backups'), keepBackups: 3, log });
  return { configPath, configFile };
}

/** Reads SSE items from a response body until `until` says stop (or the timeout). */
export async function readSse(body: ReadableStream<Uint8Array>, until: (items: SseItem[]) => boolean, timeoutMs = 5000): Promise<SseItem[]> {
  const reader = body.getReader();
  const sse = createSseReader();
  const items: SseItem[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (!until(items)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; got ${JSON.stringify(items)}`);
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out; got ${JSON.stringify(items)}`)), left)),
      ]);
      if (chunk.done) break;
      items.push(...sse.push(chunk.value));
    }
  } finally {
    reader.releaseLock();
  }
  return items;
}

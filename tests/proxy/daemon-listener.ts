/**
 * The daemon's TCP listener with the proxy mounted at /v1, as `tunnel-manager serve`
 * builds it (the Hono app, and the fast path before it), in this process: the
 * tunnel side is an in-memory engine with no tunnels.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDaemonApp } from '../../src/api/app.js';
import { createMetrics } from '../../src/api/metrics.js';
import { startListeners } from '../../src/api/server.js';
import { createProxyApp, createProxyMetrics, type ProxyDeps } from '../../src/proxy/index.js';
import { FakeEngine } from '../unit/api/fake-engine.js';

export async function startDaemonListener(deps: ProxyDeps): Promise<{ port: number; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-v1-'));
  const engine = new FakeEngine([]);
  const proxyMetrics = deps.metrics ?? createProxyMetrics();
  const proxy = createProxyApp({ ...deps, metrics: proxyMetrics });
  const metrics = createMetrics(engine, { processMetrics: false, also: [proxyMetrics.registry] });
  const listeners = await startListeners({
    tcpApp: createDaemonApp({ engine, transport: 'tcp', tokens: null, metrics, proxy }),
    tcpFastPath: proxy.fastPath,
    socketApp: createDaemonApp({ engine, transport: 'socket', tokens: null, metrics }),
    listen: { host: '127.0.0.1', port: 0 },
    socketPath: join(dir, 'api.sock'),
    tokens: null,
  });
  return {
    port: listeners.tcpPort,
    async close() {
      await listeners.close();
      engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

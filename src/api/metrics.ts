import { Hono } from 'hono';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { EngineApi } from './engine-api.js';
import { TUNNEL_STATES } from '../tunnel/status.js';
import { internalErrorHandler } from './errors.js';

/** The daemon's Prometheus metrics: one registry of its own (never prom-client's global one). */
export interface DaemonMetrics {
  registry: Registry;
  /** Stops counting reloads. */
  close(): void;
}

const parseTime = (iso: string | null): number | null => {
  if (iso === null) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t / 1000;
};

/** How often the event-loop lag is sampled for `nodejs_eventloop_lag_*`. */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Per-tunnel values are read from the supervisor at scrape time (so a removed tunnel
 * disappears); reloads are counted as they happen. Create one per daemon and pass it
 * to both listeners' apps, so the counts agree whichever one is scraped.
 */
export function createMetrics(engine: EngineApi, opts: { now?: () => number; processMetrics?: boolean; also?: readonly Registry[] } = {}): DaemonMetrics {
  const now = opts.now ?? Date.now;
  const own = new Registry();
  // The event-loop lag series sample every 100 ms rather than prom-client's 10 ms: at
  // 10 ms that timer alone kept an idle daemon at ~0.9 % of a core (BENCHMARKS.md, Scale).
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: own, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const labelNames = ['hash', 'name'] as const;
  const statuses = () => engine.supervisor.statuses();

  new Gauge({
    name: 'tunnel_up',
    help: '1 while the tunnel\'s forward is established (RUNNING), else 0.',
    labelNames,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ hash: s.hash, name: s.name }, s.status === 'RUNNING' ? 1 : 0);
    },
  });

  new Gauge({
    name: 'tunnel_healthy',
    help: '1 while RUNNING with health ok (SPEC §5), else 0: degraded, unknown (ssh cannot tell) or not running.',
    labelNames,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ hash: s.hash, name: s.name }, s.status === 'RUNNING' && s.health.state === 'ok' ? 1 : 0);
    },
  });

  new Gauge({
    name: 'tunnel_health',
    help: 'The tunnel\'s health state (ok, degraded, unknown): 1 for the current one, 0 for the others.',
    labelNames: ['hash', 'name', 'state'] as const,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) {
        for (const state of ['ok', 'degraded', 'unknown'] as const) this.set({ hash: s.hash, name: s.name, state }, s.health.state === state ? 1 : 0);
      }
    },
  });

  new Gauge({
    name: 'tunnel_state',
    help: 'The tunnel\'s state: 1 for the current one, 0 for the others.',
    labelNames: ['hash', 'name', 'state'] as const,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) {
        for (const state of TUNNEL_STATES) this.set({ hash: s.hash, name: s.name, state }, s.status === state ? 1 : 0);
      }
    },
  });

  new Counter({
    name: 'tunnel_restarts_total',
    help: 'ssh restarts of the tunnel since the daemon started.',
    labelNames,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) this.inc({ hash: s.hash, name: s.name }, s.restarts);
    },
  });

  new Gauge({
    name: 'tunnel_state_changed_timestamp_seconds',
    help: 'Unix time of the tunnel\'s last state change.',
    labelNames,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) {
        const t = parseTime(s.since);
        if (t !== null) this.set({ hash: s.hash, name: s.name }, t);
      }
    },
  });

  new Gauge({
    name: 'tunnel_state_duration_seconds',
    help: 'Seconds the tunnel has been in its current state.',
    labelNames: ['hash', 'name', 'state'] as const,
    registers: [own],
    collect() {
      this.reset();
      for (const s of statuses()) {
        const t = parseTime(s.since);
        if (t !== null) this.set({ hash: s.hash, name: s.name, state: s.status }, Math.max(0, now() / 1000 - t));
      }
    },
  });

  const reloads = new Counter({
    name: 'config_reloads_total',
    help: 'Config reloads by result: ok (applied) or error (invalid or missing file, nothing applied).',
    labelNames: ['result'] as const,
    registers: [own],
  });
  reloads.inc({ result: 'ok' }, 0);
  reloads.inc({ result: 'error' }, 0);
  const unsubscribe = engine.subscribeReloads((r) => reloads.inc({ result: r.ok ? 'ok' : 'error' }));

  new Gauge({
    name: 'config_valid',
    help: '1 when the config file on disk is valid, 0 while it is invalid (the last good config keeps running).',
    registers: [own],
    collect() {
      this.set(engine.configHealth().valid ? 1 : 0);
    },
  });

  new Gauge({
    name: 'config_missing',
    help: '1 while the config file does not exist.',
    registers: [own],
    collect() {
      this.set(engine.configHealth().missing ? 1 : 0);
    },
  });

  // Other parts' registries (the proxy's) are served with the daemon's on one /metrics;
  // merging copies the series registered so far, so it comes last.
  const registry = opts.also === undefined || opts.also.length === 0 ? own : Registry.merge([own, ...opts.also]);
  return { registry, close: unsubscribe };
}

/** GET /metrics: Prometheus text format. */
export function createMetricsApp(metrics: DaemonMetrics, onBug?: Parameters<typeof internalErrorHandler>[0]): Hono {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    const text = await metrics.registry.metrics();
    return c.body(text, 200, { 'content-type': metrics.registry.contentType });
  });
  app.onError(internalErrorHandler(onBug));
  return app;
}

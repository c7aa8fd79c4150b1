import { describe, expect, it } from 'vitest';
import { createDaemonApp } from '../../../src/api/app.js';
import { tempConfigFile } from './helpers.js';
import { createMetrics } from '../../../src/api/metrics.js';
import { TUNNEL_STATES } from '../../../src/tunnel/status.js';
import { FakeEngine, SAMPLE } from './fake-engine.js';

interface Sample { name: string; labels: Record<string, string>; value: number }

/** Parses Prometheus text exposition (the subset prom-client writes). */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GET /metrics', () => {
  it('exposes per-tunnel state, up, restarts, state timing, reloads and config validity, labelled by hash and name', async () => {
    const engine = new FakeEngine(SAMPLE);
    const metrics = createMetrics(engine);
    const app = createDaemonApp({ engine, configFile: tempConfigFile().configFile, transport: 'tcp', tokens: null, metrics });
    const [db, web] = engine.tunnels();
    engine.outcomes.set(web!.hash, { state: 'RETRYING', error: 'connection refused' });
    await app.request(`/start/${db!.hash}`, { method: 'POST' });
    await app.request(`/start/${web!.hash}`, { method: 'POST' });
    await sleep(80);
    await app.request('/reload', { method: 'POST' });
    engine.health = { ...engine.health, valid: false, error: 'bad' };
    await app.request('/reload', { method: 'POST' });
    await app.request('/reload', { method: 'POST' });

    const r = await app.request('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const { samples, types } = parse(await r.text());
    const get = (name: string, labels: Record<string, string>) =>
      samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

    expect(get('tunnel_up', { hash: db!.hash, name: 'db' })[0]?.value).toBe(1);
    expect(get('tunnel_up', { hash: web!.hash, name: 'web' })[0]?.value).toBe(0);
    expect(get('tunnel_up', {})).toHaveLength(3);
    // Health: 1 only while RUNNING and ok; one tunnel_health sample per tunnel and state.
    expect(get('tunnel_healthy', { hash: db!.hash, name: 'db' })[0]?.value).toBe(1);
    expect(get('tunnel_healthy', { hash: web!.hash, name: 'web' })[0]?.value).toBe(0);
    expect(get('tunnel_health', { hash: db!.hash, state: 'ok' })[0]?.value).toBe(1);
    expect(get('tunnel_health', { hash: web!.hash, state: 'unknown' })[0]?.value).toBe(1);
    expect(get('tunnel_health', {})).toHaveLength(3 * 3);
    expect(get('tunnel_state', { hash: db!.hash, state: 'RUNNING' })[0]?.value).toBe(1);
    expect(get('tunnel_state', { hash: db!.hash, state: 'STOPPED' })[0]?.value).toBe(0);
    expect(get('tunnel_state', { hash: web!.hash, state: 'RETRYING' })[0]?.value).toBe(1);
    // One sample per tunnel and state.
    expect(get('tunnel_state', {})).toHaveLength(3 * TUNNEL_STATES.length);
    expect(get('tunnel_state', { hash: web!.hash, state: 'AUTH_REQUIRED' })[0]?.value).toBe(0);
    expect(get('tunnel_restarts_total', { hash: web!.hash, name: 'web' })[0]?.value).toBe(1);
    expect(types.get('tunnel_restarts_total')).toBe('counter');
    const changed = get('tunnel_state_changed_timestamp_seconds', { hash: db!.hash })[0]!.value;
    expect(Math.abs(changed - Date.now() / 1000)).toBeLessThan(5);
    const dur = get('tunnel_state_duration_seconds', { hash: db!.hash, state: 'RUNNING' })[0]!.value;
    expect(dur).toBeGreaterThanOrEqual(0);
    expect(dur).toBeLessThan(5);
    expect(get('config_reloads_total', { result: 'ok' })[0]?.value).toBe(1);
    expect(get('config_reloads_total', { result: 'error' })[0]?.value).toBe(2);
    expect(get('config_valid', {})[0]?.value).toBe(0);
    expect(get('config_missing', {})[0]?.value).toBe(0);
    // Default process metrics, from this registry.
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);
    // Sampled less often than prom-client's default (idle CPU), but still there.
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds')).toBe(true);

    // A tunnel removed from the config disappears from the next scrape.
    engine.setTunnels([SAMPLE[0]!]);
    const after = parse(await (await app.request('/metrics')).text());
    expect(after.samples.filter((s) => s.name === 'tunnel_up')).toHaveLength(1);
    metrics.close();
    engine.close();
  });

  it('each daemon has its own registry: two never share or collide', async () => {
    const a = new FakeEngine(SAMPLE);
    const b = new FakeEngine([SAMPLE[0]!]);
    const ma = createMetrics(a);
    const mb = createMetrics(b);
    expect(ma.registry).not.toBe(mb.registry);
    const ta = parse(await ma.registry.metrics()).samples.filter((s) => s.name === 'tunnel_up');
    const tb = parse(await mb.registry.metrics()).samples.filter((s) => s.name === 'tunnel_up');
    expect([ta.length, tb.length]).toEqual([3, 1]);
    ma.close();
    mb.close();
  });
});

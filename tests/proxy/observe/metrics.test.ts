// The proxy's series as Prometheus text: counters and histograms kept as plain
// numbers must render exactly as prom-client's own would, alone and merged into
// another registry (as the daemon's /metrics does).
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createProxyMetrics } from '../../../src/proxy/observe/metrics.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const records = [
  { provider: 'a', endpoint: '/chat/completions', status: 200, seconds: 0.003, ttfbSeconds: 0.002, overheadSeconds: 0.0002, tokensIn: 5, tokensOut: 7, cut: false },
  { provider: 'a', endpoint: '/chat/completions', status: 200, seconds: 0.2, ttfbSeconds: 0.01, tokensIn: 1, tokensOut: null, cut: true },
  { provider: 'a', endpoint: '/chat/completions', status: 502, seconds: 700, ttfbSeconds: null, overheadSeconds: 0.003, tokensIn: null, tokensOut: null, cut: false },
  { provider: 'none', endpoint: '/embeddings', status: 'client_closed' as const, seconds: 0.05, ttfbSeconds: null, tokensIn: null, tokensOut: null, cut: false },
];

/** The same records through prom-client's own metrics, for comparison. */
function reference(): Registry {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'proxy_requests_total', help: 'x', labelNames: ['provider', 'endpoint', 'status'], registers });
  const duration = new Histogram({ name: 'proxy_request_duration_seconds', help: 'x', labelNames: ['provider', 'endpoint'], buckets: BUCKETS, registers });
  const ttfb = new Histogram({ name: 'proxy_time_to_first_byte_seconds', help: 'x', labelNames: ['provider', 'endpoint'], buckets: BUCKETS, registers });
  const overhead = new Histogram({ name: 'proxy_overhead_seconds', help: 'x', labelNames: ['provider', 'endpoint'], buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers });
  const tokens = new Counter({ name: 'proxy_tokens_total', help: 'x', labelNames: ['provider', 'endpoint', 'direction'], registers });
  const cuts = new Counter({ name: 'proxy_responses_cut_total', help: 'x', labelNames: ['provider', 'endpoint'], registers });
  const fallbacks = new Counter({ name: 'proxy_fallbacks_total', help: 'x', labelNames: ['provider', 'reason'], registers });
  for (const r of records) {
    const labels = { provider: r.provider, endpoint: r.endpoint };
    requests.inc({ ...labels, status: String(r.status) });
    duration.observe(labels, r.seconds);
    if (r.ttfbSeconds !== null) ttfb.observe(labels, r.ttfbSeconds);
    if ('overheadSeconds' in r && r.overheadSeconds !== undefined) overhead.observe(labels, r.overheadSeconds);
    if (r.tokensIn !== null) tokens.inc({ ...labels, direction: 'in' }, r.tokensIn);
    if (r.tokensOut !== null) tokens.inc({ ...labels, direction: 'out' }, r.tokensOut);
    if (r.cut) cuts.inc(labels);
  }
  fallbacks.inc({ provider: 'b', reason: 'timeout' }, 2);
  return registry;
}

/** The sample lines only (the help texts differ on purpose). */
const samples = (text: string): string[] => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('proxy metrics', () => {
  it('render the same samples as prom-client counters and histograms', async () => {
    const m = createProxyMetrics();
    for (const r of records) m.record(r);
    m.fellBack('b', 'timeout');
    m.fellBack('b', 'timeout');
    const ours = await m.registry.metrics();
    expect(samples(ours)).toEqual(samples(await reference().metrics()));
    expect(ours).toContain('# TYPE proxy_request_duration_seconds histogram');
    expect(ours).toContain('# TYPE proxy_requests_total counter');
    expect(ours).toContain('proxy_request_duration_seconds_bucket{le="+Inf",provider="a",endpoint="/chat/completions"} 3');
  });

  it('merge into another registry', async () => {
    const m = createProxyMetrics();
    m.record(records[0]!);
    const own = new Registry();
    new Counter({ name: 'daemon_thing_total', help: 'x', registers: [own] }).inc();
    const text = await Registry.merge([own, m.registry]).metrics();
    expect(text).toContain('daemon_thing_total 1');
    expect(text).toContain('proxy_tokens_total{provider="a",endpoint="/chat/completions",direction="out"} 7');
    expect(text).toContain('proxy_time_to_first_byte_seconds_count{provider="a",endpoint="/chat/completions"} 1');
  });
});

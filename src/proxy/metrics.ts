import { Counter, Histogram, Registry } from 'prom-client';

/** The proxy's Prometheus series, in a registry of its own that the host serves (merged into the daemon's /metrics). */
export interface ProxyMetrics {
  registry: Registry;
  requests: Counter<'provider' | 'endpoint' | 'status'>;
  duration: Histogram<'provider' | 'endpoint'>;
  ttfb: Histogram<'provider' | 'endpoint'>;
  tokens: Counter<'provider' | 'endpoint' | 'direction'>;
  fallbacks: Counter<'provider' | 'reason'>;
  /** Counts one finished request. */
  record(r: RequestRecord): void;
}

/** One finished request, as the series count it. */
export interface RequestRecord {
  provider: string;
  endpoint: string;
  /** The status answered, or `client_closed`. */
  status: string;
  seconds: number;
  ttfbSeconds: number | null;
  tokensIn: number | null;
  tokensOut: number | null;
}

interface Children {
  duration: { observe(v: number): void };
  ttfb: { observe(v: number): void };
  tokensIn: { inc(v: number): void };
  tokensOut: { inc(v: number): void };
  requests: Map<string, { inc(): void }>;
}

// From a cached embedding (milliseconds) to a long generation (minutes).
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export function createProxyMetrics(): ProxyMetrics {
  const registry = new Registry();
  const registers = [registry];
  const series = {
    registry,
    requests: new Counter({
      name: 'proxy_requests_total',
      help: 'Requests to /v1 by provider ("none" when none was chosen), endpoint and the status answered.',
      labelNames: ['provider', 'endpoint', 'status'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'proxy_request_duration_seconds',
      help: 'Seconds from a request\'s arrival to the end of its answer.',
      labelNames: ['provider', 'endpoint'] as const,
      buckets: BUCKETS,
      registers,
    }),
    ttfb: new Histogram({
      name: 'proxy_time_to_first_byte_seconds',
      help: 'Seconds from a request\'s arrival to the first byte of the provider\'s answer body reaching the client.',
      labelNames: ['provider', 'endpoint'] as const,
      buckets: BUCKETS,
      registers,
    }),
    tokens: new Counter({
      name: 'proxy_tokens_total',
      help: 'Tokens the providers reported in their usage: direction "in" (prompt) or "out" (completion).',
      labelNames: ['provider', 'endpoint', 'direction'] as const,
      registers,
    }),
    fallbacks: new Counter({
      name: 'proxy_fallbacks_total',
      help: 'Times an alias target was passed over for the next one: reason unreachable, timeout, status_429, status_5xx, resting, tunnel_down, key_unusable.',
      labelNames: ['provider', 'reason'] as const,
      registers,
    }),
  };
  // Bound children per label set: prom-client hashes the label object on every call
  // otherwise, which costs more than the rest of the bookkeeping of a request.
  const children = new Map<string, Children>();
  const childrenOf = (provider: string, endpoint: string): Children => {
    const key = `${provider}\n${endpoint}`;
    let c = children.get(key);
    if (c === undefined) {
      const labels = { provider, endpoint };
      c = {
        duration: series.duration.labels(labels),
        ttfb: series.ttfb.labels(labels),
        tokensIn: series.tokens.labels({ ...labels, direction: 'in' }),
        tokensOut: series.tokens.labels({ ...labels, direction: 'out' }),
        requests: new Map(),
      };
      children.set(key, c);
    }
    return c;
  };
  return {
    ...series,
    record(r) {
      const c = childrenOf(r.provider, r.endpoint);
      let requests = c.requests.get(r.status);
      if (requests === undefined) {
        requests = series.requests.labels({ provider: r.provider, endpoint: r.endpoint, status: r.status });
        c.requests.set(r.status, requests);
      }
      requests.inc();
      c.duration.observe(r.seconds);
      if (r.ttfbSeconds !== null) c.ttfb.observe(r.ttfbSeconds);
      if (r.tokensIn !== null) c.tokensIn.inc(r.tokensIn);
      if (r.tokensOut !== null) c.tokensOut.inc(r.tokensOut);
    },
  };
}

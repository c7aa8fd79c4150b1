import { Registry } from 'prom-client';
import { PlainCounter, PlainHistogram } from './series.js';

/** The proxy's Prometheus series, in a registry of its own that the host serves (merged into the daemon's /metrics). */
export interface ProxyMetrics {
  registry: Registry;
  /** Counts one finished request. */
  record(r: RequestRecord): void;
  /** Counts a target passed over for the next one. */
  fellBack(provider: string, reason: string): void;
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

// From a cached embedding (milliseconds) to a long generation (minutes).
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

type Pair = 'provider' | 'endpoint';

export function createProxyMetrics(): ProxyMetrics {
  const registry = new Registry();
  const requests = new PlainCounter<Pair | 'status'>(
    'proxy_requests_total',
    'Requests to /v1 by provider ("none" when none was chosen), endpoint and the status answered.',
    registry,
  );
  const duration = new PlainHistogram<Pair>('proxy_request_duration_seconds', "Seconds from a request's arrival to the end of its answer.", BUCKETS, registry);
  const ttfb = new PlainHistogram<Pair>(
    'proxy_time_to_first_byte_seconds',
    "Seconds from a request's arrival to the first byte of the provider's answer body reaching the client.",
    BUCKETS,
    registry,
  );
  const tokens = new PlainCounter<Pair | 'direction'>(
    'proxy_tokens_total',
    'Tokens the providers reported in their usage: direction "in" (prompt) or "out" (completion).',
    registry,
  );
  const fallbacks = new PlainCounter<'provider' | 'reason'>(
    'proxy_fallbacks_total',
    'Times an alias target was passed over for the next one: reason unreachable, timeout, status_429, status_5xx, resting, tunnel_down, key_unusable.',
    registry,
  );
  const tokenCell = (pair: string, provider: string, endpoint: string, direction: 'in' | 'out') => {
    const key = `${pair}\n${direction}`;
    return tokens.find(key) ?? tokens.create(key, { provider, endpoint, direction });
  };
  return {
    registry,
    record(r) {
      // One key per label set; the label objects are built only the first time.
      const pair = `${r.provider}\n${r.endpoint}`;
      const { provider, endpoint, status } = r;
      const withStatus = `${pair}\n${status}`;
      (requests.find(withStatus) ?? requests.create(withStatus, { provider, endpoint, status })).value += 1;
      duration.observe(duration.find(pair) ?? duration.create(pair, { provider, endpoint }), r.seconds);
      if (r.ttfbSeconds !== null) ttfb.observe(ttfb.find(pair) ?? ttfb.create(pair, { provider, endpoint }), r.ttfbSeconds);
      if (r.tokensIn !== null) tokenCell(pair, provider, endpoint, 'in').value += r.tokensIn;
      if (r.tokensOut !== null) tokenCell(pair, provider, endpoint, 'out').value += r.tokensOut;
    },
    fellBack(provider, reason) {
      const key = `${provider}\n${reason}`;
      (fallbacks.find(key) ?? fallbacks.create(key, { provider, reason })).value += 1;
    },
  };
}

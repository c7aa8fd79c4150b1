import { Registry } from 'prom-client';
import { PlainCounter, PlainHistogram, type Cell, type HistogramCell } from './series.js';

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
  status: number | 'client_closed';
  seconds: number;
  ttfbSeconds: number | null;
  /** The proxy's own time until the answer's head (its Server-Timing), null when no timed head was written. */
  overheadSeconds?: number | null;
  tokensIn: number | null;
  tokensOut: number | null;
  /** The answer had begun and was cut short by the provider (died, fell silent, ended mid-event). */
  cut: boolean;
  /** The client of `proxy.clients` it came from: its series carry a `client` label (others have none). */
  client?: string | null;
}

// From a cached embedding (milliseconds) to a long generation (minutes).
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
// The proxy's own share: a tenth of a millisecond when all is well, more under load or with a large body.
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

type Pair = 'provider' | 'endpoint';

interface PairCells {
  key: string;
  labels: Record<Pair, string>;
  byStatus: Map<number | 'client_closed', Cell<Pair | 'status'>>;
  duration: HistogramCell<Pair>;
  ttfb: HistogramCell<Pair> | null;
  overhead: HistogramCell<Pair> | null;
  tokensIn: Cell<Pair | 'direction'> | null;
  tokensOut: Cell<Pair | 'direction'> | null;
}

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
  const overhead = new PlainHistogram<Pair>(
    'proxy_overhead_seconds',
    "Seconds the proxy itself spent on a request until its answer's head was written, without the wait for providers' heads (the Server-Timing header's proxy;dur).",
    OVERHEAD_BUCKETS,
    registry,
  );
  const tokens = new PlainCounter<Pair | 'direction'>(
    'proxy_tokens_total',
    'Tokens the providers reported in their usage: direction "in" (prompt) or "out" (completion).',
    registry,
  );
  const cuts = new PlainCounter<Pair>(
    'proxy_responses_cut_total',
    "Answers that had begun and were cut short by their provider (it died, fell silent past its timeout or ended in the middle of an event): the client got the proxy's error event or a closed connection.",
    registry,
  );
  const fallbacks = new PlainCounter<'provider' | 'reason'>(
    'proxy_fallbacks_total',
    'Times an alias target was passed over for the next one: reason unreachable, timeout, status_429, status_5xx, resting, tunnel_down, key_unusable.',
    registry,
  );
  // The cells of one provider and endpoint, found with two lookups on strings that
  // come from the config and the endpoint table (their hashes are cached), never on a
  // key built per request.
  const pairs = new Map<string, Map<string, PairCells>>();
  const cellsOf = (provider: string, endpoint: string, client: string | null | undefined): PairCells => {
    let byEndpoint = pairs.get(provider);
    if (byEndpoint === undefined) pairs.set(provider, (byEndpoint = new Map()));
    // A client's requests have cells of their own (keyed with its name, which the config limits to label characters).
    const slot = client == null ? endpoint : `${endpoint}\n${client}`;
    let cells = byEndpoint.get(slot);
    if (cells === undefined) {
      const key = `${provider}\n${slot}`;
      const labels = (client == null ? { provider, endpoint } : { provider, endpoint, client }) as Record<Pair, string>;
      cells = { key, labels, byStatus: new Map(), duration: duration.create(key, labels), ttfb: null, overhead: null, tokensIn: null, tokensOut: null };
      byEndpoint.set(slot, cells);
    }
    return cells;
  };
  return {
    registry,
    record(r) {
      const { provider, endpoint, status } = r;
      const cells = cellsOf(provider, endpoint, r.client);
      let count = cells.byStatus.get(status);
      if (count === undefined) {
        const label = String(status);
        count = requests.create(`${cells.key}\n${label}`, { ...cells.labels, status: label });
        cells.byStatus.set(status, count);
      }
      count.value += 1;
      duration.observe(cells.duration, r.seconds);
      // Series a pair never had (no first byte, no usage reported) are not shown as zeros.
      if (r.ttfbSeconds !== null) ttfb.observe((cells.ttfb ??= ttfb.create(cells.key, cells.labels)), r.ttfbSeconds);
      if (r.overheadSeconds != null) overhead.observe((cells.overhead ??= overhead.create(cells.key, cells.labels)), r.overheadSeconds);
      if (r.tokensIn !== null) (cells.tokensIn ??= tokens.create(`${cells.key}\nin`, { ...cells.labels, direction: 'in' })).value += r.tokensIn;
      if (r.tokensOut !== null) (cells.tokensOut ??= tokens.create(`${cells.key}\nout`, { ...cells.labels, direction: 'out' })).value += r.tokensOut;
      if (r.cut) (cuts.find(cells.key) ?? cuts.create(cells.key, cells.labels)).value += 1;
    },
    fellBack(provider, reason) {
      const key = `${provider}\n${reason}`;
      (fallbacks.find(key) ?? fallbacks.create(key, { provider, reason })).value += 1;
    },
  };
}

import type { MetricValue, MetricValueWithName, Registry } from 'prom-client';

/**
 * Counters and histograms kept as plain numbers per label set, which a prom-client
 * Registry renders like its own metrics (it asks any registered metric for `get()`).
 * Why not prom-client's own: its label children hash their label object on every
 * `inc`/`observe`, which cost more than the rest of a proxied request's bookkeeping.
 * Here a request finds its cell once (a Map lookup on a string key) and adds to it.
 */
export interface Cell<L extends string> {
  labels: Record<L, string>;
  value: number;
}

export interface HistogramCell<L extends string> {
  labels: Record<L, string>;
  /** Count per bucket, not cumulative (summed when rendered). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's Registry needs of a metric: a name, and its values on request. */
abstract class Series<L extends string> {
  readonly aggregator = 'sum' as const;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    registry: Registry,
  ) {
    // registerMetric is typed for prom-client's own classes; it reads only name and get().
    registry.registerMetric(this as never);
  }
  abstract values(): MetricValue<L>[] | MetricValueWithName<L>[];
  abstract reset(): void;
  /** The shape prom-client's own metrics answer with, which its Registry renders (and merges). */
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: MetricValue<L>[] | MetricValueWithName<L>[] }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() });
  }
}

/** A counter whose label sets are found by a key the caller builds. */
export class PlainCounter<L extends string> extends Series<L> {
  private readonly cells = new Map<string, Cell<L>>();
  constructor(name: string, help: string, registry: Registry) {
    super(name, help, 'counter', registry);
  }
  /** The cell of one label set (add to its `.value`), or undefined before `create`. */
  find(key: string): Cell<L> | undefined {
    return this.cells.get(key);
  }
  create(key: string, labels: Record<L, string>): Cell<L> {
    const c = { labels, value: 0 };
    this.cells.set(key, c);
    return c;
  }
  values(): MetricValue<L>[] {
    return [...this.cells.values()].map((c) => ({ labels: c.labels, value: c.value }));
  }
  reset(): void {
    this.cells.clear();
  }
}

/** A histogram with fixed upper bounds (seconds), observed by cell. */
export class PlainHistogram<L extends string> extends Series<L> {
  private readonly cells = new Map<string, HistogramCell<L>>();
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'histogram', registry);
  }
  find(key: string): HistogramCell<L> | undefined {
    return this.cells.get(key);
  }
  create(key: string, labels: Record<L, string>): HistogramCell<L> {
    const c = { labels, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.cells.set(key, c);
    return c;
  }
  observe(c: HistogramCell<L>, v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > (this.bounds[i] ?? Infinity)) i++;
    c.buckets[i] = (c.buckets[i] ?? 0) + 1;
    c.sum += v;
    c.count += 1;
  }
  values(): MetricValueWithName<L>[] {
    const out: MetricValueWithName<L>[] = [];
    for (const c of this.cells.values()) {
      let acc = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        acc += c.buckets[i] ?? 0;
        const le = this.bounds[i] ?? '+Inf';
        out.push({ metricName: `${this.name}_bucket`, labels: { le, ...c.labels } as never, value: acc });
      }
      out.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      out.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return out;
  }
  reset(): void {
    this.cells.clear();
  }
}

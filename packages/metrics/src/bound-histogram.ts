import type { Registry } from 'prom-client';

/** One label set's series: a bucket search and three additions an observation. */
export interface HistogramChild {
  observe(value: number): void;
}

/** One label set's counts; it is the child handed out for its labels. */
class Series implements HistogramChild {
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf only). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count += 1;
  }
}

/**
 * A Prometheus histogram whose label sets are looked up once and kept (`child`): an observation
 * on a kept child costs a bucket search and three additions, where prom-client's Histogram
 * validates, copies and hashes the label object on every call (about 0.5 µs alone and more in a
 * busy process: every HTTP answer is one). Its series are read by prom-client's Registry as
 * prom-client's own Histogram writes them (the same names, labels and cumulative buckets), so
 * the exposition and the dashboards do not change. Label sets must come from bounded lists
 * (route patterns, methods, status classes), as for every metric of the process.
 */
export class BoundHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series>();

  constructor(cfg: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[]; registers: Registry[] }) {
    this.name = cfg.name;
    this.help = cfg.help;
    this.labelNames = cfg.labelNames;
    this.bounds = [...cfg.buckets].sort((a, b) => a - b);
    for (const r of cfg.registers) r.registerMetric(this as never);
  }

  /** The series of these labels, to observe into as often as wanted. */
  child(labels: Readonly<Record<L, string>>): HistogramChild {
    const key = this.keyOf(labels);
    let s = this.series.get(key);
    if (!s) {
      const own: Record<string, string> = {};
      for (const n of this.labelNames) own[n] = labels[n];
      s = new Series(own, this.bounds);
      this.series.set(key, s);
    }
    return s;
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    this.child(labels).observe(value);
  }

  /**
   * What prom-client's Registry writes out: its Histogram's shape (per series the cumulative
   * buckets, +Inf, sum and count; the series' labels as shared labels after `le`), so the text
   * is the one prom-client's own Histogram gives.
   */
  async getForPromString() {
    const values: Array<{
      labels: Record<string, string | number>;
      sharedLabels: Record<string, string>;
      value: number;
      metricName: string;
      exemplar?: null;
    }> = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      for (const [i, le] of this.bounds.entries()) {
        acc += s.counts[i] as number;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same as prom-client's Histogram.get(): each value's labels with its series' labels merged in. */
  async get() {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...v.labels, ...sharedLabels } })) };
  }

  /** Every series back to zero (kept children keep recording into them). */
  reset(): void {
    for (const s of this.series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }

  private keyOf(labels: Readonly<Record<L, string>>): string {
    let key = '';
    for (const n of this.labelNames) {
      const v = labels[n];
      if (typeof v !== 'string') throw new TypeError(`${this.name}: label ${n} must be a string`);
      key += `${v}\u0000`;
    }
    return key;
  }
}

/**
 * A small Prometheus registry: counters, gauges and histograms with labels, written in the text
 * exposition format (version 0.0.4) that Prometheus and kube-apiserver's /metrics use. Web-standard only,
 * so the same code counts on Node and in a Workers isolate (prom-client needs Node's built-ins).
 * `snapshot()` gives the registry as data, for the Node deployment's sum over its worker processes
 * (./snapshot.ts merges and writes snapshots; `expose()` goes through the same writer).
 */
import {
  exposeSnapshot,
  type GaugeMerge,
  type HistogramSeries,
  type Labels,
  type MetricSnapshot,
  type RegistrySnapshot,
  type ValueSeries,
} from './snapshot.ts';

/**
 * Series one metric may hold. Label values come from requests (resource names in paths), so a caller
 * could otherwise grow the registry without bound; past the cap, new series fold into one `_other`.
 */
export const MAX_SERIES = 2000;

abstract class Metric {
  protected readonly series = new Map<string, ValueSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  /**
   * The series of `labels`, as a string: the values in label order, joined by NUL. A caller that touches
   * the same series more than once (a request's metrics) computes it once and uses the `…At` methods;
   * a metric with one more label at the end (`code`) has the key `${key}\u0000${value}`.
   */
  key(labels: Labels): string {
    // a loop rather than map/join: several series are touched per request
    let k = '';
    for (let i = 0; i < this.labelNames.length; i++)
      k += i ? `\u0000${labels[this.labelNames[i]!] ?? ''}` : (labels[this.labelNames[i]!] ?? '');
    return k;
  }
  protected entry(labels: Labels) {
    return this.entryAt(this.key(labels), labels);
  }
  /** the series of key `k` (its labels are read only when the series is new) */
  protected entryAt(k: string, labels: Labels | (() => Labels)) {
    let e = this.series.get(k);
    if (!e) labels = typeof labels === 'function' ? labels() : labels;
    if (!e && this.series.size >= MAX_SERIES) {
      labels = Object.fromEntries(this.labelNames.map((n) => [n, '_other']));
      k = this.key(labels);
      e = this.series.get(k);
    }
    if (!e) {
      const own: Labels = {};
      for (const n of this.labelNames) own[n] = (labels as Labels)[n] ?? '';
      e = { labels: own, value: 0 };
      this.series.set(k, e);
    }
    return e;
  }
  /** every series with its value */
  entries(): { labels: Labels; value: number }[] {
    return [...this.series.values()].map((e) => ({ labels: { ...e.labels }, value: e.value }));
  }
  /** the current value of one series (tests and the status page read it) */
  get(labels: Labels = {}): number {
    return this.series.get(this.key(labels))?.value ?? 0;
  }
  abstract snapshot(): MetricSnapshot;
  protected common() {
    return { name: this.name, help: this.help, labelNames: [...this.labelNames] };
  }
  protected copies(): ValueSeries[] {
    return [...this.series.values()].map((e) => ({ ...e, labels: { ...e.labels } }));
  }
}

export class Counter extends Metric {
  readonly type = 'counter';
  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels).value += by;
  }
  /** {@link inc} of the series whose {@link key} is `k` */
  incAt(k: string, labels: Labels | (() => Labels), by = 1): void {
    this.entryAt(k, labels).value += by;
  }
  snapshot(): MetricSnapshot {
    return { type: 'counter', ...this.common(), series: this.copies() };
  }
}

/** How a gauge combines over processes (see ./snapshot.ts), and the clock `last` gauges stamp with. */
export interface GaugeOptions {
  merge?: GaugeMerge;
  now?: () => number;
}

export class Gauge extends Metric {
  readonly type = 'gauge';
  readonly merge: GaugeMerge;
  private readonly now: () => number;
  constructor(name: string, help: string, labelNames: readonly string[], opts: GaugeOptions = {}) {
    super(name, help, labelNames);
    this.merge = opts.merge ?? 'sum';
    this.now = opts.now ?? Date.now;
  }
  set(labels: Labels, v: number): void {
    this.touch(labels).value = v;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.touch(labels).value += by;
  }
  dec(labels: Labels = {}, by = 1): void {
    this.touch(labels).value -= by;
  }
  /** {@link inc} of the series whose {@link key} is `k` */
  incAt(k: string, labels: Labels, by = 1): void {
    this.touch(labels, k).value += by;
  }
  private touch(labels: Labels, k = this.key(labels)): ValueSeries {
    const e = this.entryAt(k, labels);
    if (this.merge === 'last') e.at = this.now();
    return e;
  }
  snapshot(): MetricSnapshot {
    return { type: 'gauge', merge: this.merge, ...this.common(), series: this.copies() };
  }
}

export class Histogram extends Metric {
  readonly type = 'histogram';
  private readonly buckets = new Map<string, HistogramSeries>();
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  observe(labels: Labels, v: number): void {
    this.observeAt(this.key(labels), labels, v);
  }
  /** {@link observe} of the series whose {@link key} is `k` */
  observeAt(k: string, labels: Labels, v: number): void {
    let h = this.buckets.get(k);
    if (!h && this.buckets.size >= MAX_SERIES) {
      labels = Object.fromEntries(this.labelNames.map((n) => [n, '_other']));
      k = this.key(labels);
      h = this.buckets.get(k);
    }
    if (!h) {
      const own: Labels = {};
      for (const n of this.labelNames) own[n] = labels[n] ?? '';
      h = { labels: own, counts: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.buckets.set(k, h);
    }
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]!) h.counts[i]!++;
    h.sum += v;
    h.count++;
  }
  override get(labels: Labels = {}): number {
    return this.buckets.get(this.key(labels))?.count ?? 0;
  }
  snapshot(): MetricSnapshot {
    const series = [...this.buckets.values()].map((h) => ({
      labels: { ...h.labels },
      counts: [...h.counts],
      sum: h.sum,
      count: h.count,
    }));
    return { type: 'histogram', ...this.common(), bounds: [...this.bounds], series };
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  counter(name: string, help: string, labels: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labels));
  }
  gauge(name: string, help: string, labels: readonly string[] = [], opts?: GaugeOptions): Gauge {
    return this.add(new Gauge(name, help, labels, opts));
  }
  histogram(name: string, help: string, labels: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labels, bounds));
  }
  private add<M extends Metric>(m: M): M {
    if (this.metrics.some((x) => x.name === m.name)) throw new Error(`metric ${m.name} registered twice`);
    this.metrics.push(m);
    return m;
  }
  /** every metric as data (copies: the registry keeps counting while a snapshot travels) */
  snapshot(): RegistrySnapshot {
    return this.metrics.map((m) => m.snapshot());
  }
  /** the text exposition format, version 0.0.4 */
  expose(): string {
    return exposeSnapshot(this.snapshot());
  }
}

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

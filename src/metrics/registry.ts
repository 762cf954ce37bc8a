/**
 * A small Prometheus registry: counters, gauges and histograms with labels, written in the text
 * exposition format (version 0.0.4) that Prometheus and kube-apiserver's /metrics use. Web-standard only,
 * so the same code counts on Node and in a Workers isolate (prom-client needs Node's built-ins).
 * `snapshot()` gives the registry as data, for the Node deployment's sum over its worker processes
 * (./snapshot.ts merges and writes snapshots; `expose()` goes through the same writer).
 *
 * Counting is on the request path (every request, every upstream answer), so it builds nothing: a series
 * is found through one Map per label, keyed by the label's value as given (no joined key string), and a
 * caller that counts the same series again keeps its cell (`cell()`) and counts on it directly. A
 * histogram observation is a binary search of the bounds and three additions: a cell keeps a count per
 * bucket, and the cumulative counts (`le`) are summed when a snapshot is taken.
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

/** Map from one label's value to the next label's Map, the last label's to the series. */
type Level = Map<string, unknown>;

abstract class Metric<C extends { readonly labels: Labels }> {
  /** every series, in the order they were first counted (the exposition's order) */
  protected readonly cells: C[] = [];
  private readonly root: Level = new Map();
  private other: C | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected abstract make(labels: Labels): C;

  /**
   * The series of `labels` (made when new), to count on again without looking it up: a cell stays the
   * series of those labels for the registry's life. `last`, when given, is the value of the last label
   * (a request's `code` beside labels that have every other).
   */
  cell(labels: Labels, last?: string): C {
    return this.find(labels, last) ?? this.add(labels, last);
  }
  /** the series of `labels`, if it was ever counted (with `add`, `labels` are a new series' own: made) */
  protected find(labels: Labels, last?: string, add = false): C | undefined {
    const names = this.labelNames;
    let level = this.root;
    for (let i = 0; i < names.length - 1; i++) {
      const v = labels[names[i]!] ?? '';
      let next = level.get(v) as Level | undefined;
      if (!next) {
        if (!add) return undefined;
        next = new Map();
        level.set(v, next);
      }
      level = next;
    }
    const k = names.length ? (last ?? labels[names[names.length - 1]!] ?? '') : '';
    let c = level.get(k) as C | undefined;
    if (!c && add) {
      c = this.make(labels);
      level.set(k, c);
      this.cells.push(c);
    }
    return c;
  }
  private add(labels: Labels, last: string | undefined): C {
    const own: Labels = {};
    const names = this.labelNames;
    const full = this.cells.length >= MAX_SERIES;
    if (full && this.other) return this.other;
    for (let i = 0; i < names.length; i++)
      own[names[i]!] = full
        ? '_other'
        : ((i === names.length - 1 ? last : undefined) ?? labels[names[i]!] ?? '');
    const c = this.find(own, undefined, true)!;
    if (full) this.other = c;
    return c;
  }
  protected common() {
    return { name: this.name, help: this.help, labelNames: [...this.labelNames] };
  }
  abstract snapshot(): MetricSnapshot;
}

/** One series of a counter or a gauge. */
export class ValueCell {
  value = 0;
  /**
   * when it was last set (ms since the epoch), kept only by `last` gauges (a number from the start: a
   * field that is only ever a number is written in place, where one that was undefined boxes each write)
   */
  at = 0;
  constructor(readonly labels: Labels) {}
  /** as data (`at` only of the gauges that keep it) */
  copy(stamped: boolean): ValueSeries {
    const labels = { ...this.labels };
    return stamped ? { labels, value: this.value, at: this.at } : { labels, value: this.value };
  }
}

abstract class ValueMetric extends Metric<ValueCell> {
  protected make(labels: Labels): ValueCell {
    return new ValueCell(labels);
  }
  /** every series with its value */
  entries(): { labels: Labels; value: number }[] {
    return this.cells.map((e) => ({ labels: { ...e.labels }, value: e.value }));
  }
  /** the current value of one series (tests and the status page read it) */
  get(labels: Labels = {}): number {
    return this.find(labels)?.value ?? 0;
  }
  protected copies(stamped = false): ValueSeries[] {
    return this.cells.map((e) => e.copy(stamped));
  }
}

export class Counter extends ValueMetric {
  readonly type = 'counter';
  inc(labels: Labels = {}, by = 1): void {
    this.cell(labels).value += by;
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

export class Gauge extends ValueMetric {
  readonly type = 'gauge';
  readonly merge: GaugeMerge;
  private readonly now: () => number;
  constructor(name: string, help: string, labelNames: readonly string[], opts: GaugeOptions = {}) {
    super(name, help, labelNames);
    this.merge = opts.merge ?? 'sum';
    this.now = opts.now ?? Date.now;
  }
  set(labels: Labels, v: number): void {
    this.setCell(this.cell(labels), v);
  }
  inc(labels: Labels = {}, by = 1): void {
    this.addCell(this.cell(labels), by);
  }
  dec(labels: Labels = {}, by = 1): void {
    this.addCell(this.cell(labels), -by);
  }
  /** {@link set} of a series kept from {@link cell} */
  setCell(c: ValueCell, v: number): void {
    c.value = v;
    if (this.merge === 'last') c.at = this.now();
  }
  /** {@link inc} of a series kept from {@link cell} */
  addCell(c: ValueCell, by: number): void {
    this.setCell(c, c.value + by);
  }
  snapshot(): MetricSnapshot {
    return {
      type: 'gauge',
      merge: this.merge,
      ...this.common(),
      series: this.copies(this.merge === 'last'),
    };
  }
}

/** One series of a histogram. */
export class HistogramCell {
  /** observations per bucket, not cumulative: [i] those in (bounds[i-1], bounds[i]], the last the rest */
  readonly perBucket: number[] = [];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    for (let i = 0; i <= bounds.length; i++) this.perBucket.push(0);
  }
  observe(v: number): void {
    // the first bound v is at or under (NaN is under none: counted only in +Inf, the count, as before)
    const b = this.bounds;
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v <= b[mid]!) hi = mid;
      else lo = mid + 1;
    }
    this.perBucket[lo]!++;
    this.sum += v;
    this.count++;
  }
  /** as data: the cumulative count per bound, as exposed */
  copy(): HistogramSeries {
    const counts: number[] = [];
    let acc = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      acc += this.perBucket[i]!;
      counts.push(acc);
    }
    return { labels: { ...this.labels }, counts, sum: this.sum, count: this.count };
  }
}

export class Histogram extends Metric<HistogramCell> {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
    for (let i = 1; i < bounds.length; i++)
      if (!(bounds[i - 1]! < bounds[i]!)) throw new Error(`histogram ${name}: bounds must increase`);
  }
  protected make(labels: Labels): HistogramCell {
    return new HistogramCell(labels, this.bounds);
  }
  observe(labels: Labels, v: number): void {
    this.cell(labels).observe(v);
  }
  /** the number of observations of one series */
  get(labels: Labels = {}): number {
    return this.find(labels)?.count ?? 0;
  }
  snapshot(): MetricSnapshot {
    const series = this.cells.map((h) => h.copy());
    return { type: 'histogram', ...this.common(), bounds: [...this.bounds], series };
  }
}

export class Registry {
  private readonly metrics: Metric<{ readonly labels: Labels }>[] = [];
  counter(name: string, help: string, labels: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labels));
  }
  gauge(name: string, help: string, labels: readonly string[] = [], opts?: GaugeOptions): Gauge {
    return this.add(new Gauge(name, help, labels, opts));
  }
  histogram(name: string, help: string, labels: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labels, bounds));
  }
  private add<M extends Metric<{ readonly labels: Labels }>>(m: M): M {
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

/**
 * A small Prometheus registry: counters, gauges and histograms with labels, written in the text
 * exposition format (version 0.0.4) that Prometheus and kube-apiserver's /metrics use. Web-standard only,
 * so the same code counts on Node and in a Workers isolate (prom-client needs Node's built-ins).
 */

type Labels = Record<string, string>;

/**
 * Series one metric may hold. Label values come from requests (resource names in paths), so a caller
 * could otherwise grow the registry without bound; past the cap, new series fold into one `_other`.
 */
export const MAX_SERIES = 2000;

abstract class Metric {
  protected readonly series = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}
  abstract readonly type: 'counter' | 'gauge' | 'histogram';

  protected key(labels: Labels): string {
    return this.labelNames.map((n) => labels[n] ?? '').join('\u0000');
  }
  protected entry(labels: Labels) {
    let k = this.key(labels);
    let e = this.series.get(k);
    if (!e && this.series.size >= MAX_SERIES) {
      labels = Object.fromEntries(this.labelNames.map((n) => [n, '_other']));
      k = this.key(labels);
      e = this.series.get(k);
    }
    if (!e) {
      const own: Labels = {};
      for (const n of this.labelNames) own[n] = labels[n] ?? '';
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
  write(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    for (const { labels, value } of this.series.values())
      out.push(`${this.name}${fmtLabels(labels)} ${fmt(value)}`);
  }
}

export class Counter extends Metric {
  readonly type = 'counter';
  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels).value += by;
  }
}

export class Gauge extends Metric {
  readonly type = 'gauge';
  set(labels: Labels, v: number): void {
    this.entry(labels).value = v;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.entry(labels).value += by;
  }
  dec(labels: Labels = {}, by = 1): void {
    this.entry(labels).value -= by;
  }
}

export class Histogram extends Metric {
  readonly type = 'histogram';
  private readonly buckets = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  observe(labels: Labels, v: number): void {
    let k = this.key(labels);
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
  override write(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`);
    for (const { labels, counts, sum, count } of this.buckets.values()) {
      for (let i = 0; i < this.bounds.length; i++)
        out.push(`${this.name}_bucket${fmtLabels({ ...labels, le: fmt(this.bounds[i]!) })} ${counts[i]}`);
      out.push(`${this.name}_bucket${fmtLabels({ ...labels, le: '+Inf' })} ${count}`);
      out.push(
        `${this.name}_sum${fmtLabels(labels)} ${fmt(sum)}`,
        `${this.name}_count${fmtLabels(labels)} ${count}`,
      );
    }
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  counter(name: string, help: string, labels: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labels));
  }
  gauge(name: string, help: string, labels: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labels));
  }
  histogram(name: string, help: string, labels: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labels, bounds));
  }
  private add<M extends Metric>(m: M): M {
    if (this.metrics.some((x) => x.name === m.name)) throw new Error(`metric ${m.name} registered twice`);
    this.metrics.push(m);
    return m;
  }
  /** the text exposition format, version 0.0.4 */
  expose(): string {
    const out: string[] = [];
    for (const m of this.metrics) m.write(out);
    return `${out.join('\n')}\n`;
  }
}

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function fmt(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}
function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
function fmtLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return parts.length ? `{${parts.join(',')}}` : '';
}

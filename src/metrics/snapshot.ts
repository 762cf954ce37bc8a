/**
 * A registry as plain data (JSON over node:cluster IPC), the merge of several processes' snapshots into
 * the fleet's one answer, and the text exposition written from a snapshot (the registry writes its own
 * through here too, so a merged answer and a single process's are byte-for-byte the same format).
 *
 * How processes combine, per metric (`merge`):
 * - counters and histograms: summed, series by series (the fleet answered all of those requests);
 * - gauges that count something in flight (requests, watches): `sum`, the whole server's figure;
 * - gauges that state a per-process observation (whether the last call to a cluster reached it):
 *   `last`, the most recent observation of any process wins (a sum of 0/1 flags means nothing, and a
 *   max would hide a cluster that just went down behind a process that has not called it since).
 */

export type Labels = Record<string, string>;
export type GaugeMerge = 'sum' | 'max' | 'last';

export interface ValueSeries {
  labels: Labels;
  value: number;
  /** when it was last set (ms since the epoch), kept only for `last` gauges */
  at?: number;
}
export interface HistogramSeries {
  labels: Labels;
  /** cumulative count per bound (`le`), as exposed */
  counts: number[];
  sum: number;
  count: number;
}
interface Common {
  name: string;
  help: string;
  labelNames: string[];
}
export type MetricSnapshot =
  | (Common & { type: 'counter'; series: ValueSeries[] })
  | (Common & { type: 'gauge'; merge: GaugeMerge; series: ValueSeries[] })
  | (Common & { type: 'histogram'; bounds: number[]; series: HistogramSeries[] });
export type RegistrySnapshot = MetricSnapshot[];

function keyOf(labelNames: readonly string[], labels: Labels): string {
  return labelNames.map((n) => labels[n] ?? '').join('\u0000');
}

/**
 * The snapshots of several processes as one. Metrics appear in the order they first appear; a metric
 * whose shape differs between processes (another build during a rolling restart) keeps the first shape,
 * and the other's series are left out rather than mixed into wrong buckets.
 */
export function mergeSnapshots(snaps: readonly RegistrySnapshot[]): RegistrySnapshot {
  const byName = new Map<string, { m: MetricSnapshot; index: Map<string, number> }>();
  for (const snap of snaps)
    for (const m of snap) {
      let acc = byName.get(m.name);
      if (!acc) {
        acc = { m: { ...m, series: [] } as MetricSnapshot, index: new Map() };
        byName.set(m.name, acc);
      }
      if (!sameShape(acc.m, m)) continue;
      for (const s of m.series) mergeSeries(acc.m, acc.index, s);
    }
  return [...byName.values()].map((a) => a.m);
}

function sameShape(a: MetricSnapshot, b: MetricSnapshot): boolean {
  if (a.type !== b.type || a.labelNames.join(',') !== b.labelNames.join(',')) return false;
  if (a.type === 'histogram' && b.type === 'histogram') return a.bounds.join(',') === b.bounds.join(',');
  return true;
}

function mergeSeries(m: MetricSnapshot, index: Map<string, number>, s: ValueSeries | HistogramSeries) {
  const k = keyOf(m.labelNames, s.labels);
  const i = index.get(k);
  if (m.type === 'histogram') {
    const h = s as HistogramSeries;
    if (i === undefined) {
      index.set(k, m.series.length);
      m.series.push({ labels: { ...h.labels }, counts: [...h.counts], sum: h.sum, count: h.count });
      return;
    }
    const t = m.series[i]!;
    for (let b = 0; b < t.counts.length; b++) t.counts[b]! += h.counts[b] ?? 0;
    t.sum += h.sum;
    t.count += h.count;
    return;
  }
  const v = s as ValueSeries;
  if (i === undefined) {
    index.set(k, m.series.length);
    (m.series as ValueSeries[]).push({ ...v, labels: { ...v.labels } });
    return;
  }
  const t = (m.series as ValueSeries[])[i]!;
  const how = m.type === 'gauge' ? m.merge : 'sum';
  if (how === 'sum') t.value += v.value;
  else if (how === 'max') t.value = Math.max(t.value, v.value);
  else if ((v.at ?? 0) >= (t.at ?? 0)) {
    t.value = v.value;
    t.at = v.at;
  }
}

/**
 * What a process that is gone leaves behind: its counters and histograms (what it counted happened;
 * adding it in keeps the fleet's sums from going backwards when the process is replaced by one that
 * starts from zero). Its gauges are dropped: what it had in flight ended with it.
 */
export function cumulativeOnly(snap: RegistrySnapshot): RegistrySnapshot {
  return snap.filter((m) => m.type !== 'gauge');
}

/** The text exposition format, version 0.0.4. */
export function exposeSnapshot(snap: RegistrySnapshot): string {
  const out: string[] = [];
  for (const m of snap) {
    out.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`);
    if (m.type !== 'histogram') {
      for (const { labels, value } of m.series) out.push(`${m.name}${fmtLabels(labels)} ${fmt(value)}`);
      continue;
    }
    for (const { labels, counts, sum, count } of m.series) {
      for (let i = 0; i < m.bounds.length; i++)
        out.push(`${m.name}_bucket${fmtLabels({ ...labels, le: fmt(m.bounds[i]!) })} ${counts[i]}`);
      out.push(`${m.name}_bucket${fmtLabels({ ...labels, le: '+Inf' })} ${count}`);
      out.push(
        `${m.name}_sum${fmtLabels(labels)} ${fmt(sum)}`,
        `${m.name}_count${fmtLabels(labels)} ${count}`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}

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

/** A snapshot as read from another process: the shape checked, since a bad one must not break a scrape. */
export function isRegistrySnapshot(v: unknown): v is RegistrySnapshot {
  return (
    Array.isArray(v) &&
    v.every(
      (m) =>
        m &&
        typeof m.name === 'string' &&
        typeof m.help === 'string' &&
        Array.isArray(m.labelNames) &&
        Array.isArray(m.series) &&
        (m.type === 'counter' ||
          (m.type === 'gauge' && ['sum', 'max', 'last'].includes(m.merge)) ||
          (m.type === 'histogram' && Array.isArray(m.bounds))),
    )
  );
}

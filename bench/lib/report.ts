/**
 * Figures and their presentation, shared by every case: per-target medians over rounds, paired
 * comparisons against the baselines (`go`, `direct`), a readable table, and one JSON line.
 *
 * Comparisons are paired by round (target and baseline measured seconds apart in the same round) and the
 * median of the per-round ratios/differences is reported: on a noisy machine that is steadier than the
 * ratio of two medians.
 */
import type { CustomResult } from '../cases/types.ts';
import type { LoadResult } from './load.ts';
import type { ProfileSummary } from './profile.ts';
import { median, ratio } from './stats.ts';
import { formatSteps, type StepTime } from './steps.ts';

export const BASELINES = ['go', 'direct'] as const;
/**
 * Issue 16, goal 4 (passthrough): throughput ≥ 1.0× the Go proxy's, proxy CPU per request ≤ 1.3× Go's, added
 * p99 on one connection ≤ 1 ms (under load the added p99 is reported, not judged: it is queueing).
 */
export const GOAL = { throughputVsGo: 1.0, cpuVsGo: 1.3, addedSingleP99Ms: 1 };

export interface RoundFigures {
  /** under load (N connections) */
  load: LoadResult;
  /** single connection, no queueing; absent when the latency run is off */
  single?: LoadResult;
  /** CPU time of the proxying process per 2xx response under load, µs (absent for direct) */
  proxyCpuUs?: number;
  /** CPU time of the upstream (simulated member) process per 2xx response under load, µs */
  upstreamCpuUs?: number;
}

export interface TargetResult {
  name: string;
  url: string;
  note?: string;
  /** body size of one response (pre-flight request) */
  bytes: number;
  rounds: RoundFigures[];
  median: {
    rps: number;
    p50: number;
    p99: number;
    singleP50: number;
    singleP99: number;
    proxyCpuUs: number;
    upstreamCpuUs: number;
  };
  rpsMin: number;
  rpsMax: number;
  /** non-2xx, errors and timeouts over every measured run */
  failures: number;
}

export interface Comparison {
  target: string;
  baseline: string;
  /** target req/s ÷ baseline req/s */
  throughput: number;
  /** target p99 − baseline p99 under load, ms */
  addedP99Ms: number;
  /** the same on a single connection */
  addedSingleP99Ms: number;
  addedSingleP50Ms: number;
  /** target proxy CPU per request ÷ baseline's (only when both proxy) */
  cpuRatio: number;
}

export interface CaseResult {
  name: string;
  title: string;
  targets: TargetResult[];
  comparisons: Comparison[];
  error?: string;
  /** the fleet process's CPU profile over the case (--profile); `shared` when other roles ran in it too */
  profile?: ProfileSummary & { path: string; shared: boolean };
  /** what a self-driven case (BenchCase.run) reported */
  custom?: CustomResult;
  /** how long the case took, wall clock (set by the harness) */
  wallS?: number;
  /** CPU the case cost, every process of the run together (set by the harness; Linux) */
  cpuS?: number;
  /** where its wall time went (set by the harness: its actions, and the steps the case named) */
  steps?: StepTime[];
}

export function summarizeTarget(
  name: string,
  url: string,
  note: string | undefined,
  bytes: number,
  rounds: RoundFigures[],
): TargetResult {
  const rps = rounds.map((r) => r.load.rps);
  return {
    name,
    url,
    note,
    bytes,
    rounds,
    median: {
      rps: median(rps),
      p50: median(rounds.map((r) => r.load.latency.p50)),
      p99: median(rounds.map((r) => r.load.latency.p99)),
      singleP50: median(rounds.map((r) => r.single?.latency.p50)),
      singleP99: median(rounds.map((r) => r.single?.latency.p99)),
      proxyCpuUs: median(rounds.map((r) => r.proxyCpuUs)),
      upstreamCpuUs: median(rounds.map((r) => r.upstreamCpuUs)),
    },
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    failures: rounds.reduce(
      (n, r) =>
        n +
        r.load.non2xx +
        r.load.errors +
        r.load.timeouts +
        (r.single ? r.single.non2xx + r.single.errors + r.single.timeouts : 0),
      0,
    ),
  };
}

/** a figure that crossed IPC: JSON turned NaN (a run without responses) into null */
const num = (x: number | null | undefined): number => (typeof x === 'number' ? x : Number.NaN);

export function compare(targets: TargetResult[]): Comparison[] {
  const out: Comparison[] = [];
  for (const t of targets) {
    if ((BASELINES as readonly string[]).includes(t.name)) continue;
    for (const bName of BASELINES) {
      const b = targets.find((x) => x.name === bName);
      if (!b) continue;
      const paired = <T>(f: (tr: RoundFigures, br: RoundFigures) => T) =>
        t.rounds.map((tr, i) => (b.rounds[i] ? f(tr, b.rounds[i]!) : undefined));
      out.push({
        target: t.name,
        baseline: b.name,
        throughput: median(paired((tr, br) => ratio(num(tr.load.rps), num(br.load.rps))) as number[]),
        addedP99Ms: median(
          paired((tr, br) => num(tr.load.latency.p99) - num(br.load.latency.p99)) as number[],
        ),
        addedSingleP99Ms: median(
          paired((tr, br) =>
            tr.single && br.single ? num(tr.single.latency.p99) - num(br.single.latency.p99) : undefined,
          ) as number[],
        ),
        addedSingleP50Ms: median(
          paired((tr, br) =>
            tr.single && br.single ? num(tr.single.latency.p50) - num(br.single.latency.p50) : undefined,
          ) as number[],
        ),
        cpuRatio: median(
          paired((tr, br) =>
            tr.proxyCpuUs !== undefined && br.proxyCpuUs !== undefined
              ? ratio(tr.proxyCpuUs, br.proxyCpuUs)
              : undefined,
          ) as number[],
        ),
      });
    }
  }
  return out;
}

// ---- presentation ----

export const fmt = {
  rps: (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : '-'),
  ms: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-'),
  signedMs: (n: number) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(2)} ms` : '-'),
  x: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '-'),
  us: (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-'),
  bytes: (n: number): string =>
    !Number.isFinite(n)
      ? '-'
      : n < 0
        ? `-${fmt.bytes(-n)}`
        : n >= 1 << 20
          ? `${(n / (1 << 20)).toFixed(2)} MiB`
          : n >= 1024
            ? `${(n / 1024).toFixed(1)} KiB`
            : `${Math.round(n)} B`,
};

export function table(header: string[], rows: string[][], leftCols = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftCols ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function formatCase(c: CaseResult, connections: number): string {
  const out: string[] = [`\n## ${c.name}: ${c.title}`];
  if (c.custom) {
    out.push(c.custom.text);
    if (c.error) out.push(`   FAILED: ${c.error}`);
    return out.join('\n');
  }
  if (c.error) {
    out.push(`   FAILED: ${c.error}`);
    return out.join('\n');
  }
  for (const t of c.targets) out.push(`   ${t.name.padEnd(14)} ${t.note ?? ''}  (${t.url})`);
  const anySingle = c.targets.some((t) => Number.isFinite(t.median.singleP99));
  out.push(
    '',
    table(
      [
        'target',
        'req/s',
        `p50 ms`,
        `p99 ms`,
        'req/s min–max',
        ...(anySingle ? ['1-conn p50', '1-conn p99'] : []),
        'proxy CPU µs/req',
        'upstream CPU µs/req',
        'body',
        'failed',
      ],
      c.targets.map((t) => [
        t.name,
        fmt.rps(t.median.rps),
        fmt.ms(t.median.p50),
        fmt.ms(t.median.p99),
        `${fmt.rps(t.rpsMin)}–${fmt.rps(t.rpsMax)}`,
        ...(anySingle ? [fmt.ms(t.median.singleP50), fmt.ms(t.median.singleP99)] : []),
        fmt.us(t.median.proxyCpuUs),
        fmt.us(t.median.upstreamCpuUs),
        fmt.bytes(t.bytes),
        String(t.failures),
      ]),
    ),
  );
  out.push(
    `   (medians of ${c.targets[0]?.rounds.length ?? 0} rounds; ${connections} connections unless "1-conn")`,
  );
  if (c.comparisons.length) {
    out.push(
      '',
      table(
        [
          'comparison',
          'throughput',
          `added p99 (${connections} conns)`,
          'added p50 (1 conn)',
          'added p99 (1 conn)',
          'proxy CPU ratio',
        ],
        c.comparisons.map((k) => [
          `${k.target} vs ${k.baseline}`,
          fmt.x(k.throughput),
          fmt.signedMs(k.addedP99Ms),
          fmt.signedMs(k.addedSingleP50Ms),
          fmt.signedMs(k.addedSingleP99Ms),
          k.baseline === 'direct' ? '' : fmt.x(k.cpuRatio),
        ]),
      ),
    );
  }
  return out.join('\n');
}

/** One line per case: the goal for the fleet, met or not. */
export function formatGoals(cases: CaseResult[]): string {
  const lines: string[] = [
    `\n## goals (issue 16; each a ratio against a baseline of the same run; passthrough, goal 4: throughput ≥ ${GOAL.throughputVsGo}× the Go proxy's, proxy CPU ≤ ${GOAL.cpuVsGo}× Go's, added p99 on 1 connection ≤ ${GOAL.addedSingleP99Ms} ms; others as stated)`,
  ];
  for (const c of cases) {
    if (c.custom) {
      if (!c.custom.goals.length) lines.push(`   ${c.name}: no goal${c.error ? ' (case failed)' : ''}`);
      for (const g of c.custom.goals)
        lines.push(
          `   ${c.name}: ${g.goal}: ${g.detail} [${g.info ? 'info' : g.ok === undefined ? 'not measured' : g.ok ? 'OK' : 'MISSED'}]`,
        );
      continue;
    }
    const vsGo = c.comparisons.find((k) => k.target === 'fleet' && k.baseline === 'go');
    const vsDirect = c.comparisons.find((k) => k.target === 'fleet' && k.baseline === 'direct');
    if (!vsGo && !vsDirect) {
      lines.push(`   ${c.name}: no fleet comparison${c.error ? ' (case failed)' : ''}`);
      continue;
    }
    // NaN: no response in a run, so nothing to judge
    const mark = (ok: boolean, v: number) => (!Number.isFinite(v) ? 'not measured' : ok ? 'OK' : 'MISSED');
    const parts: string[] = [];
    if (vsGo) {
      parts.push(
        `throughput ${fmt.x(vsGo.throughput)} of go [${mark(vsGo.throughput >= GOAL.throughputVsGo, vsGo.throughput)}]`,
        `proxy CPU per request ${fmt.x(vsGo.cpuRatio)} of go's [${mark(vsGo.cpuRatio <= GOAL.cpuVsGo, vsGo.cpuRatio)}]`,
      );
    } else parts.push('throughput vs go: no Go baseline [not measured]');
    if (vsDirect) {
      if (Number.isFinite(vsDirect.addedSingleP99Ms))
        parts.push(
          `added p99 on 1 connection ${fmt.signedMs(vsDirect.addedSingleP99Ms)} [${mark(vsDirect.addedSingleP99Ms <= GOAL.addedSingleP99Ms, vsDirect.addedSingleP99Ms)}]`,
        );
      parts.push(`under load ${fmt.signedMs(vsDirect.addedP99Ms)}`);
    }
    if (vsGo && Number.isFinite(vsGo.addedSingleP99Ms))
      parts.push(`vs go on 1 connection ${fmt.signedMs(vsGo.addedSingleP99Ms)}`);
    lines.push(`   ${c.name}: goal 4: ${parts.join('; ')}`);
  }
  return lines.join('\n');
}

/**
 * Where the run's time went: each case's wall time and the CPU it cost (every process of the run
 * together); and the whole run's. The CPU figures hardly change with the machine's load: with 2 cores, a
 * run cannot take less wall time than about half its CPU time.
 */
export function formatWallTimes(
  cases: CaseResult[],
  totalS: number,
  totalCpuS = Number.NaN,
  budgetS?: number,
  /** the harness's own start and stop (bench/lib/steps.ts) */
  harness: StepTime[] = [],
): string {
  const s = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(1));
  const inCases = cases.reduce((n, c) => n + (c.wallS ?? 0), 0);
  const budget =
    budgetS === undefined
      ? ''
      : `; a whole --quick run within ${budgetS} s [${totalS <= budgetS ? 'OK' : 'MISSED'}]`;
  return [
    '',
    `   time: ${totalS.toFixed(0)} s wall in all, ${inCases.toFixed(0)} s in cases; CPU ${s(totalCpuS)} s (the harness and every process it started)${budget}`,
    ...table(
      ['case', 'wall s', 'CPU s'],
      cases.map((c) => [c.name, s(c.wallS), s(c.cpuS)]),
    )
      .split('\n')
      .map((l) => `   ${l}`),
    '   where the wall time went (steps ≥ 0.1 s, longest first, CPU of every process meanwhile; nested steps overlap):',
    ...(harness.length ? [`   harness: ${formatSteps(harness)}`] : []),
    ...cases.map((c) => `   ${c.name}: ${formatSteps(c.steps ?? []) || '-'}`),
  ].join('\n');
}

/** JSON-friendly copy: NaN becomes null. */
export function jsonLine(payload: unknown): string {
  return `BENCH_JSON ${JSON.stringify(payload, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v))}`;
}

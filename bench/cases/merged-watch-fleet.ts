/**
 * The fleet the merged-watch case measures, and its memory per idle merged watch.
 *
 * The fleet runs in a process of its own (the production bundle, or BENCH_FLEET_BUNDLE's build) whose
 * members are exactly the case's 3 simulated clusters. It used to be the harness's shared `merged` fleet,
 * whose members are every simulated cluster of the run: 3 when the case ran alone, 10 in a full run
 * (merged-list and informer-start ask for 10), so a full run's "merged watch over 3 clusters" held 10
 * upstream watches and reported twice the memory per watch (86.9 KiB heap vs 41.5 alone). A process of
 * its own also owes nothing to what earlier cases did in the shared one.
 *
 * BENCH_BASELINE_BUNDLE=<file> (another build of deploy/node/main.ts, say the session's start commit):
 * the idle memory is also measured A/B, one fresh process per build and round, the order alternating.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FleetProcess, startFleetProcess } from '../lib/fleetproc.ts';
import { censusDelta, heapCensus, heapOwners } from '../lib/heapsnap.ts';
import { procMemory } from '../lib/proc.ts';
import { fmt, table } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import type { OpenResult } from '../lib/watchers.ts';
import type { CaseContext } from './types.ts';

/** the bundle of the measured fleet (this tree's when unset) and of the A/B's other side */
export const FLEET_BUNDLE = process.env.BENCH_FLEET_BUNDLE || undefined;
export const BASE_BUNDLE = process.env.BENCH_BASELINE_BUNDLE || undefined;
/**
 * BENCH_BASELINE_ENV="K=V K2=V2": the A/B's other side is this build (or BENCH_BASELINE_BUNDLE's) with that
 * environment, e.g. FLEET_MEMORY_TUNING=off for the memory settings' share (deploy/node/memory.ts).
 */
export const BASE_ENV: Record<string, string> | undefined = process.env.BENCH_BASELINE_ENV
  ? Object.fromEntries(
      process.env.BENCH_BASELINE_ENV.split(/\s+/)
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    )
  : undefined;
/** a memory A/B is asked for (another build, another environment, or both) */
export const MEMORY_AB = !!(BASE_BUNDLE || BASE_ENV);

/** How the fleet reaches its members, when not as the run serves them: other URLs (h2c), environment. */
export interface FleetReach {
  servers?: Record<string, string>;
  env?: Record<string, string>;
}

/**
 * A fleet process over exactly `members` (static, federation off), inspector on (memory, profiles), with
 * the run's --fleet-node-args; given any, its output (say --trace-gc's lines) goes to the harness's stderr.
 */
export function startWatchFleet(
  ctx: CaseContext,
  members: string[],
  bundle?: string,
  reach: FleetReach = {},
): Promise<FleetProcess> {
  const nodeArgs = ctx.opts.fleetNodeArgs;
  const config = structuredClone(ctx.env.fleetConfigs.merged) as unknown as {
    members: { clusters: Array<{ name: string; server: string }> };
  };
  config.members.clusters = config.members.clusters
    .filter((c) => members.includes(c.name))
    .map((c) => ({ ...c, server: reach.servers?.[c.name] ?? c.server }));
  if (config.members.clusters.length !== members.length)
    throw new Error(`bench: the run's simulated clusters lack some of ${members.join(', ')}`);
  return startFleetProcess(config, {
    inspect: true,
    ...(nodeArgs.length
      ? {
          nodeArgs,
          onOutput: (t: string) => {
            for (const l of t.split('\n')) if (l) process.stderr.write(`   [watch fleet] ${l}\n`);
          },
        }
      : {}),
    ...(bundle ? { bundle } : {}),
    ...(reach.env ? { env: reach.env } : {}),
  });
}

/** The fleet's GC pauses over a span (gcPauses): how many, their sum and the longest, in ms. */
export interface GcPauses {
  n: number;
  totalMs: number;
  maxMs: number;
  /** the pauses of the minor collector (scavenges) among them */
  minor: number;
  /**
   * the longest the fleet's event loop was late (perf_hooks.monitorEventLoopDelay, 1 ms resolution): a
   * GC pause or a long task; an event that arrives then waits this long at most
   */
  loopMaxMs?: number;
  /**
   * the fleet's main thread over the span (/proc/<pid>/task/<pid>/schedstat, read from outside): ms on a
   * CPU, and ms it was ready to run but waited for one (the machine's other processes, not the fleet)
   */
  mainCpuMs?: number;
  mainWaitMs?: number;
}

/** the main thread's time on a CPU and waiting for one so far, in ms (undefined where /proc has none) */
function schedstat(pid: number): [number, number] | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return [run! / 1e6, wait! / 1e6];
  } catch {
    return undefined;
  }
}

/**
 * Counts the fleet process's GC pauses from now on (a PerformanceObserver of its own, through the
 * inspector); the function returned stops and reads them. An event that arrives during a pause waits for
 * its end: at a fixed rate, a span's pauses hold back about `totalMs` × rate events, which is what sets a
 * p99 once they pass 1% of the span. Undefined where the fleet's Node has no process.getBuiltinModule.
 */
export async function gcPauses(fleet: FleetProcess): Promise<() => Promise<GcPauses | undefined>> {
  const started = await fleet.evaluate<boolean>(`(() => {
    const ph = process.getBuiltinModule?.('perf_hooks');
    if (!ph) return false;
    const g = { n: 0, totalMs: 0, maxMs: 0, minor: 0 };
    const ob = new ph.PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        g.n++;
        g.totalMs += e.duration;
        g.maxMs = Math.max(g.maxMs, e.duration);
        if (e.detail?.kind === ph.constants.NODE_PERFORMANCE_GC_MINOR) g.minor++;
      }
    });
    ob.observe({ entryTypes: ['gc'] });
    const h = ph.monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    globalThis.__benchGc = { g, ob, h };
    return true;
  })()`);
  const s0 = schedstat(fleet.pid);
  return async () => {
    if (!started) return undefined;
    const s1 = schedstat(fleet.pid);
    // the observer hears of a pause a moment after it: let the last ones in
    await new Promise((r) => setTimeout(r, 50));
    const g = await fleet.evaluate<GcPauses>(
      '(() => { const x = globalThis.__benchGc; delete globalThis.__benchGc; x.ob.disconnect(); x.h.disable(); return { ...x.g, loopMaxMs: x.h.max / 1e6 }; })()',
    );
    return s0 && s1 ? { ...g, mainCpuMs: s1[0] - s0[0], mainWaitMs: s1[1] - s0[1] } : g;
  };
}

export async function listRv(url: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/configmaps?limit=1`, { headers: { Accept: 'application/json' } });
  const body = (await res.json()) as { metadata?: { resourceVersion?: string } };
  const rv = body.metadata?.resourceVersion;
  if (!res.ok || !rv) throw new Error(`list ${url}: HTTP ${res.status}, no resourceVersion`);
  return rv;
}

export interface IdleMemory {
  open: OpenResult;
  rss0: number;
  rss1: number;
  heap0: NodeJS.MemoryUsage;
  heap1: NodeJS.MemoryUsage;
  perWatchRss: number;
  perWatchHeap: number;
  perWatchExternal: number;
  /** the larger of RSS and heap + external per watch (RSS moves in pages; heap misses native memory) */
  perWatch: number;
  /** heap snapshots before and after (asked for); their native memory stays in the RSS: `rssValid` false */
  snaps?: [string, string];
  rssValid: boolean;
}

/** after full GCs and a pause */
async function settled(fleet: FleetProcess) {
  await fleet.memory(true);
  await new Promise((r) => setTimeout(r, 500));
  await fleet.memory(true);
  const heap = await fleet.memory(true);
  return { heap, rss: procMemory(fleet.pid)?.rss ?? Number.NaN };
}

/**
 * Opens `urls` as watches of the load set `key` and measures the fleet before and after (idle, after GC).
 * The watches stay open (the caller closes `key`).
 */
export async function idleWatchMemory(
  ctx: CaseContext,
  fleet: FleetProcess,
  o: {
    key: string;
    urls: string[];
    label: string;
    timeoutMs: number;
    concurrency: number;
    /** heap snapshots before and after (in ctx.profileDir): the RSS figures are then not comparable */
    snapshots: boolean;
  },
): Promise<IdleMemory> {
  const dir = o.snapshots ? ctx.profileDir : undefined;
  const snap = (label: string) =>
    dir ? fleet.heapSnapshot(join(dir, `merged-watch-${o.label}-${label}.heapsnapshot`)) : undefined;
  // before the first figures, so its garbage is collected by then (a snapshot's native memory, malloc's,
  // stays in the RSS anyway: 70-80 KiB "per watch" of 1,000 measured with one)
  const snap0 = await snap('before-watches');
  const m0 = await settled(fleet);
  const open = await ctx.load<OpenResult>('open', {
    key: o.key,
    urls: o.urls,
    timeoutMs: o.timeoutMs,
    concurrency: o.concurrency,
  });
  await new Promise((r) => setTimeout(r, ctx.opts.quick ? 500 : 3000));
  const m1 = await settled(fleet);
  const snap1 = await snap('with-watches');
  // per merged watch that opened (any that did not are still pending in the fleet, and counted in)
  const n = Math.max(1, open.opened);
  const perWatchRss = (m1.rss - m0.rss) / n;
  const perWatchHeap = (m1.heap.heapUsed - m0.heap.heapUsed) / n;
  const perWatchExternal = (m1.heap.external - m0.heap.external) / n;
  return {
    open,
    rss0: m0.rss,
    rss1: m1.rss,
    heap0: m0.heap,
    heap1: m1.heap,
    perWatchRss,
    perWatchHeap,
    perWatchExternal,
    perWatch: dir ? perWatchHeap + perWatchExternal : Math.max(perWatchRss, perWatchHeap + perWatchExternal),
    rssValid: !dir,
    ...(snap0 && snap1 ? { snaps: [snap0, snap1] as [string, string] } : {}),
  };
}

/** Heap growth per watch, by constructor (self sizes) and by holder (bench/lib/heapsnap.ts). */
export function censusLines(m: IdleMemory, title: string): string[] {
  if (!m.snaps) return [];
  const n = Math.max(1, m.open.opened);
  const [a, b] = m.snaps;
  return [
    '',
    `   ${title}: fleet heap growth with ${m.open.opened} idle merged watches open, by constructor (${a} → ${b}):`,
    table(
      ['constructor / kind', 'count per watch', 'bytes per watch'],
      censusDelta(heapCensus(a), heapCensus(b), 20).map((e) => [
        e.name,
        (e.count / n).toFixed(1),
        fmt.bytes(e.size / n),
      ]),
    ),
    `   ${title}: the same growth by holder (nearest named retainer):`,
    table(
      ['holder', 'objects per watch', 'bytes per watch'],
      heapOwners(a, b, 25).map((e) => [e.name, (e.count / n).toFixed(1), fmt.bytes(e.size / n)]),
    ),
  ];
}

/**
 * Idle memory per merged watch, this build against BENCH_BASELINE_BUNDLE's: `rounds` rounds, each build
 * in a fresh process per round, the order alternating. `urls(fleetUrl, rv)` are the watches to open.
 */
export async function memoryAB(
  ctx: CaseContext,
  members: string[],
  urls: (fleet: string, rv: string) => string[],
  o: { timeoutMs: number; concurrency: number; rounds: number; reach?: FleetReach; label?: string },
): Promise<{ lines: string[]; figures: unknown; ratio: number }> {
  const builds = [
    {
      name: 'this build',
      bundle: FLEET_BUNDLE,
      env: undefined as Record<string, string> | undefined,
      runs: [] as IdleMemory[],
      census: undefined as IdleMemory | undefined,
    },
    {
      name: `baseline (${[BASE_BUNDLE ?? 'this build', process.env.BENCH_BASELINE_ENV].filter(Boolean).join(', ')})`,
      bundle: BASE_BUNDLE ?? FLEET_BUNDLE,
      env: BASE_ENV,
      runs: [] as IdleMemory[],
      census: undefined as IdleMemory | undefined,
    },
  ];
  // with --profile, a round of heap snapshots first (its figures are not counted: see idleWatchMemory)
  const first = ctx.profileDir ? -1 : 0;
  for (let r = first; r < o.rounds; r++)
    for (const b of r % 2 ? [builds[1]!, builds[0]!] : builds) {
      const reach = b.env ? { ...o.reach, env: { ...o.reach?.env, ...b.env } } : o.reach;
      const fleet = await startWatchFleet(ctx, members, b.bundle, reach);
      try {
        const rv = await listRv(fleet.url);
        const m = await idleWatchMemory(ctx, fleet, {
          key: 'ab',
          urls: urls(fleet.url, rv),
          label: `${o.label ?? 'ab'}-${b === builds[0] ? 'this' : 'base'}`,
          timeoutMs: o.timeoutMs,
          concurrency: o.concurrency,
          snapshots: r < 0,
        });
        if (r < 0) b.census = m;
        else b.runs.push(m);
        ctx.log(
          `   memory A/B ${r < 0 ? 'heap snapshots' : `round ${r + 1}/${o.rounds}`} ${b.name}: ${m.open.opened} open, RSS ${fmt.bytes(m.perWatchRss)}${m.rssValid ? '' : ' (not comparable)'}, heap ${fmt.bytes(m.perWatchHeap)} + external ${fmt.bytes(m.perWatchExternal)} per watch`,
        );
      } finally {
        await ctx.load('close', { key: 'ab' });
        fleet.stop();
      }
    }
  const med = (b: (typeof builds)[number], f: (m: IdleMemory) => number) => median(b.runs.map(f));
  const rows = builds.map((b) => [
    b.name,
    fmt.bytes(med(b, (m) => m.perWatchRss)),
    fmt.bytes(med(b, (m) => m.perWatchHeap + m.perWatchExternal)),
    fmt.bytes(med(b, (m) => m.perWatch)),
    b.runs.map((m) => fmt.bytes(m.perWatch)).join(' / '),
  ]);
  const ratio = med(builds[0]!, (m) => m.perWatch) / med(builds[1]!, (m) => m.perWatch);
  const lines = [
    '',
    `   idle memory per merged watch, same run, this build vs BENCH_BASELINE_BUNDLE (${o.rounds} rounds, fresh process each, medians):`,
    table(['build', 'RSS per watch', 'heap + external', 'max of both', 'per round'], rows),
    `   this build ÷ baseline: ${fmt.x(ratio)}`,
    ...builds.flatMap((b) => (b.census ? censusLines(b.census, b.name) : [])),
  ];
  const figures = builds.map((b) => ({
    name: b.name,
    runs: b.runs.map((m) => ({ ...m, open: { ...m.open, openedIdx: undefined } })),
  }));
  return { lines, figures, ratio };
}

/**
 * Merged watch (issue 5): 1,000 concurrent merged watches over 3 simulated clusters through the fleet's root
 * URL (`…/configmaps?watch=true&resourceVersion=<the list's composite RV>`, static members, federation off),
 * against 1,000 direct watches on one cluster, open at the same time. The fleet is a process of its own
 * whose members are those 3 clusters only, whatever else the run simulates (./merged-watch-fleet.ts).
 *
 * Every watch has a namespace of its own (`bf-<i>` through the fleet, `bd-<i>` direct), so an event reaches
 * exactly one watcher: 1,000 events/s in total is one event per second per watch, the load of 1,000 idle-ish
 * informers rather than 1,000 copies of one stream (that would be a million deliveries per second, which
 * neither the simulated clusters nor the fleet can do on two cores). Events are ConfigMap updates written
 * by a driver inside the simulated clusters' process (an upstream action of this case, over the harness's
 * IPC channel) at a fixed rate; each carries its write time (`data.t`, CLOCK_MONOTONIC in ms, the same clock
 * in every process) and the watcher computes the delay when the line arrives.
 *
 * Figures: added delivery delay p50/p99 (fleet − direct, same rate, alternating phases), memory per idle
 * merged watch (fleet RSS and heap after GC, before and after opening them, ÷ 1,000), and the rate the fleet
 * relays at saturation (bursts written as fast as the simulated clusters can, delivered rate at the
 * watchers). Targets (issue 16, goal 5): no event missing, added p99 ≤ 2 ms at 1,000 events/s, bursts delivered
 * at ≥ 0.9× the direct rate, ≤ 32 KiB per idle merged watch.
 *
 * The floor (issue 33): a third set of watches (`bl-<i>`, on all 3 clusters) through the copy-only floor
 * proxy (../lib/floor-watch.mjs, a process of its own), measured in the same rounds as direct and the
 * fleet, the order rotating: what any proxy adds on these cores (docs/benchmarks.md, "The watch floor").
 *
 * The simulated clusters' bookmark interval is set to 60 s for the case (kube-apiserver's is about a minute;
 * the simulator's 1 s default would make 3,000 upstream watches send 3,000 bookmarks a second).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SimCluster } from '../../sim/index.ts';
import type { FleetProcess } from '../lib/fleetproc.ts';
import { judge, type Row33Check } from '../lib/goals33.ts';
import { formatProfile, summarizeProfile } from '../lib/profile.ts';
import { fmt, table } from '../lib/report.ts';
import { median, processCpuMs } from '../lib/stats.ts';
import { step } from '../lib/steps.ts';
import { parseWritevTrace, straceStart } from '../lib/strace.ts';
import { nowMs, type OpenResult, type StopResult, type Written, watchersState } from '../lib/watchers.ts';
import {
  addedP99FloorRow,
  addedP99s,
  burstFloorClause,
  burstFloorRow,
  burstRatios,
  type FloorRounds,
} from '../lib/watchfloor.ts';
import {
  censusLines,
  FLEET_BUNDLE,
  type GcPauses,
  gcPauses,
  idleWatchMemory,
  listRv,
  MEMORY_AB,
  memoryAB,
  startWatchFleet,
} from './merged-watch-fleet.ts';
import type { BenchCase, CaseContext, CustomResult, GoalCheck, UpstreamContext } from './types.ts';

export const MEMBERS = ['member1', 'member2', 'member3'];
const DIRECT_MEMBER = 'member1';
export const CM_GVR = { group: '', version: 'v1', resource: 'configmaps' };
export const CM_NAME = 'tick';
/** issue 16, goal 5 */
export const WATCH_GOAL = { addedP99Ms: 2, bytesPerWatch: 32 * 1024, rate: 1000, burstVsDirect: 0.9 };

/**
 * A watch that has no response headers by then is counted as failed (the measurement goes on without
 * it). Watches open OPEN_CONCURRENCY at a time, as informers starting do, not all in the same millisecond:
 * a thousand at once on a loaded 2-core machine measured the herd (15 s per head), not the watches.
 */
const OPEN_TIMEOUT_MS = 60_000;
const OPEN_CONCURRENCY = 200;
/** the namespace of watch `i` of a set: f(leet), d(irect), m(any: merged-watch-many), l (the floor proxy) */
export const nsOf = (set: WatchSet, i: number) => `b${set}-${i}`;
export type WatchSet = 'f' | 'd' | 'm' | 'l';
/** the sets this case measures, and their names in its output and in the load process */
type Set3 = 'd' | 'f' | 'l';
const KEY: Record<Set3, string> = { d: 'direct', f: 'fleet', l: 'floor' };
const LABEL: Record<Set3, string> = { d: 'direct', f: 'fleet ', l: 'floor ' };
const ROW: Record<Set3, string> = { d: 'direct', f: 'fleet (merged)', l: 'floor proxy (copy)' };
/** the sets in round `r`'s order: rotating, so no set always follows another */
const ORDER = (r: number): Set3[] => (['d', 'f', 'l'] as const).map((_, k, a) => a[(k + r) % 3]!);
/** the copy-only floor proxy (../lib/floor-watch.mjs), in a process of its own as the fleet */
const FLOOR_PROXY = fileURLToPath(new URL('../lib/floor-proxy.mjs', import.meta.url));

// ------------------------------------------------------------------------------------------ upstream side

export interface DriveSpec {
  set: WatchSet;
  clusters: string[];
  /** the watches (namespace indexes) that are open: events go to these only */
  watchers: number[];
  /** events per second; 0 = as fast as possible (a burst of `total`) */
  rate: number;
  durationS?: number;
  total?: number;
}

export interface DriveResult {
  sent: number;
  startMs: number;
  endMs: number;
  /** largest lag of the driver behind its schedule (fixed rate) */
  maxLagMs: number;
  /** every event written: which watch, which cluster (index into the spec's clusters), which sequence */
  written: Written;
}

let savedBookmarkMs: number | undefined;
let prepared = 0;

export function sims(ctx: UpstreamContext): SimCluster[] {
  return MEMBERS.map((m) => {
    const s = ctx.sims.members.get(m);
    if (!s) throw new Error(`bench: simulated ${m} is missing`);
    return s;
  });
}

let seq = 0;
function write(sim: SimCluster, namespace: string, cluster: number): number {
  const n = seq++;
  sim.update(CM_GVR, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CM_NAME, namespace },
    data: { t: nowMs().toFixed(3), seq: String(n), c: String(cluster) },
  });
  return n;
}

export function drive(ctx: UpstreamContext, spec: DriveSpec): Promise<DriveResult> {
  const byName = new Map(sims(ctx).map((s) => [s.name, s]));
  const targets = spec.clusters.map((c) => byName.get(c)!);
  // the simulator keeps 20,000 events of history and, past that, compacts on every write (a walk over every
  // object): a long run would measure that instead of the watches. Each drive starts with an empty history.
  for (const sim of byName.values()) sim.compact();
  let k = 0;
  const written: Written = { watch: [], cluster: [], seq: [] };
  const next = () => {
    // event k: watcher k mod W, cluster ⌊k / W⌋ mod C (every watcher hears from every cluster in turn)
    const w = spec.watchers.length;
    const i = spec.watchers[k % w]!;
    const c = Math.floor(k / w) % targets.length;
    written.watch.push(i);
    written.cluster.push(c);
    written.seq.push(write(targets[c]!, nsOf(spec.set, i), c));
    k++;
  };
  const startMs = nowMs();
  if (spec.rate === 0) {
    const total = spec.total ?? 10_000;
    return new Promise((resolve) => {
      // batches, so the clusters' sockets flush between them
      const step = () => {
        for (let b = 0; b < 100 && k < total; b++) next();
        if (k < total) setImmediate(step);
        else resolve({ sent: k, startMs, endMs: nowMs(), maxLagMs: 0, written });
      };
      step();
    });
  }
  const endAt = startMs + (spec.durationS ?? 5) * 1000;
  let maxLagMs = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const now = nowMs();
      const due = Math.min(
        Math.floor(((Math.min(now, endAt) - startMs) / 1000) * spec.rate),
        Math.round(((endAt - startMs) / 1000) * spec.rate),
      );
      if (due - k > 1) maxLagMs = Math.max(maxLagMs, ((due - k) / spec.rate) * 1000);
      while (k < due) next();
      if (now >= endAt) {
        clearInterval(timer);
        resolve({ sent: k, startMs, endMs: nowMs(), maxLagMs, written });
      }
    };
    const timer = setInterval(tick, 2);
  });
}

const upstreamActions = {
  prepare(ctx: UpstreamContext, { watchers }: { watchers: number }) {
    const all = sims(ctx);
    for (const sim of all) {
      savedBookmarkMs ??= sim.options.bookmarkIntervalMs;
      sim.options.bookmarkIntervalMs = 60_000;
      for (let i = 0; i < watchers; i++) {
        for (const set of sim.name === DIRECT_MEMBER ? (['f', 'd', 'l'] as const) : (['f', 'l'] as const))
          sim.create(CM_GVR, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: CM_NAME, namespace: nsOf(set, i) },
            data: { t: '0', seq: '0' },
          });
      }
    }
    prepared = watchers;
    return null;
  },
  drive,
  openWatches(ctx: UpstreamContext) {
    return Object.fromEntries(sims(ctx).map((s) => [s.name, s.openWatches()]));
  },
};

function teardown(ctx: UpstreamContext): void {
  for (const sim of sims(ctx)) {
    if (savedBookmarkMs !== undefined) sim.options.bookmarkIntervalMs = savedBookmarkMs;
    for (let i = 0; i < prepared; i++)
      for (const set of ['f', 'd', 'l'] as const) sim.remove(CM_GVR, nsOf(set, i), CM_NAME);
    sim.compact();
  }
  prepared = 0;
}

// ------------------------------------------------------------------------------------------ watcher side (load process)

const loadActions = watchersState();
type Stats = StopResult;

// ------------------------------------------------------------------------------------------ the case

const watchUrl = (base: string, set: Set3, i: number, rv: string) =>
  `${base}/api/v1/namespaces/${nsOf(set, i)}/configmaps?watch=true&resourceVersion=${rv}`;

/**
 * The case: the measured fleet (a process of its own over exactly MEMBERS, merged-watch-fleet.ts says
 * why), then with BENCH_BASELINE_BUNDLE the idle memory A/B (BENCH_WATCH_AB_ONLY=1: that alone).
 */
async function runWatch(ctx: CaseContext): Promise<CustomResult> {
  const W = Number(process.env.BENCH_WATCHES) || 1000;
  await ctx.upstream('prepare', { watchers: W });
  let res: CustomResult = { text: '', goals: [], figures: {} };
  if (!(MEMORY_AB && process.env.BENCH_WATCH_AB_ONLY)) {
    const [fleetProc, floorProc] = await step('fleet process start', () =>
      Promise.all([startWatchFleet(ctx, MEMBERS, FLEET_BUNDLE), startWatchFleet(ctx, MEMBERS, FLOOR_PROXY)]),
    );
    try {
      res = await measureWatches(ctx, fleetProc, W, floorProc);
    } finally {
      fleetProc.stop();
      floorProc.stop();
    }
  }
  if (MEMORY_AB) {
    const ab = await memoryAB(
      ctx,
      MEMBERS,
      (base, rv) => Array.from({ length: W }, (_, i) => watchUrl(base, 'f', i, rv)),
      { timeoutMs: OPEN_TIMEOUT_MS, concurrency: OPEN_CONCURRENCY, rounds: Math.max(3, ctx.opts.rounds) },
    );
    res.text += `\n${ab.lines.join('\n')}`;
    res.goals.push({
      goal: 'goal 5: memory per idle merged watch, this build ÷ BENCH_BASELINE_BUNDLE (same run)',
      ok: undefined,
      info: true,
      detail: fmt.x(ab.ratio),
    });
    res.figures = { ...(res.figures as object), memoryAB: ab.figures };
  }
  return res;
}

async function measureWatches(
  ctx: CaseContext,
  fleetProc: FleetProcess,
  W: number,
  floorProc: FleetProcess,
): Promise<CustomResult> {
  const fleet = fleetProc.url;
  const direct = ctx.env.memberUrls[DIRECT_MEMBER]!;
  const quick = ctx.opts.quick;
  const phaseS = quick ? 1 : 3;
  const rounds = ctx.opts.rounds;
  const lines: string[] = [];
  const goals: GoalCheck[] = [];
  const pid = fleetProc.pid;

  const fleetRv = await listRv(fleet);
  const directRv = await listRv(direct);
  // the floor reads no composite RV: each cluster's own, in the members' order (../lib/floor-watch.mjs)
  const floorRv = (await Promise.all(MEMBERS.map((m) => listRv(ctx.env.memberUrls[m]!)))).join(',');

  try {
    // memory: the fleet after full GCs and a pause, before and after opening the merged watches (idle)
    const mem = await step('merged watches open, memory', () =>
      idleWatchMemory(ctx, fleetProc, {
        key: 'fleet',
        urls: Array.from({ length: W }, (_, i) => watchUrl(fleet, 'f', i, fleetRv)),
        label: 'idle',
        timeoutMs: OPEN_TIMEOUT_MS,
        concurrency: OPEN_CONCURRENCY,
        snapshots: !!ctx.profileDir,
      }),
    );
    const { open: fOpen, rss0, rss1, heap0: mem0, heap1: mem1, perWatchRss, perWatchHeap } = mem;
    const { perWatchExternal, perWatch } = mem;
    ctx.log(
      `   ${fOpen.opened}/${W} merged watches open in ${(fOpen.ms / 1000).toFixed(1)} s` +
        (fOpen.withWarnings ? `, ${fOpen.withWarnings} with a Warning (a cluster missing)` : '') +
        (fOpen.failed ? `, ${fOpen.failed} failed (${fOpen.firstError})` : ''),
    );
    // where an idle merged watch's heap goes (with --profile): growth by constructor and by holder
    const census = censusLines(mem, 'merged-watch');
    const upstreamWatches = await ctx.upstream<Record<string, number>>('openWatches');
    // direct and floor watches open side by side (only the merged ones' opening is a figure)
    const [dOpen, lOpen] = await Promise.all([
      ctx.load<OpenResult>('open', {
        key: 'direct',
        urls: Array.from({ length: W }, (_, i) => watchUrl(direct, 'd', i, directRv)),
        timeoutMs: OPEN_TIMEOUT_MS,
        concurrency: OPEN_CONCURRENCY,
      }),
      ctx.load<OpenResult>('open', {
        key: 'floor',
        urls: Array.from({ length: W }, (_, i) => watchUrl(floorProc.url, 'l', i, floorRv)),
        timeoutMs: OPEN_TIMEOUT_MS,
        concurrency: OPEN_CONCURRENCY,
      }),
    ]);
    ctx.log(`   ${dOpen.opened}/${W} direct watches open in ${(dOpen.ms / 1000).toFixed(1)} s`);
    ctx.log(
      `   ${lOpen.opened}/${W} floor proxy watches open in ${(lOpen.ms / 1000).toFixed(1)} s${lOpen.failed ? `, ${lOpen.failed} failed (${lOpen.firstError})` : ''}`,
    );

    // RSS moves in pages and GC returns them lazily: small deltas are noise; the JS side (heap + external)
    // is exact after a full GC but misses native memory. The goal takes the larger of the two (perWatch).
    const watchersOf = (set: Set3) => ({ f: fOpen, d: dOpen, l: lOpen })[set].openedIdx;
    if (!fOpen.opened || !dOpen.opened || !lOpen.opened) throw new Error('no watch opened');

    // latency at the fixed rate: direct and fleet phases alternate. A phase is over when its last event
    // arrived, or `deadlineMs` after its last write: what did not arrive by then is sorted (lost, ended, late)
    const deadlineMs = quick ? 10_000 : 20_000;
    const drive = async (set: Set3, rate: number, o: { durationS?: number; total?: number }) => {
      await ctx.load('record');
      const d = await ctx.upstream<DriveResult>('drive', {
        set,
        clusters: set === 'd' ? [DIRECT_MEMBER] : MEMBERS,
        watchers: watchersOf(set),
        rate,
        ...o,
      } satisfies DriveSpec);
      const s = await ctx.load<Stats>('stop', {
        key: KEY[set],
        written: d.written,
        endMs: d.endMs,
        deadlineMs,
      });
      return { ...s, sent: d.sent, maxLagMs: d.maxLagMs, startMs: d.startMs, endMs: d.endMs };
    };
    const phase = (set: Set3) => drive(set, WATCH_GOAL.rate, { durationS: phaseS });
    const missing = (s: Stats) =>
      s.received < s.expected
        ? `  MISSING ${s.expected - s.received}: ${s.lost} lost (a later event of that cluster came), ${s.ended} on ended watches, ${s.late} not delivered ${deadlineMs / 1000} s after the last write`
        : '';
    // warm-up (not measured): the first events through freshly opened watches pay for JIT and GC
    const warmupS = Math.max(0.5, ctx.opts.warmupS);
    for (const set of ORDER(0)) {
      const w = await drive(set, WATCH_GOAL.rate, { durationS: warmupS });
      ctx.log(
        `   warm-up ${LABEL[set]} ${w.received}/${w.sent} events, last one ${fmt.ms(w.drainMs)} ms after the last write${missing(w)}`,
      );
    }
    const results: Record<Set3, Array<Awaited<ReturnType<typeof phase>>>> = { f: [], d: [], l: [] };
    /** CPU % of the proxy's process in its phases (the fleet's, idle, in the direct ones) */
    const cpu: Record<Set3, number[]> = { f: [], d: [], l: [] };
    const pidOf = (set: Set3) => (set === 'l' ? floorProc.pid : pid);
    /** the fleet's GC pauses in each phase (the fleet is idle in the others) */
    const gc: Record<Set3, GcPauses[]> = { f: [], d: [], l: [] };
    if (ctx.profileDir) await fleetProc.profileStart();
    for (let r = 0; r < rounds; r++) {
      for (const set of ORDER(r)) {
        const gcStop = await gcPauses(fleetProc);
        const c0 = processCpuMs(pidOf(set));
        const res = await phase(set);
        const c1 = processCpuMs(pidOf(set));
        const g = await gcStop();
        if (c0 !== null && c1 !== null) cpu[set].push(((c1 - c0) / phaseS / 1000) * 100);
        if (g) gc[set].push(g);
        results[set].push(res);
        ctx.log(
          `   round ${r + 1}/${rounds}  ${LABEL[set]} ${res.received}/${res.sent} events` +
            // a phase without one delivered event has no percentiles (NaN, null after IPC)
            `  delay p50 ${fmt.ms(res.p50 ?? Number.NaN)} ms  p99 ${fmt.ms(res.p99 ?? Number.NaN)} ms  max ${fmt.ms(res.max ?? Number.NaN)} ms` +
            `  last ${fmt.ms(res.drainMs)} ms after the last write` +
            (res.maxLagMs > 20 ? `  (driver lagged up to ${res.maxLagMs.toFixed(0)} ms)` : '') +
            (g && set === 'f' ? `  fleet GC ${gcText(g)}` : '') +
            `  stalls: ${set === 'f' && g?.loopMaxMs !== undefined ? `fleet loop ${g.loopMaxMs.toFixed(1)} ms${g.mainWaitMs !== undefined ? ` (its main thread ${g.mainCpuMs!.toFixed(0)} ms on a CPU, ${g.mainWaitMs.toFixed(0)} ms waiting for one)` : ''}, ` : ''}load loop ${res.loadLoopMaxMs.toFixed(1)} ms, driver ${res.maxLagMs.toFixed(0)} ms` +
            `; slowest 1% (${res.tail.n}) written ${res.tail.fromMs.toFixed(0)}–${res.tail.toMs.toFixed(0)} ms into the phase, by cluster ${res.tail.byCluster.join('/')}` +
            missing(res),
        );
      }
    }
    const profilePath = ctx.profileDir && join(ctx.profileDir, 'merged-watch-events.cpuprofile');
    const profile = profilePath
      ? { path: await fleetProc.profileStop(profilePath), shared: false, ...summarizeProfile(profilePath) }
      : undefined;
    const med = (set: Set3, k: 'p50' | 'p99' | 'max') => median(results[set].map((x) => x[k]));
    const addedP50 = median(results.f.map((f, i) => f.p50 - results.d[i]!.p50));
    const addedP99 = median(results.f.map((f, i) => f.p99 - results.d[i]!.p99));
    const lost = (set: Set3) => results[set].reduce((n, x) => n + (x.sent - x.received), 0);
    const sorts = (set: Set3) => {
      const all = [...results[set], ...bursts[set]];
      const sum = (k: 'lost' | 'ended' | 'late') => all.reduce((n, x) => n + x[k], 0);
      return `lost ${sum('lost')}, on ended watches ${sum('ended')}, late ${sum('late')}`;
    };

    // saturation: bursts written as fast as the clusters can; delivered rate at the watchers
    // --quick: 2,000 (a burst runs at a few hundred events/s on a loaded machine: 5,000 cost ~20 s per target)
    const burst = quick ? 2000 : 15_000;
    type Sat = { sent: number; received: number; writeRate: number; deliveredRate: number; p99: number };
    /**
     * one burst per set and round (the order rotating as the phases'), and the CPU each process spent on it
     * per event: the proxy's (fleet or floor), the simulated clusters', the client's (the load process)
     */
    type BurstRound = Sat & {
      proxyUs: number;
      simsUs: number;
      clientUs: number;
      /** the client's reads ('data' events, one per chunk frame read) and bytes per event */
      clientReads: number;
      clientBytes: number;
    };
    const satRounds: Record<Set3, BurstRound[]> = { d: [], f: [], l: [] };
    const bursts: Record<Set3, Array<Awaited<ReturnType<typeof drive>>>> = { d: [], f: [], l: [] };
    const simsPid = ctx.upstreamProcess.pid;
    const burstProfiles: Partial<Record<'f' | 'l', Parameters<typeof formatProfile>[0]>> = {};
    for (let r = 0; r < rounds; r++)
      for (const set of ORDER(r)) {
        // --profile: the proxy's CPU profile over its bursts (the fleet's and the floor's, to compare)
        const proc = set === 'f' ? fleetProc : set === 'l' ? floorProc : undefined;
        if (ctx.profileDir) await proc?.profileStart();
        const p0 = proc ? processCpuMs(proc.pid) : null;
        const u0 = processCpuMs(simsPid);
        const s = await drive(set, 0, { total: burst });
        const p1 = proc ? processCpuMs(proc.pid) : null;
        const u1 = processCpuMs(simsPid);
        if (ctx.profileDir && proc) {
          const path = join(ctx.profileDir, `merged-watch-burst-${KEY[set]}-${r + 1}.cpuprofile`);
          burstProfiles[set as 'f' | 'l'] = {
            path: await proc.profileStop(path),
            shared: false,
            ...summarizeProfile(path),
          };
        }
        const perEvent = (a: number | null, b: number | null) =>
          a === null || b === null || !s.received ? Number.NaN : ((b - a) * 1000) / s.received;
        bursts[set].push(s);
        const x: BurstRound = {
          sent: s.sent,
          received: s.received,
          writeRate: s.sent / ((s.endMs - s.startMs) / 1000),
          deliveredRate: s.received / ((s.lastMs - s.startMs) / 1000),
          p99: s.p99,
          proxyUs: perEvent(p0, p1),
          simsUs: perEvent(u0, u1),
          clientUs: s.received ? (s.loadCpuMs * 1000) / s.received : Number.NaN,
          clientReads: s.received ? s.reads / s.received : Number.NaN,
          clientBytes: s.received ? s.bytes / s.received : Number.NaN,
        };
        satRounds[set].push(x);
        ctx.log(
          `   burst ${r + 1}/${rounds} ${LABEL[set]}: ${s.received}/${s.sent} events, written at ${x.writeRate.toFixed(0)}/s, delivered at ${x.deliveredRate.toFixed(0)}/s, delay p99 ${fmt.ms(s.p99 ?? Number.NaN)} ms` +
            `; CPU per event: proxy ${fmt.ms(x.proxyUs)}, sims ${fmt.ms(x.simsUs)}, client ${fmt.ms(x.clientUs)} µs` +
            `; the client's reads per event ${x.clientReads.toFixed(2)}, bytes per event ${x.clientBytes.toFixed(0)}${missing(s)}`,
        );
      }
    // BENCH_WATCH_STRACE=1: one more burst each through the fleet and the floor proxy, their system calls
    // counted (../lib/strace.ts; strace slows them many times: counts only, after the measured rounds)
    const syscalls: Partial<Record<'f' | 'l', Record<string, number>>> = {};
    // BENCH_WATCH_STRACE=writev: the writes to the clients instead, how many pieces and bytes each
    const writevs: Partial<Record<'f' | 'l', ReturnType<typeof parseWritevTrace> & { events: number }>> = {};
    if (process.env.BENCH_WATCH_STRACE === 'writev')
      for (const set of ['f', 'l'] as const) {
        const stop = await straceStart(pidOf(set), ['-e', 'trace=writev', '-s', '0']);
        if (!stop) {
          ctx.log('   strace could not attach: no writev figures');
          break;
        }
        const s = await drive(set, 0, { total: burst });
        writevs[set] = { ...parseWritevTrace(await stop()), events: Math.max(1, s.received) };
      }
    if (process.env.BENCH_WATCH_STRACE === '1')
      for (const set of ['f', 'l'] as const) {
        const stop = await straceStart(pidOf(set));
        if (!stop) {
          ctx.log('   strace could not attach: no system call counts');
          break;
        }
        const s = await drive(set, 0, { total: burst });
        const calls = await stop();
        syscalls[set] = Object.fromEntries([...calls].map(([k, v]) => [k, v / Math.max(1, s.received)]));
      }
    const medOf = (set: Set3, k: keyof BurstRound) => median(satRounds[set].map((x) => x[k]));
    const sat = Object.fromEntries(
      (['d', 'f', 'l'] as const).map((set) => [
        set,
        {
          // events: summed over the rounds; rates and delays: medians
          sent: satRounds[set].reduce((n, x) => n + x.sent, 0),
          received: satRounds[set].reduce((n, x) => n + x.received, 0),
          writeRate: medOf(set, 'writeRate'),
          deliveredRate: medOf(set, 'deliveredRate'),
          p99: medOf(set, 'p99'),
        },
      ]),
    ) as Record<Set3, Sat>;
    const burstRounds: FloorRounds = {
      direct: satRounds.d.map((x) => x.deliveredRate),
      fleet: satRounds.f.map((x) => x.deliveredRate),
      floor: satRounds.l.map((x) => x.deliveredRate),
    };
    const p99Rounds: FloorRounds = {
      direct: results.d.map((x) => x.p99),
      fleet: results.f.map((x) => x.p99),
      floor: results.l.map((x) => x.p99),
    };
    const floorP99 = addedP99s(p99Rounds);

    lines.push(
      `   ${fOpen.opened}/${W} merged watches open through ${fleet} (3 clusters, static members, federation off), ` +
        `${dOpen.opened}/${W} direct watches on ${DIRECT_MEMBER}; events go to open watches only;`,
      `  ` +
        `one namespace per watch, ConfigMap updates at ${WATCH_GOAL.rate}/s in total (${phaseS} s phases, ${rounds} round(s), alternating)`,
      `   open upstream watches in the simulated clusters with the merged ones open: ${Object.entries(
        upstreamWatches,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} (expected ${W} each)`,
      '',
      table(
        ['target', 'events', 'missing', 'delay p50 ms', 'delay p99 ms', 'max ms', 'proxy CPU %'],
        (['d', 'f', 'l'] as const).map((set) => [
          ROW[set],
          String(results[set].reduce((n, x) => n + x.received, 0)),
          String(lost(set)),
          fmt.ms(med(set, 'p50')),
          fmt.ms(med(set, 'p99')),
          fmt.ms(med(set, 'max')),
          cpu[set].length ? median(cpu[set]).toFixed(0) : '-',
        ]),
      ),
      `   added by the fleet (paired by round, median): p50 ${fmt.signedMs(addedP50)}, p99 ${fmt.signedMs(addedP99)}; ` +
        `by the floor proxy: p99 ${fmt.signedMs(floorP99.floorAdded)}; fleet − floor p99 ${fmt.signedMs(floorP99.fleetOverFloor)}` +
        ` (proxy CPU %: the fleet's process in the direct phases, idle; the floor proxy copies each cluster's lines, ../lib/floor-watch.mjs)`,
      ...gcLines(gc.f, phaseS),
      '',
      `   memory, fleet process after GC: RSS ${fmt.bytes(rss0)} → ${fmt.bytes(rss1)} with ${fOpen.opened} merged watches open: ` +
        `${fmt.bytes(perWatchRss)} per watch; V8 heap ${fmt.bytes(mem0.heapUsed)} → ${fmt.bytes(mem1.heapUsed)}: ${fmt.bytes(perWatchHeap)} per watch (+ external ${fmt.bytes(perWatchExternal)})` +
        (fOpen.opened < W
          ? ` (the ${W - fOpen.opened} that never opened are still pending in the fleet and counted in)`
          : ''),
      '',
      table(
        [
          'burst',
          'events',
          'written /s',
          'delivered /s',
          'delay p99 ms',
          'proxy CPU µs/ev',
          'sims CPU µs/ev',
          'client CPU µs/ev',
        ],
        (['d', 'f', 'l'] as const).map((set) => [
          ROW[set],
          String(sat[set].sent),
          sat[set].writeRate.toFixed(0),
          sat[set].deliveredRate.toFixed(0),
          fmt.ms(sat[set].p99),
          set === 'd' ? '-' : fmt.ms(medOf(set, 'proxyUs')),
          fmt.ms(medOf(set, 'simsUs')),
          fmt.ms(medOf(set, 'clientUs')),
        ]),
      ),
      `   (bursts: ${burst} updates written as fast as the simulated clusters' process can, one watcher each, ${rounds} round(s) per target, the order rotating; ` +
        `delivered = events received ÷ time from the first write to the last delivery; medians of the rounds; ` +
        `per-round ratios: floor ÷ direct ${burstRatios(burstRounds)
          .perRound.floorVsDirect.map((x) => x.toFixed(2))
          .join(', ')}, fleet ÷ floor ${burstRatios(burstRounds)
          .perRound.fleetVsFloor.map((x) => x.toFixed(2))
          .join(', ')}` +
        `${ctx.upstreamProcess.shared ? "; the sims' process is shared with other roles" : ''})`,
    );
    // the rates move with whatever else the 2 cores run; the CPU an event costs each process moves less
    const cpuSum = (set: Set3) =>
      (set === 'd' ? 0 : medOf(set, 'proxyUs')) + medOf(set, 'simsUs') + medOf(set, 'clientUs');
    lines.push(
      `   CPU per event of the three processes together (proxy + sims + client, medians): direct ${fmt.ms(cpuSum('d'))}, fleet ${fmt.ms(cpuSum('f'))}, floor ${fmt.ms(cpuSum('l'))} µs; ` +
        `were the cores the only limit, floor ÷ direct ≈ ${fmt.x(cpuSum('d') / cpuSum('l'))}, fleet ÷ floor ≈ ${fmt.x(cpuSum('l') / cpuSum('f'))}, fleet ÷ direct ≈ ${fmt.x(cpuSum('d') / cpuSum('f'))}`,
    );
    for (const set of ['f', 'l'] as const) {
      const c = syscalls[set];
      if (!c) continue;
      const total = Object.values(c).reduce((a, b) => a + b, 0);
      const top = Object.entries(c)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', ');
      lines.push(
        `   system calls per event, ${ROW[set]} (strace -c -f, one more burst): ${total.toFixed(2)}: ${top}`,
      );
    }
    for (const set of ['f', 'l'] as const) {
      const w = writevs[set];
      if (w)
        lines.push(
          `   writev to the clients, ${ROW[set]} (strace, one more burst): ${(w.calls / w.events).toFixed(2)} calls per event, ` +
            `${(w.pieces / Math.max(1, w.calls)).toFixed(2)} pieces and ${(w.bytes / Math.max(1, w.calls)).toFixed(0)} bytes per call`,
        );
    }
    const limitedBySims = sat.f.deliveredRate >= 0.9 * sat.f.writeRate;
    if (limitedBySims)
      lines.push(
        `   the fleet kept up with the simulated clusters' writes: its saturation is above ${sat.f.deliveredRate.toFixed(0)}/s on this machine`,
      );
    if (profile) lines.push(formatProfile(profile));
    for (const set of ['f', 'l'] as const) {
      const p = burstProfiles[set];
      if (p) lines.push(`   ${ROW[set]}, its last burst:`, formatProfile(p));
    }
    lines.push(...census);
    // paired: the median of the per-round ratios (one round: the ratio of its rates, as before)
    const burstRatio = burstRatios(burstRounds).fleetVsDirect;
    const burstLost = sat.f.sent - sat.f.received;
    goals.push(
      {
        goal: `goal 5: no event missing at ${WATCH_GOAL.rate} events/s over ${W} merged watches (phases and bursts)`,
        ok: lost('f') === 0 && burstLost === 0 && fOpen.opened === W,
        detail:
          `${lost('f')} of ${results.f.reduce((n, x) => n + x.sent, 0)} missing in the fixed-rate phases, ${burstLost} of ${sat.f.sent} in the burst` +
          ` [${sorts('f')}] (direct: ${lost('d')} and ${sat.d.sent - sat.d.received})` +
          (fOpen.opened < W ? `; only ${fOpen.opened}/${W} merged watches opened` : ''),
      },
      {
        goal: `goal 5: added event delay p99 ≤ ${WATCH_GOAL.addedP99Ms} ms at ${WATCH_GOAL.rate} events/s over ${W} merged watches`,
        ok: Number.isFinite(addedP99) ? addedP99 <= WATCH_GOAL.addedP99Ms : undefined,
        detail: `${fmt.signedMs(addedP99)} (fleet p99 ${fmt.ms(med('f', 'p99'))} ms, direct ${fmt.ms(med('d', 'p99'))} ms)`,
      },
      {
        goal: `goal 5: bursts delivered at ≥ ${WATCH_GOAL.burstVsDirect}× the direct rate`,
        ok: Number.isFinite(burstRatio) ? burstRatio >= WATCH_GOAL.burstVsDirect : undefined,
        detail:
          `${fmt.x(burstRatio)} (${sat.f.deliveredRate.toFixed(0)}/s through the fleet vs ${sat.d.deliveredRate.toFixed(0)}/s direct)` +
          (limitedBySims ? '; the simulated clusters were the limit' : ''),
      },
      {
        goal: `goal 5: memory per idle merged watch ≤ ${fmt.bytes(WATCH_GOAL.bytesPerWatch)} (3 clusters)`,
        // with --profile the heap snapshots' native memory is in the RSS: the heap alone is no verdict
        ok: Number.isFinite(perWatch) && mem.rssValid ? perWatch <= WATCH_GOAL.bytesPerWatch : undefined,
        detail: `${fmt.bytes(perWatch)} (RSS ${fmt.bytes(perWatchRss)}${mem.rssValid ? '' : ' not comparable: heap snapshots taken (--profile)'}, V8 heap + external ${fmt.bytes(perWatchHeap + perWatchExternal)})${fOpen.opened < W ? ` — over the ${fOpen.opened} that opened` : ''}`,
      },
    );
    const failed = fOpen.failed + dOpen.failed + lOpen.failed;
    const issue33: Row33Check[] = [
      {
        row: 'added-p99',
        where: `${W} merged watches, 3 simulated clusters`,
        ratio: Number.NaN,
        shown: fmt.signedMs(addedP99),
        ok: judge(addedP99, WATCH_GOAL.addedP99Ms),
        detail: `added p99 ${fmt.signedMs(addedP99)}, fleet ${fmt.ms(med('f', 'p99'))} vs direct ${fmt.ms(med('d', 'p99'))} ms; floor proxy adds ${fmt.signedMs(floorP99.floorAdded)}, fleet − floor ${fmt.signedMs(floorP99.fleetOverFloor)}`,
      },
      addedP99FloorRow(`${W} watches, 3 simulated clusters`, p99Rounds),
      {
        row: 'burst',
        where: `${W} watches, simulated clusters${limitedBySims ? ', the simulated clusters the limit' : ''}`,
        ratio: burstRatio,
        ok: judge(burstRatio, WATCH_GOAL.burstVsDirect, true),
        detail: `${sat.f.deliveredRate.toFixed(0)} vs ${sat.d.deliveredRate.toFixed(0)} events/s; ${burstFloorClause(burstRounds)}`,
      },
      burstFloorRow(`${W} watches, simulated clusters`, burstRounds),
    ];
    return {
      text: lines.join('\n'),
      goals,
      issue33,
      figures: {
        watches: W,
        rate: WATCH_GOAL.rate,
        phaseS,
        open: {
          fleet: { ...fOpen, openedIdx: undefined },
          direct: { ...dOpen, openedIdx: undefined },
          upstreamWatches,
        },
        latency: { fleet: results.f, direct: results.d, floor: results.l, addedP50, addedP99, floorP99 },
        fleetCpuPercent: { fleet: cpu.f, direct: cpu.d },
        fleetGc: { fleet: gc.f, direct: gc.d },
        memory: {
          rss0,
          rss1,
          perWatch,
          perWatchRss,
          perWatchHeap,
          perWatchExternal,
          heap0: mem0,
          heap1: mem1,
        },
        saturation: sat,
        burstRounds: satRounds,
        syscallsPerEvent: syscalls,
        writevs,
        heapSnapshots: mem.snaps,
      },
      ...(failed
        ? { error: `${failed} watch(es) failed to open: ${fOpen.firstError ?? dOpen.firstError}` }
        : {}),
    };
  } finally {
    await ctx.load('close', { key: 'fleet' });
    await ctx.load('close', { key: 'direct' });
    await ctx.load('close', { key: 'floor' });
  }
}

const gcText = (g: GcPauses) =>
  `${g.n} pause(s) (${g.minor} minor), ${g.totalMs.toFixed(1)} ms in all, longest ${g.maxMs.toFixed(1)} ms`;

/**
 * The fleet's GC in its phases, medians: at a fixed rate about `total ÷ phase` of the events arrive during
 * a pause and wait for its end, so once that share passes 1% the pauses, not the merging, set the p99.
 */
function gcLines(f: GcPauses[], phaseS: number): string[] {
  if (!f.length) return [];
  const med = (k: keyof GcPauses) => median(f.map((g) => g[k]));
  const share = (med('totalMs') / (phaseS * 1000)) * 100;
  return [
    `   fleet GC per fleet phase (median of ${f.length}): ${med('n')} pause(s), ${med('totalMs').toFixed(1)} ms in all ` +
      `(${share.toFixed(2)}% of the phase: the share of events that wait for one), longest ${med('maxMs').toFixed(1)} ms; ` +
      `per phase ${f.map((g) => `${g.totalMs.toFixed(0)}/${g.maxMs.toFixed(0)}`).join(' ')} ms (sum/longest)`,
    // a loop gap with the main thread waiting for a CPU is the machine's, not the fleet's (docs/benchmarks.md)
    ...(f.every((g) => g.mainWaitMs !== undefined)
      ? [
          `   fleet main thread per fleet phase (median): ${med('mainCpuMs').toFixed(0)} ms on a CPU, ${med('mainWaitMs').toFixed(0)} ms ready but waiting for one` +
            ` (per phase ${f.map((g) => g.mainWaitMs!.toFixed(0)).join(' ')} ms)`,
        ]
      : []),
  ];
}

export const mergedWatchCase: BenchCase = {
  name: 'merged-watch',
  title:
    '1,000 merged watches over 3 clusters vs 1,000 direct: added event delay, memory per watch, saturation',
  members: 3,
  teardown,
  run: runWatch,
  upstreamActions,
  loadActions,
};

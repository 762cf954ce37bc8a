/**
 * Merged lists across the fleet (issue 3), two cases:
 *
 * `merged-list`: `GET /api/v1/pods` at the fleet's root URL (static members, federation off) over 10
 * simulated clusters × 1,000 pods, every cluster answering with 20 ms of added latency, against, in the same
 * run and interleaved answer by answer: (a) the slowest single cluster listed directly at its own URL, and
 * (b) the 10 clusters listed directly one after another (what Karmada's search proxy does today). JSON and
 * the Table form kubectl asks for. One client, one answer at a time (a person running kubectl): p50/p99 of
 * the time to the last byte, first byte, and the CPU the fleet and the simulated clusters spent per answer.
 * Target: fleet p50 ≤ 1.2 × (a)'s.
 *
 * `merged-list-memory`: the fleet process's peak RSS (VmHWM, reset just before) while it merges
 * 10 × 10,000 pods, against the largest single cluster's response; target: peak ≤ 2 × that + 100 MiB.
 * Then the same list through the worker bundle in workerd (miniflare), whose process's peak RSS over its
 * idle baseline is compared with the 128 MB a Workers isolate may use.
 */
import { resolve } from 'node:path';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { grKey, objectKey } from '../../sim/store.ts';
import { CdpSession } from '../lib/cdp.ts';
import { startFleetProcess } from '../lib/fleetproc.ts';
import { descendantsNamed, MiB, procMemory, resetPeak, sampleRss } from '../lib/proc.ts';
import { formatProfile } from '../lib/profile.ts';
import { fmt, table } from '../lib/report.ts';
import {
  type AnswerSample,
  runSequences,
  type SequenceResult,
  type SequenceSpec,
  type SequenceTarget,
} from '../lib/sequence.ts';
import { median, percentile, processCpuMs } from '../lib/stats.ts';
import { benchPod } from './passthrough.ts';
import type { BenchCase, CaseContext, CustomResult, GoalCheck, UpstreamContext } from './types.ts';

export const LIST_MEMBERS = 10;
const PODS_GVR = { group: '', version: 'v1', resource: 'pods' };
const LIST_NS = 'bench-list';
const LIST_PODS = 1000;
const LATENCY_MS = 20;
const MEM_NS = 'bench-mem';
const MEM_PODS = 10_000;
/** --quick: a smoke run, not the issue's figure */
const MEM_PODS_QUICK = 1_000;
const ACCEPT_JSON = { Accept: 'application/json' };
const ACCEPT_TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const PODS_PATH = '/api/v1/pods';
/** once per pod in a JSON list (benchPod sets it; the fleet keeps it): counts items without parsing */
const ITEM_MARK = '"generateName":"';
/** the issue's targets */
export const LIST_GOAL = { p50VsSlowest: 1.2, rssFactor: 1, rssExtraMiB: 100, isolateMiB: 128 };

function members(ctx: UpstreamContext): SimCluster[] {
  return [...ctx.sims.members.values()];
}

function podIn(namespace: string, i: number): KubeObject {
  const p = benchPod(i);
  p.metadata.namespace = namespace;
  return p;
}

function fill(ctx: UpstreamContext, namespace: string, count: number, latencyMs: number): void {
  for (const sim of members(ctx)) {
    sim.faults.latencyMs = latencyMs;
    for (let i = 0; i < count; i++) sim.create(PODS_GVR, podIn(namespace, i));
  }
}

/** Store-level deletes: SimCluster.remove looks for dependents in every object (quadratic for 10,000). */
function empty(ctx: UpstreamContext, namespace: string, count: number): void {
  const gr = grKey('', 'pods');
  for (const sim of members(ctx)) {
    sim.faults.latencyMs = 0;
    for (let i = 0; i < count; i++) sim.store.delete(gr, objectKey(namespace, benchPod(i).metadata.name!));
    sim.compact();
  }
}

interface Summary {
  name: string;
  n: number;
  p50: number;
  p99: number;
  firstByteP50: number;
  bytes: number;
  items: number;
  fleetCpuMs: number;
  simsCpuMs: number;
  failures: string[];
}

function summarize(name: string, samples: AnswerSample[]): Summary {
  const ok = samples.filter((s) => !s.failed);
  const ms = ok.map((s) => s.ms).sort((a, b) => a - b);
  return {
    name,
    n: ok.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    firstByteP50: median(ok.map((s) => s.firstByteMs)),
    bytes: median(ok.map((s) => s.bytes)),
    items: median(ok.map((s) => s.count)),
    fleetCpuMs: median(ok.map((s) => s.cpuMs.fleet)),
    simsCpuMs: median(ok.map((s) => s.cpuMs.sims)),
    failures: samples.filter((s) => s.failed).map((s) => s.failed!),
  };
}

function cpuPids(ctx: CaseContext): Record<string, number> {
  const pids: Record<string, number> = {};
  if (!ctx.fleetProcess.shared) pids.fleet = ctx.fleetProcess.pid;
  if (!ctx.upstreamProcess.shared) pids.sims = ctx.upstreamProcess.pid;
  return pids;
}

function fleetUrl(ctx: CaseContext): string {
  const f = ctx.env.fleets.merged;
  if (!f) throw new Error('bench: the merged fleet (static members, federation off) is not running');
  return f.url;
}

function memberNames(ctx: CaseContext): string[] {
  return Array.from({ length: LIST_MEMBERS }, (_, i) => `member${i + 1}`).filter(
    (m) => ctx.env.memberUrls[m],
  );
}

// ------------------------------------------------------------------------------------------ merged-list

async function runMergedList(ctx: CaseContext): Promise<CustomResult> {
  const fleet = fleetUrl(ctx);
  const names = memberNames(ctx);
  const direct = (m: string) => `${ctx.env.memberUrls[m]}${PODS_PATH}`;

  // (a) is the slowest cluster: every member listed a few times, directly, the slowest median wins
  const probe = await ctx.load<SequenceResult[]>('sequences', {
    targets: names.map((m) => ({ name: m, steps: [{ url: direct(m), headers: ACCEPT_JSON }] })),
    iterations: ctx.opts.quick ? 1 : 5,
    warmup: 1,
  } satisfies SequenceSpec);
  const perMember = probe.map((r) => ({ name: r.name, p50: summarize(r.name, r.samples).p50 }));
  const slowest = perMember.reduce((a, b) => (b.p50 > a.p50 ? b : a)).name;
  ctx.log(
    `   direct list per member, p50 ms: ${perMember.map((m) => `${m.name} ${m.p50.toFixed(1)}`).join(', ')}; slowest: ${slowest}`,
  );

  const forms = [
    { suffix: '', headers: ACCEPT_JSON },
    { suffix: '-table', headers: ACCEPT_TABLE },
  ];
  const targets: SequenceTarget[] = forms.flatMap(({ suffix, headers }) => [
    { name: `fleet${suffix}`, steps: [{ url: `${fleet}${PODS_PATH}`, headers }] },
    { name: `slowest${suffix}`, steps: [{ url: direct(slowest), headers }] },
    { name: `sequential${suffix}`, steps: names.map((m) => ({ url: direct(m), headers })) },
    {
      name: `parallel${suffix}`,
      steps: names.map((m) => ({ url: direct(m), headers })),
      parallel: true,
    },
  ]);
  // --quick: one answer per target after the warm-up pass (the simulated clusters take ~3 s per pass of
  // the 8 targets, and the canned case measures the same goal without the simulator's cost)
  const iterations = ctx.opts.quick ? 1 : 8;
  const rounds: SequenceResult[][] = [];
  await ctx.profile?.start();
  for (let r = 0; r < ctx.opts.rounds; r++) {
    const res = await ctx.load<SequenceResult[]>('sequences', {
      targets,
      iterations,
      warmup: r === 0 ? 1 : 0,
      cpuPids: cpuPids(ctx),
      countPattern: ITEM_MARK,
    } satisfies SequenceSpec);
    rounds.push(res);
    ctx.log(
      `   round ${r + 1}/${ctx.opts.rounds}  ` +
        res.map((t) => `${t.name} p50 ${summarize(t.name, t.samples).p50.toFixed(0)} ms`).join(', '),
    );
  }
  const profile = await ctx.profile?.stop('lists');

  const all = (name: string) => rounds.flatMap((rs) => rs.find((t) => t.name === name)!.samples);
  const sums = targets.map((t) => summarize(t.name, all(t.name)));
  const byName = (n: string) => sums.find((s) => s.name === n)!;
  const perRoundRatio = (a: string, b: string) =>
    rounds.map(
      (rs) =>
        summarize(a, rs.find((t) => t.name === a)!.samples).p50 /
        summarize(b, rs.find((t) => t.name === b)!.samples).p50,
    );

  const lines: string[] = [];
  lines.push(
    `   ${names.length} simulated clusters × ${LIST_PODS} pods (namespace ${LIST_NS}), each answering ${LATENCY_MS} ms late; ` +
      `fleet ${fleet}${PODS_PATH} (static members, federation off)`,
    `   fleet: one merged GET; slowest: ${slowest}'s own URL; sequential: the ${names.length} clusters' URLs one after another;`,
    `   parallel: the ${names.length} clusters' URLs all at once, unmerged (the floor for any fan-out here: the simulated clusters share one process, so they answer a fan-out one after another)`,
    `   JSON and Table (${ACCEPT_TABLE.Accept}); one answer at a time, targets interleaved; ${ctx.opts.rounds} round(s) × ${iterations} answers each`,
    '',
    table(
      [
        'target',
        'answers',
        'p50 ms',
        'p99 ms',
        'first byte p50',
        'body',
        'items',
        'fleet CPU ms/answer',
        'sims CPU ms/answer',
        'failed',
      ],
      sums.map((s) => [
        s.name,
        String(s.n),
        fmt.ms(s.p50),
        fmt.ms(s.p99),
        fmt.ms(s.firstByteP50),
        fmt.bytes(s.bytes),
        Number.isFinite(s.items) ? String(s.items) : '-',
        fmt.ms(s.fleetCpuMs),
        fmt.ms(s.simsCpuMs),
        String(s.failures.length),
      ]),
    ),
  );
  const ratios: Record<string, { p50: number; p99: number; perRound: number[] }> = {};
  const ratioRows: string[][] = [];
  for (const { suffix } of forms)
    for (const base of ['slowest', 'sequential', 'parallel']) {
      const f = byName(`fleet${suffix}`);
      const b = byName(`${base}${suffix}`);
      const perRound = perRoundRatio(`fleet${suffix}`, `${base}${suffix}`);
      ratios[`fleet${suffix}/${base}${suffix}`] = { p50: f.p50 / b.p50, p99: f.p99 / b.p99, perRound };
      ratioRows.push([
        `fleet${suffix} vs ${base}${suffix}`,
        fmt.x(f.p50 / b.p50),
        `${fmt.x(Math.min(...perRound))}–${fmt.x(Math.max(...perRound))}`,
        fmt.x(f.p99 / b.p99),
        fmt.signedMs(f.p50 - b.p50),
      ]);
    }
  lines.push(
    '',
    table(['comparison', 'p50 ratio', 'per-round p50 ratio', 'p99 ratio', 'added p50'], ratioRows),
  );
  const f = byName('fleet');
  if (Number.isFinite(f.fleetCpuMs))
    lines.push(
      '',
      `   where a fleet answer's ${f.p50.toFixed(0)} ms go: first byte after ${f.firstByteP50.toFixed(0)} ms` +
        ` (every cluster's head must be in: ≥ ${LATENCY_MS} ms of latency plus the slowest cluster's own work),` +
        ` then the items stream; the fleet process spent ${f.fleetCpuMs.toFixed(0)} ms of CPU per answer` +
        ` (${((f.fleetCpuMs / f.p50) * 100).toFixed(0)}% of the wall time), the simulated clusters ${f.simsCpuMs.toFixed(0)} ms together.`,
    );
  if (profile) lines.push(formatProfile(profile));
  const failures = sums.flatMap((s) => s.failures.map((x) => `${s.name}: ${x}`));
  if (failures.length) lines.push('', `   failures (first 3): ${failures.slice(0, 3).join(' | ')}`);

  const goals: GoalCheck[] = forms.map(({ suffix }) => {
    const r = ratios[`fleet${suffix}/slowest${suffix}`]!;
    return {
      goal: `goal 2 (simulated clusters): ${suffix ? 'Table' : 'JSON'} list p50 ≤ ${LIST_GOAL.p50VsSlowest}× the slowest cluster's`,
      ok: Number.isFinite(r.p50) ? r.p50 <= LIST_GOAL.p50VsSlowest : undefined,
      detail: `${fmt.x(r.p50)} (fleet ${fmt.ms(byName(`fleet${suffix}`).p50)} ms vs ${slowest} ${fmt.ms(byName(`slowest${suffix}`).p50)} ms; sequential ${fmt.ms(byName(`sequential${suffix}`).p50)} ms; all ${names.length} in parallel ${fmt.ms(byName(`parallel${suffix}`).p50)} ms)`,
    };
  });
  return {
    text: lines.join('\n'),
    goals,
    figures: {
      clusters: names.length,
      podsPerCluster: LIST_PODS,
      latencyMs: LATENCY_MS,
      slowest,
      perMemberDirectP50: perMember,
      targets: sums,
      ratios,
      profile: profile && {
        path: profile.path,
        busyMs: profile.busyMs,
        byArea: profile.byArea.slice(0, 10),
        topFunctions: profile.topFunctions.slice(0, 10),
      },
    },
    ...(failures.length ? { error: `${failures.length} failed answer(s): ${failures[0]}` } : {}),
  };
}

export const mergedListCase: BenchCase = {
  name: 'merged-list',
  title: `LIST pods across ${LIST_MEMBERS} clusters × ${LIST_PODS} (+${LATENCY_MS} ms each) at the root URL vs the slowest cluster and vs one after another`,
  members: LIST_MEMBERS,
  fleets: ['merged'],
  setup: (ctx) => fill(ctx, LIST_NS, LIST_PODS, LATENCY_MS),
  teardown: (ctx) => empty(ctx, LIST_NS, LIST_PODS),
  run: runMergedList,
  loadActions: { sequences: (spec: SequenceSpec) => runSequences(spec) },
};

// ------------------------------------------------------------------------------------------ merged-list-memory

interface PeakFigures {
  form: string;
  ms: number;
  bytes: number;
  items: number;
  complete: boolean;
  baselineRss: number;
  peakRss: number;
  sampledPeak: number;
  /** CPU time the measured process spent on the list (user + system, from /proc) */
  cpuMs: number;
  failed?: string;
}

/** One list through `url` while the process `pid`'s peak RSS is reset before and read after. */
async function peakDuring(
  ctx: CaseContext,
  pid: number,
  url: string,
  form: string,
  headers: Record<string, string>,
  expectItems: number,
): Promise<PeakFigures> {
  const before = procMemory(pid);
  const reset = resetPeak(pid);
  const sampler = sampleRss(pid, 25);
  const cpu0 = processCpuMs(pid);
  const [res] = await ctx.load<SequenceResult[]>('sequences', {
    targets: [{ name: form, steps: [{ url, headers }] }],
    iterations: 1,
    countPattern: form === 'json' ? ITEM_MARK : '',
    keepTail: 200,
  } satisfies SequenceSpec);
  const cpu1 = processCpuMs(pid);
  const { peak: sampledPeak } = sampler.stop();
  const after = procMemory(pid);
  const s = res!.samples[0]!;
  const tail = res!.tail ?? '';
  const complete = !s.failed && /"metadata":\{"resourceVersion":"[^"]+"[^}]*\}\}\s*$/.test(tail);
  return {
    form,
    ms: s.ms,
    bytes: s.bytes,
    items: s.count,
    complete: complete && (form !== 'json' || s.count === expectItems),
    baselineRss: before?.rss ?? Number.NaN,
    peakRss: reset ? (after?.hwm ?? Number.NaN) : Math.max(sampledPeak, before?.rss ?? 0),
    sampledPeak,
    cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : Number.NaN,
    ...(s.failed ? { failed: s.failed } : {}),
  };
}

interface IsolateHeap {
  /** peak JS heap in use, and with ArrayBuffer backing stores */
  peakUsed: number;
  peakUsedPlusBacking: number;
  /** peak committed heap */
  peakTotal: number;
  samples: number;
}

interface WorkerdFigures {
  started: boolean;
  error?: string;
  pid?: number;
  idleRss?: number;
  /** the isolate's heap when idle (inspector), and its peaks during each run */
  idleHeap?: { usedSize: number; totalSize: number; backingStorageSize: number };
  runs: Array<PeakFigures & { isolate?: IsolateHeap }>;
  inspectorError?: string;
}

async function measureWorkerd(ctx: CaseContext, expectItems: number): Promise<WorkerdFigures> {
  let mf: { ready: Promise<URL>; dispose(): Promise<void>; getInspectorURL(): Promise<URL> } | undefined;
  let cdp: CdpSession | undefined;
  try {
    const { buildWorker, WORKER_COMPATIBILITY } = await import('../../scripts/build-worker.mjs');
    const script = resolve('.cache/bench/worker.js');
    await buildWorker(script);
    const { Miniflare } = await import('miniflare');
    const before = new Set(descendantsNamed(process.pid, 'workerd'));
    // as test/helpers/fleet.ts starts it: the bundle, FLEET_CONFIG, the relay entrypoint bound to itself
    mf = new Miniflare({
      name: 'fleet',
      modules: true,
      scriptPath: script,
      // as wrangler.toml sets them (request.signal aborting, node:crypto)
      ...WORKER_COMPATIBILITY,
      bindings: { FLEET_CONFIG: JSON.stringify(ctx.env.fleetConfigs.merged) },
      serviceBindings: { FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' } },
      host: '127.0.0.1',
      port: 0,
      // the V8 inspector, to read the isolate's own heap (what the 128 MB Workers limit counts)
      inspectorPort: 0,
    });
    const url = (await mf.ready).origin;
    const pid = descendantsNamed(process.pid, 'workerd').find((p) => !before.has(p));
    if (pid === undefined)
      return { started: true, error: 'workerd process not found under this one', runs: [] };
    // warm: the isolate is built on the first request; a small merged list fans out to every cluster
    await ctx.load('sequences', {
      targets: [
        { name: 'warm', steps: [{ url: `${url}/api/v1/namespaces/${LIST_NS}/pods`, headers: ACCEPT_JSON }] },
      ],
      iterations: 2,
    } satisfies SequenceSpec);
    await new Promise((r) => setTimeout(r, 500));
    const idleRss = procMemory(pid)?.rss;
    let inspectorError: string | undefined;
    let idleHeap: WorkerdFigures['idleHeap'];
    try {
      cdp = await CdpSession.connect(await mf.getInspectorURL(), 'core:user:fleet');
      idleHeap = await cdp.heapUsage();
    } catch (e) {
      inspectorError = (e as Error).message;
    }
    // one run: its peak is steady from run to run (127.8 and 130.8 MiB over idle in two runs), and each takes ~15 s
    const heap = cdp?.watchHeap(50);
    const run = await peakDuring(ctx, pid, `${url}${PODS_PATH}`, 'json', ACCEPT_JSON, expectItems);
    const runs: WorkerdFigures['runs'] = [heap ? { ...run, isolate: await heap.stop() } : run];
    return { started: true, pid, idleRss, idleHeap, runs, ...(inspectorError ? { inspectorError } : {}) };
  } catch (e) {
    return { started: false, error: (e as Error).message.split('\n')[0], runs: [] };
  } finally {
    cdp?.close();
    await mf?.dispose().catch(() => {});
  }
}

/** CPU ms per MiB of the answer */
function cpuPerMiB(r: PeakFigures): number {
  return r.bytes > 0 ? r.cpuMs / (r.bytes / MiB) : Number.NaN;
}

/** pods the memory case put into each member (upstream process) */
let memFilled = 0;

async function runMemory(ctx: CaseContext): Promise<CustomResult> {
  const fleet = fleetUrl(ctx);
  const names = memberNames(ctx);
  const perCluster = ctx.opts.quick ? MEM_PODS_QUICK : MEM_PODS;
  const t0 = performance.now();
  await ctx.upstream('fill', { count: perCluster });
  ctx.log(
    `   ${names.length} × ${perCluster} pods written into the simulated clusters in ${((performance.now() - t0) / 1000).toFixed(1)} s` +
      (ctx.opts.quick ? ` (--quick: ${MEM_PODS_QUICK} per cluster, not the issue's ${MEM_PODS})` : ''),
  );
  const expectItems = names.length * perCluster;
  const lines: string[] = [];
  const goals: GoalCheck[] = [];

  // each cluster's own answer: the largest is the yardstick
  const sizes = await ctx.load<SequenceResult[]>('sequences', {
    targets: names.map((m) => ({
      name: m,
      steps: [{ url: `${ctx.env.memberUrls[m]}${PODS_PATH}`, headers: ACCEPT_JSON }],
    })),
    iterations: 1,
  } satisfies SequenceSpec);
  const largest = Math.max(...sizes.map((r) => r.samples[0]?.bytes ?? 0));
  const directMs = median(sizes.map((r) => r.samples[0]?.ms));
  const limit = LIST_GOAL.rssFactor * largest + LIST_GOAL.rssExtraMiB * MiB;

  // Node: the production entry (deploy/node/main.ts bundled as scripts/build-node.mjs does, run by plain
  // node: no tsx in memory), peak reset before each list; then one list through the harness's own fleet
  // process (tsx) for reference
  const runs: Array<PeakFigures & { process: string }> = [];
  const forms: Array<[string, Record<string, string>]> = ctx.opts.quick
    ? [['json', ACCEPT_JSON]]
    : [
        ['json', ACCEPT_JSON],
        ['table', ACCEPT_TABLE],
        ['json', ACCEPT_JSON],
      ];
  const bundled = await startFleetProcess(ctx.env.fleetConfigs.merged);
  try {
    await ctx.load('sequences', {
      targets: [{ name: 'warm', steps: [{ url: `${bundled.url}/api/v1/namespaces/${LIST_NS}/pods` }] }],
      iterations: 2,
    } satisfies SequenceSpec);
    for (const [form, headers] of forms) {
      await new Promise((r) => setTimeout(r, 300));
      const r = await peakDuring(ctx, bundled.pid, `${bundled.url}${PODS_PATH}`, form, headers, expectItems);
      runs.push({ ...r, process: 'bundle' });
      ctx.log(
        `   node (bundle) ${form}: ${fmt.bytes(r.bytes)} in ${(r.ms / 1000).toFixed(1)} s, peak RSS ${fmt.bytes(r.peakRss)}`,
      );
    }
  } finally {
    bundled.stop();
  }
  let heapAfter: NodeJS.MemoryUsage | undefined;
  if (!ctx.opts.quick) {
    await ctx.fleetMemory(true);
    const r = await peakDuring(
      ctx,
      ctx.fleetProcess.pid,
      `${fleet}${PODS_PATH}`,
      'json',
      ACCEPT_JSON,
      expectItems,
    );
    runs.push({ ...r, process: 'harness (tsx)' });
    heapAfter = await ctx.fleetMemory(true);
  }
  const goalRuns = runs.filter((r) => r.process === 'bundle');
  const peak = Math.max(...goalRuns.map((r) => r.peakRss));
  // idle = before the first list (a process keeps the RSS it grew to: later baselines are not idle)
  const baseline = goalRuns[0]?.baselineRss ?? Number.NaN;
  const tsxRun = runs.find((r) => r.process !== 'bundle');

  lines.push(
    `   ${names.length} simulated clusters × ${perCluster} pods (namespace ${MEM_NS}), no added latency; ` +
      `largest single cluster's answer ${fmt.bytes(largest)} (direct, ${directMs.toFixed(0)} ms)`,
    `   bundle: deploy/node/main.ts bundled as \`npm run build:node\` does, run by plain node (pid ${bundled.pid}); ` +
      `harness (tsx): the bench's own fleet process (pid ${ctx.fleetProcess.pid}, TypeScript through tsx, other fleets in it)`,
    `   VmHWM reset before each list (clear_refs), read after; RSS also sampled every 25 ms; a process keeps the RSS` +
      ` it grew to, so "RSS before" of a later list is the previous peak, not idle`,
    '',
    table(
      [
        'node process',
        'form',
        'time s',
        'body',
        'items',
        'complete',
        'RSS before',
        'peak RSS',
        'peak − before',
        'CPU ms/MiB',
      ],
      runs.map((r) => [
        r.process,
        r.form,
        (r.ms / 1000).toFixed(1),
        fmt.bytes(r.bytes),
        r.form === 'json' ? String(r.items) : '-',
        r.complete ? 'yes' : `NO${r.failed ? ` (${r.failed.slice(0, 60)})` : ''}`,
        fmt.bytes(r.baselineRss),
        fmt.bytes(r.peakRss),
        fmt.bytes(r.peakRss - r.baselineRss),
        fmt.ms(cpuPerMiB(r)),
      ]),
    ),
  );
  if (heapAfter)
    lines.push(
      `   harness fleet V8 heap after the list and a full GC: ${fmt.bytes(heapAfter.heapUsed)} (external ${fmt.bytes(heapAfter.external)}): nothing of the list stays`,
    );
  goals.push({
    goal: `goal 2: Node peak RSS ≤ ${LIST_GOAL.rssFactor === 1 ? '' : `${LIST_GOAL.rssFactor}× `}largest single answer + ${LIST_GOAL.rssExtraMiB} MiB (${fmt.bytes(limit)}), production bundle`,
    ok: Number.isFinite(peak) ? peak <= limit : undefined,
    detail:
      `peak ${fmt.bytes(peak)} (idle ${fmt.bytes(baseline)}, so ${fmt.bytes(peak - baseline)} for the list)` +
      (tsxRun ? `; under tsx (the harness's fleet) ${fmt.bytes(tsxRun.peakRss)}` : '') +
      (runs.every((r) => r.complete) ? '' : '; a list did NOT complete'),
  });

  // workerd: the worker bundle in miniflare's workerd, same configuration
  const wd = await measureWorkerd(ctx, expectItems);
  const idleRss = wd.idleRss ?? Number.NaN;
  if (wd.runs.length) {
    lines.push(
      '',
      table(
        [
          'runtime',
          'form',
          'time s',
          'body',
          'items',
          'complete',
          'idle RSS',
          'peak RSS',
          'peak − idle',
          'isolate heap peak',
          'committed peak',
          'CPU ms/MiB',
        ],
        wd.runs.map((r) => [
          'workerd',
          r.form,
          (r.ms / 1000).toFixed(1),
          fmt.bytes(r.bytes),
          String(r.items),
          r.complete ? 'yes' : `NO${r.failed ? ` (${r.failed.slice(0, 60)})` : ''}`,
          fmt.bytes(idleRss),
          fmt.bytes(r.peakRss),
          fmt.bytes(r.peakRss - idleRss),
          fmt.bytes(r.isolate?.peakUsedPlusBacking ?? Number.NaN),
          fmt.bytes(r.isolate?.peakTotal ?? Number.NaN),
          fmt.ms(cpuPerMiB(r)),
        ]),
      ),
      `   workerd process ${wd.pid} (miniflare's child): its RSS holds the runtime itself; "peak − idle" is what the list added` +
        ` (idle = after two small merged lists built the isolate; the VmHWM of later runs counts from the previous peak)`,
      wd.idleHeap
        ? `   isolate heap (V8 inspector, Runtime.getHeapUsage every 50 ms): idle ${fmt.bytes(wd.idleHeap.usedSize)} used, ` +
            `${fmt.bytes(wd.idleHeap.totalSize)} committed; "isolate heap peak" = JS heap in use + ArrayBuffer backing stores`
        : `   isolate heap: not measured (${wd.inspectorError ?? 'no inspector'})`,
    );
  } else lines.push('', `   workerd: not measured (${wd.error ?? 'did not start'})`);
  const wdPeakDelta = Math.max(...wd.runs.map((r) => r.peakRss - idleRss));
  const isolatePeak = Math.max(...wd.runs.map((r) => r.isolate?.peakUsedPlusBacking ?? Number.NaN));
  const complete = wd.runs.every((r) => r.complete);
  const budget = LIST_GOAL.isolateMiB * MiB;
  goals.push({
    goal: `goal 6: workerd streams the ${names.length} × ${perCluster}-pod list within a ${LIST_GOAL.isolateMiB} MiB isolate`,
    ok: wd.runs.length
      ? complete && (Number.isFinite(isolatePeak) ? isolatePeak <= budget : wdPeakDelta <= budget)
      : undefined,
    detail: wd.runs.length
      ? `${complete ? 'complete' : 'INCOMPLETE'}; isolate heap peak ${fmt.bytes(isolatePeak)}; ` +
        `process RSS peak − idle ${fmt.bytes(wdPeakDelta)} (idle ${fmt.bytes(idleRss)}, peak ${fmt.bytes(Math.max(...wd.runs.map((r) => r.peakRss)))})`
      : (wd.error ?? 'not run'),
  });

  // goal 6: the same JSON list, CPU per MiB merged, in workerd (its whole process: the isolate's CPU and the
  // runtime's I/O around it) next to the production Node bundle's
  const nodeCpu = median(goalRuns.filter((r) => r.form === 'json').map(cpuPerMiB));
  const wdCpu = median(wd.runs.map(cpuPerMiB));
  goals.push({
    goal: 'goal 6: workerd CPU per MiB merged, next to Node (same list, same run)',
    ok: undefined,
    info: true,
    detail: `workerd ${fmt.ms(wdCpu)} ms/MiB (process CPU: isolate + runtime I/O) vs Node bundle ${fmt.ms(nodeCpu)} ms/MiB: ${fmt.x(wdCpu / nodeCpu)}`,
  });

  const incomplete = runs.filter((r) => !r.complete);
  return {
    text: lines.join('\n'),
    goals,
    figures: {
      clusters: names.length,
      podsPerCluster: perCluster,
      largestSingleBytes: largest,
      directMs,
      node: { runs, peakRss: peak, baselineRss: baseline, limit, harnessHeapAfter: heapAfter },
      workerd: wd,
    },
    ...(incomplete.length ? { error: `${incomplete.length} fleet list(s) did not complete` } : {}),
  };
}

export const mergedListMemoryCase: BenchCase = {
  name: 'merged-list-memory',
  title: `peak memory merging ${LIST_MEMBERS} × ${MEM_PODS.toLocaleString('en')} pods (--quick: ${MEM_PODS_QUICK.toLocaleString('en')}): the Node fleet, and the worker in workerd`,
  members: LIST_MEMBERS,
  fleets: ['merged'],
  teardown: (ctx) => {
    empty(ctx, MEM_NS, memFilled);
    memFilled = 0;
  },
  run: runMemory,
  upstreamActions: {
    fill(ctx: UpstreamContext, { count }: { count: number }) {
      fill(ctx, MEM_NS, count, 0);
      memFilled = count;
      return null;
    },
  },
  loadActions: { sequences: (spec: SequenceSpec) => runSequences(spec) },
};

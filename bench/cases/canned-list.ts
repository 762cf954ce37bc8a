/**
 * Merged lists against canned upstreams (issue 16, goals 1–3): clusters that answer pre-serialised bytes
 * (bench/lib/canned.ts, processes of their own, 20 ms before each head), so that the baselines measure the
 * network and the load generator, not a simulator:
 *   - slowest: the slowest single cluster's own URL (all are alike; the slowest median of a probe wins);
 *   - parallel: every cluster's URL at once, unmerged (the floor for any fan-out);
 *   - fleet: one merged GET at the root URL of the production Node bundle (bench/lib/fleetproc.ts), static
 *     members pointing at the canned clusters, federation off; its CPU per answer from /proc, its peak RSS
 *     (VmHWM reset before the set).
 *
 * `merged-list-canned`: 10 × 1,000 and 10 × 10,000 pods (--quick: 10 × 2,000 for the second), JSON and
 * Table, plus a watch burst (every cluster writes its canned events at once) through
 * the fleet vs direct, and through the copy-only floor proxy (../lib/floor-watch.mjs) in the same rounds.
 * `scale-curve`: 10 / 50 / 200 / 1,000 clusters for the same 10,000 pods, and 1,000 pods each (--quick leaves
 * out all but 10 × 1,000, 200 × 50 and 1,000 × 10), one table; with --write-docs the same-total points as
 * docs/bench-scale.svg (../lib/scale-svg.ts). BENCH_SCALE_SHAPES=10x1000,200x50 measures only those.
 *
 * BENCH_BASELINE_BUNDLE=<file> (another build of deploy/node/main.ts, say the commit before a change): a
 * second fleet process from it beside the first, asked as `fleet-base` in the same interleaved rounds, so
 * a before/after is one run's noise (its CPU per answer and its ratios are printed next to the fleet's).
 * BENCH_FLEET_BUNDLE=<file> runs the fleet itself from another build instead of this tree's.
 */
import { writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Canned, type CannedReply, cannedFleetConfig, sharedCanned } from '../lib/canned.ts';
import { type FleetProcess, startFleetProcess } from '../lib/fleetproc.ts';
import { judge, type Row33Check } from '../lib/goals33.ts';
import { MiB, procMemory, resetPeak } from '../lib/proc.ts';
import { formatProfile, type ProfileSummary, summarizeProfile } from '../lib/profile.ts';
import { fmt, table } from '../lib/report.ts';
import { scaleSvg } from '../lib/scale-svg.ts';
import { type AnswerSample, runSequences, type SequenceResult, type SequenceSpec } from '../lib/sequence.ts';
import { median, processCpuMs } from '../lib/stats.ts';
import { step } from '../lib/steps.ts';
import { burstFloorClause, burstFloorRow, type FloorRounds } from '../lib/watchfloor.ts';
import type { BenchCase, CaseContext, CustomResult, GoalCheck } from './types.ts';

const LATENCY_MS = 20;
const PODS_PATH = '/api/v1/pods';
const ACCEPT_JSON = { Accept: 'application/json' };
const ACCEPT_TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const ITEM_MARK = '"generateName":"';
export const CANNED_GOAL = {
  p50VsSlowest: 1.2,
  cpuMsPerMiB: 3,
  rssExtraMiB: 100,
  flat: 1.25,
  bytesFlat: 1.05,
};

interface SetResult {
  clusters: number;
  pods: number;
  /** one cluster's answer, bytes */
  single: { json: number; table: number };
  targets: Record<
    string,
    {
      p50: number;
      ttfb: number;
      bytes: number;
      items: number;
      fleetCpuMs: number;
      cannedCpuMs: number;
      n: number;
      failures: string[];
    }
  >;
  /** per round: fleet ÷ baseline p50 */
  perRound: Record<string, number[]>;
  slowest: string;
  idleRss: number;
  peakRss: number;
  profile?: ProfileSummary & {
    path: string;
    shared: boolean;
    base?: ProfileSummary & { path: string; shared: boolean };
  };
  unknownPaths: Record<string, number>;
}

function fleetConfig(ctx: CaseContext, urls: string[]): unknown {
  return cannedFleetConfig(urls, ctx.env.fleetConfigs.merged as Record<string, unknown>);
}

/**
 * `fleet`, `fleet-base` or `floor` (whose CPU is its own process's), or a baseline (whose CPU is the
 * fleet's: ~0)
 */
function summarize(samples: AnswerSample[], name = 'fleet') {
  const ok = samples.filter((s) => !s.failed);
  const cpuKey = name.startsWith('fleet-base') ? 'fleet-base' : name.startsWith('floor') ? 'floor' : 'fleet';
  return {
    n: ok.length,
    p50: median(ok.map((s) => s.ms)),
    /** time to the first body byte */
    ttfb: median(ok.map((s) => s.firstByteMs)),
    bytes: median(ok.map((s) => s.bytes)),
    items: median(ok.map((s) => s.count)),
    fleetCpuMs: median(ok.map((s) => s.cpuMs[cpuKey] ?? Number.NaN)),
    cannedCpuMs: median(
      ok.map((s) => Object.entries(s.cpuMs).reduce((n, [k, v]) => n + (k.startsWith('canned') ? v : 0), 0)),
    ),
    failures: samples.filter((s) => s.failed).map((s) => s.failed!),
  };
}

interface MeasureOpts {
  clusters: number;
  pods: number;
  forms: Array<'json' | 'table'>;
  /**
   * `floor`: ../lib/floor-proxy.mjs in a process of its own, the same upstream client with the bodies only
   * concatenated (no scan): the CPU per MiB no merge in a Node process goes below, in the same rounds
   */
  baselines: Array<'slowest' | 'parallel' | 'floor'>;
  rounds: number;
  iterations: number;
  profileLabel?: string;
  watchEvents?: number;
  /** keep the baseline fleet and the floor proxy running after the set (the watch burst measures them too) */
  keepBase?: boolean;
}

const BASE_BUNDLE = process.env.BENCH_BASELINE_BUNDLE || undefined;
/** watch bursts per target (default: 1 with --quick, else the rounds) */
const BURST_ROUNDS = Number(process.env.BENCH_BURST_ROUNDS) || undefined;
/** the fleet's own build, when not this tree's (e.g. a commit's, beside BENCH_BASELINE_BUNDLE) */
const FLEET_BUNDLE = process.env.BENCH_FLEET_BUNDLE || undefined;
/** where --write-docs puts the scale curve */
const SCALE_SVG = fileURLToPath(new URL('../../docs/bench-scale.svg', import.meta.url));
const FLOOR_PROXY = fileURLToPath(new URL('../lib/floor-proxy.mjs', import.meta.url));
/**
 * BENCH_FLOOR_CLIENT / BENCH_FLOOR_WRITE: how the floor proxy reads and writes (its FLOOR_CLIENT and
 * FLOOR_WRITE, ../lib/floor-proxy.mjs); unset, its defaults (undici's request, 256 KiB pieces)
 */
const FLOOR_ENV: Record<string, string> = {
  ...(process.env.BENCH_FLOOR_CLIENT ? { FLOOR_CLIENT: process.env.BENCH_FLOOR_CLIENT } : {}),
  ...(process.env.BENCH_FLOOR_WRITE ? { FLOOR_WRITE: process.env.BENCH_FLOOR_WRITE } : {}),
};

/** One set: canned clusters served, a fresh fleet in front of them, targets interleaved answer by answer. */
async function measureSet(ctx: CaseContext, canned: Canned, o: MeasureOpts): Promise<Measured> {
  const reply = await step('canned serve', () =>
    canned.serve({
      clusters: o.clusters,
      pods: o.pods,
      latencyMs: LATENCY_MS,
      watchEvents: o.watchEvents,
    }),
  );
  const profiling = !!(ctx.profileDir && o.profileLabel);
  // the fleet, the baseline build's and the floor proxy start side by side (nothing is measured yet)
  const [fleet, base, floor] = await step('fleet processes start', () =>
    Promise.all([
      startFleetProcess(fleetConfig(ctx, reply.urls), {
        inspect: profiling,
        ...(FLEET_BUNDLE ? { bundle: FLEET_BUNDLE } : {}),
      }),
      BASE_BUNDLE
        ? startFleetProcess(fleetConfig(ctx, reply.urls), { inspect: profiling, bundle: BASE_BUNDLE })
        : undefined,
      o.baselines.includes('floor')
        ? startFleetProcess(fleetConfig(ctx, reply.urls), { bundle: FLOOR_PROXY, env: FLOOR_ENV })
        : undefined,
    ]),
  );
  const direct = (i: number) => `${reply.urls[i]}${PODS_PATH}`;
  const names = reply.urls.map((_, i) => `c${i + 1}`);
  // the slowest cluster: a probe of (at most 10 of) them; they are alike, so this only picks the unluckiest
  // (no probe for a set without the `slowest` baseline, nor in --quick: the first cluster stands for it)
  const probeIdx = names.map((_, i) => i).filter((i) => i < 10);
  const probe =
    o.baselines.includes('slowest') && !ctx.opts.quick
      ? await step('probe', () =>
          ctx.load<SequenceResult[]>('sequences', {
            targets: probeIdx.map((i) => ({
              name: names[i]!,
              steps: [{ url: direct(i), headers: ACCEPT_JSON }],
            })),
            iterations: 2,
            warmup: 1,
          } satisfies SequenceSpec),
        )
      : [];
  const slowestAt = probe.reduce(
    (a, b, k) => (summarize(b.samples, b.name).p50 > summarize(probe[a]!.samples, b.name).p50 ? k : a),
    0,
  );
  const slowest = names[probeIdx[slowestAt]!]!;
  const targets: SequenceSpec['targets'] = [];
  for (const form of o.forms) {
    const headers = form === 'json' ? ACCEPT_JSON : ACCEPT_TABLE;
    const sfx = form === 'json' ? '' : '-table';
    targets.push({ name: `fleet${sfx}`, steps: [{ url: `${fleet.url}${PODS_PATH}`, headers }] });
    if (base)
      targets.push({ name: `fleet-base${sfx}`, steps: [{ url: `${base.url}${PODS_PATH}`, headers }] });
    if (o.baselines.includes('slowest'))
      targets.push({ name: `slowest${sfx}`, steps: [{ url: direct(probeIdx[slowestAt]!), headers }] });
    if (o.baselines.includes('parallel'))
      targets.push({
        name: `parallel${sfx}`,
        steps: reply.urls.map((_, i) => ({ url: direct(i), headers })),
        parallel: true,
      });
    if (floor) targets.push({ name: `floor${sfx}`, steps: [{ url: `${floor.url}${PODS_PATH}`, headers }] });
  }
  const cpuPids: Record<string, number> = { fleet: fleet.pid };
  if (base) cpuPids['fleet-base'] = base.pid;
  if (floor) cpuPids.floor = floor.pid;
  canned.pids.forEach((pid, k) => {
    cpuPids[`canned${k}`] = pid;
  });
  // warm the fleet (JIT, connections) before its peak and profile count
  await step('warm-up', () =>
    ctx.load('sequences', {
      targets: targets.filter((t) => t.name.startsWith('fleet') || t.name.startsWith('floor')),
      iterations: 1,
    } satisfies SequenceSpec),
  );
  await new Promise((r) => setTimeout(r, 200));
  const idleRss = procMemory(fleet.pid)?.rss ?? Number.NaN;
  const reset = resetPeak(fleet.pid);
  if (profiling) await Promise.all([fleet.profileStart(), base?.profileStart()]);
  const rounds: SequenceResult[][] = [];
  for (let r = 0; r < o.rounds; r++) {
    const res = await step('measured answers', () =>
      ctx.load<SequenceResult[]>('sequences', {
        targets,
        iterations: o.iterations,
        cpuPids,
        countPattern: ITEM_MARK,
      } satisfies SequenceSpec),
    );
    rounds.push(res);
    ctx.log(
      `   ${o.clusters}×${o.pods} round ${r + 1}/${o.rounds}  ` +
        res.map((t) => `${t.name} ${summarize(t.samples, t.name).p50.toFixed(0)} ms`).join(', '),
    );
  }
  let profile: SetResult['profile'];
  if (profiling) {
    const path = await fleet.profileStop(join(ctx.profileDir!, `${o.profileLabel}.cpuprofile`));
    profile = { path, shared: false, ...summarizeProfile(path) };
    if (base) {
      const bpath = await base.profileStop(join(ctx.profileDir!, `${o.profileLabel}-base.cpuprofile`));
      profile.base = { path: bpath, shared: false, ...summarizeProfile(bpath) };
    }
  }
  if (!o.keepBase) base?.stop();
  if (!o.keepBase) floor?.stop();
  const peakRss = reset ? (procMemory(fleet.pid)?.hwm ?? Number.NaN) : Number.NaN;
  const all = (name: string) => rounds.flatMap((rs) => rs.find((t) => t.name === name)!.samples);
  const sums: SetResult['targets'] = {};
  for (const t of targets) sums[t.name] = summarize(all(t.name), t.name);
  const perRound: Record<string, number[]> = {};
  const p50In = (rs: SequenceResult[], name: string) =>
    summarize(rs.find((x) => x.name === name)!.samples, name).p50;
  for (const t of targets) {
    if (t.name.startsWith('fleet')) continue;
    const sfx = t.name.includes('-table') ? '-table' : '';
    for (const fleetName of [`fleet${sfx}`, ...(base ? [`fleet-base${sfx}`] : [])])
      perRound[`${fleetName}/${t.name}`] = rounds.map((rs) => p50In(rs, fleetName) / p50In(rs, t.name));
  }
  if (base)
    for (const sfx of o.forms.map((f) => (f === 'json' ? '' : '-table')))
      perRound[`fleet${sfx}/fleet-base${sfx}`] = rounds.map(
        (rs) => p50In(rs, `fleet${sfx}`) / p50In(rs, `fleet-base${sfx}`),
      );
  const { unknownPaths } = await canned.counters();
  const set: SetResult = {
    clusters: o.clusters,
    pods: o.pods,
    single: { json: reply.bytes.json, table: reply.bytes.table },
    targets: sums,
    perRound,
    slowest,
    idleRss,
    peakRss,
    profile,
    unknownPaths,
  };
  return {
    set,
    fleet,
    reply,
    ...(o.keepBase && base ? { base } : {}),
    ...(o.keepBase && floor ? { floor } : {}),
  };
}

/** a measured set, with the fleet still running (its caller stops it) and the clusters' URLs */
interface Measured {
  set: SetResult;
  fleet: FleetProcess;
  reply: CannedReply;
  /** the BENCH_BASELINE_BUNDLE fleet, kept running for the watch burst (`keepBase`); its caller stops it */
  base?: FleetProcess;
  /** the floor proxy (../lib/floor-watch.mjs for a watch), kept running for the burst as `base` */
  floor?: FleetProcess;
}

const ratioOf = (s: SetResult, key: string) => median(s.perRound[key] ?? []);
const cpuPerMiB = (s: SetResult, t: string) => {
  const x = s.targets[t];
  return x ? x.fleetCpuMs / (x.bytes / MiB) : Number.NaN;
};

// ------------------------------------------------------------------------------------------ watch burst

interface BurstResult {
  expected: number;
  received: number;
  ms: number;
  failed?: string;
  /** the fleet process's CPU over the burst (/proc; fleets and the floor proxy only) */
  cpuMs?: number;
  /** the client's (the load process's) CPU over the burst */
  clientCpuMs?: number;
}

/**
 * Opens the watches and reads them as a client must: each stream split into lines at its newlines (a line
 * may span chunks), each line decoded and parsed (client-go decodes every event it is sent), MODIFIED
 * events counted until `expect` arrived (or `timeoutMs`), then the watches are closed. The same client
 * work on either side: 10 streams read directly, or the one merged stream. (It used to count the marker
 * `{"type":"MODIFIED"` in the latin1 text of each chunk: no line split, no parse, a client doing less than
 * any real one, which made the direct side ≈ 11 µs an event on this machine.) `parse: false` keeps that
 * count-only client, for the record.
 */
function watchBurst({
  urls,
  expect,
  timeoutMs,
  parse = true,
}: {
  urls: string[];
  expect: number;
  timeoutMs: number;
  parse?: boolean;
}): Promise<BurstResult> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let received = 0;
  const reqs: Array<ReturnType<typeof get>> = [];
  return new Promise((resolve) => {
    let done = false;
    const finish = (failed?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const r of reqs) r.destroy();
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      resolve({
        expected: expect,
        received,
        ms,
        clientCpuMs: (cpu.user + cpu.system) / 1000,
        ...(failed ? { failed } : {}),
      });
    };
    const timer = setTimeout(() => finish(`${received}/${expect} events after ${timeoutMs} ms`), timeoutMs);
    const onLine = (line: Buffer) => {
      if (line.length === 0 || (line.length === 1 && line[0] === 0x0d)) return;
      const ev = JSON.parse(line.toString('utf8')) as { type?: string; object?: { metadata?: unknown } };
      if (ev.type === 'MODIFIED' && ev.object?.metadata) received++;
    };
    const MARK = Buffer.from('{"type":"MODIFIED"');
    for (const url of urls) {
      const req = get(url, { headers: ACCEPT_JSON }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) return finish(`HTTP ${res.statusCode} from ${url}`);
        // the incomplete last line so far, as the chunks it came in
        let carry: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (done) return;
          if (!parse) {
            const s = carry.length ? Buffer.concat([carry[0]!, chunk]) : chunk;
            for (let i = s.indexOf(MARK); i >= 0; i = s.indexOf(MARK, i + 1)) received++;
            carry = [s.subarray(-(MARK.length - 1))];
          } else {
            let from = 0;
            for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
              const piece = chunk.subarray(from, nl);
              if (carry.length) {
                carry.push(piece);
                onLine(Buffer.concat(carry));
                carry = [];
              } else onLine(piece);
              from = nl + 1;
            }
            if (from < chunk.length) carry.push(chunk.subarray(from));
          }
          if (received >= expect) finish();
        });
        // a stream that ends before every event came (the fleet drops a client this far behind): said so
        res.on('end', () => finish(`the stream ended after ${received}/${expect} events`));
        res.on('error', () => {});
      });
      req.on('error', (e) => finish(e.message));
      reqs.push(req);
    }
  });
}

type BurstTarget = 'direct' | 'fleet' | 'fleet-base' | 'floor' | 'direct-count' | 'fleet-count';

/**
 * BENCH_BURST_RV=0: the bursts' watches start from RV 0 (the fleet then treats the canned events as the
 * clusters' initial events, watchinitial.ts, since the canned clusters never end them with a bookmark).
 * By default they start from the list's RV, as an informer's watch does after its list: the canned
 * events are MODIFIED pods with RVs above the list's, changes after it.
 */
const BURST_FROM_ZERO = process.env.BENCH_BURST_RV === '0';

/** the RV of the list at `url` (the fleet's: its composite, which its merged body gives after the items) */
async function listRvOf(url: string): Promise<string> {
  const list = (await (await fetch(url, { headers: ACCEPT_JSON })).json()) as {
    metadata?: { resourceVersion?: string };
  };
  const rv = list.metadata?.resourceVersion;
  if (typeof rv !== 'string') throw new Error(`no resourceVersion in the list of ${url}`);
  return rv;
}

/**
 * `rounds` bursts per target, interleaved round by round (direct, fleet, and the BENCH_BASELINE_BUNDLE
 * fleet when there is one, each from the list's RV: every cluster's canned events at once), each read by
 * the parsing client, then direct and fleet once more by the count-only one. With --profile, the fleets'
 * CPU during their bursts (only theirs: the profiler runs around each fleet burst).
 */
async function measureBurst(ctx: CaseContext, m: Measured, events: number, rounds: number) {
  const expect = m.set.clusters * events;
  const rvs = new Map<string, string>();
  const fleets: Array<[BurstTarget, FleetProcess]> = [['fleet', m.fleet]];
  if (m.base) fleets.push(['fleet-base', m.base]);
  for (const base of [m.reply.urls[0]!, ...fleets.map(([, f]) => f.url)])
    rvs.set(base, BURST_FROM_ZERO ? '0' : await listRvOf(`${base}${PODS_PATH}`));
  // every canned cluster answers the same list (so the same RV)
  const watchUrl = (base: string) =>
    `${base}${PODS_PATH}?watch=true&resourceVersion=${encodeURIComponent(rvs.get(base) ?? rvs.get(m.reply.urls[0]!)!)}`;
  const out: Record<BurstTarget, BurstResult[]> = {
    direct: [],
    fleet: [],
    'fleet-base': [],
    floor: [],
    'direct-count': [],
    'fleet-count': [],
  };
  const profiling = !!ctx.profileDir;
  const burst = (urls: string[], parse = true) =>
    ctx.load<BurstResult>('watchBurst', { urls, expect, timeoutMs: 60_000, parse });
  const measured = async (name: BurstTarget, f: FleetProcess, parse: boolean) => {
    const cpu0 = processCpuMs(f.pid);
    const res = await burst([watchUrl(f.url)], parse);
    const cpu1 = processCpuMs(f.pid);
    out[name].push(cpu0 !== null && cpu1 !== null ? { ...res, cpuMs: cpu1 - cpu0 } : res);
  };
  // one burst each first: JIT and connections warm before anything counts
  for (const [, f] of fleets) await burst([watchUrl(f.url)]);
  // the floor proxy (a copy of each cluster's lines, ../lib/floor-watch.mjs) in the same rounds: what any
  // proxy reaches; its watch takes the canned RV as it is (every canned cluster lists the same)
  if (m.floor) await burst([watchUrl(m.floor.url)]);
  for (let r = 0; r < rounds; r++) {
    const turns: Array<() => Promise<void>> = [
      async () => {
        out.direct.push(await burst(m.reply.urls.map(watchUrl)));
      },
      ...fleets.map(([name, f]) => async () => {
        if (profiling) await f.profileStart();
        await measured(name, f, true);
        if (profiling) await f.profileStop(join(ctx.profileDir!, `watch-burst-${name}-${r + 1}.cpuprofile`));
      }),
      ...(m.floor ? [() => measured('floor', m.floor!, true)] : []),
    ];
    // the order rotates from round to round: no target always runs right after another
    for (let k = 0; k < turns.length; k++) await turns[(k + r) % turns.length]!();
  }
  // the count-only client, for the record (what the goal was measured with before); not in --quick
  if (!ctx.opts.quick) {
    out['direct-count'].push(await burst(m.reply.urls.map(watchUrl), false));
    await measured('fleet-count', m.fleet, false);
  }
  const profiles = profiling
    ? fleets.map(([name]) => {
        const path = join(ctx.profileDir!, `watch-burst-${name}-${rounds}.cpuprofile`);
        return { path, shared: false, ...summarizeProfile(path) };
      })
    : [];
  return { ...out, profiles, from: BURST_FROM_ZERO ? 'RV 0' : "the list's RV" };
}

// ------------------------------------------------------------------------------------------ merged-list-canned

/** a target whose CPU column is its own process's (the fleets and the floor proxy) */
const ownCpu = (name: string) => name.startsWith('fleet') || name.startsWith('floor');

function setRows(s: SetResult): string[][] {
  return Object.entries(s.targets).map(([name, t]) => [
    `${s.clusters}×${s.pods} ${name}`,
    String(t.n),
    fmt.ms(t.p50),
    fmt.ms(t.ttfb),
    fmt.bytes(t.bytes),
    Number.isFinite(t.items) && !name.includes('table') ? String(t.items) : '-',
    ownCpu(name) ? fmt.ms(t.fleetCpuMs) : '-',
    ownCpu(name) ? fmt.ms(t.fleetCpuMs / (t.bytes / MiB)) : '-',
    fmt.ms(t.cannedCpuMs),
    String(t.failures.length),
  ]);
}

async function runCannedList(ctx: CaseContext): Promise<CustomResult> {
  const quick = ctx.opts.quick;
  const rounds = Math.max(quick ? 1 : 3, ctx.opts.rounds);
  // --quick: a smoke run under its 2-minute budget, not the issue's figure
  const bigPods = quick ? 2000 : 10_000;
  const watchEvents = quick ? 500 : 2000;
  const canned = await sharedCanned();
  const sets: SetResult[] = [];
  let burst: Awaited<ReturnType<typeof measureBurst>> | undefined;
  {
    const m = await measureSet(ctx, canned, {
      clusters: 10,
      pods: 1000,
      forms: ['json', 'table'],
      baselines: ['slowest', 'parallel', 'floor'],
      rounds,
      iterations: quick ? 2 : 3,
      profileLabel: 'merged-list-canned-10x1000',
      watchEvents,
      keepBase: true,
    });
    try {
      burst = await step('watch burst', () =>
        measureBurst(ctx, m, watchEvents, BURST_ROUNDS ?? (quick ? 1 : rounds)),
      );
    } finally {
      m.fleet.stop();
      m.base?.stop();
      m.floor?.stop();
    }
    sets.push(m.set);
    const b = await measureSet(ctx, canned, {
      clusters: 10,
      pods: bigPods,
      forms: ['json', 'table'],
      baselines: ['slowest', 'parallel', 'floor'],
      rounds,
      iterations: 1,
    });
    b.fleet.stop();
    sets.push(b.set);
  }
  const [small, big] = sets as [SetResult, SetResult];
  const lines: string[] = [
    `   canned upstreams: ${canned.pids.length} processes serving pre-serialised simulator output (${fmt.bytes(small.single.json)} per 1,000 pods JSON, ${fmt.bytes(small.single.table)} Table), ${LATENCY_MS} ms before each head`,
    `   fleet: production Node bundle, static members → canned clusters, federation off; ${rounds} round(s), targets interleaved answer by answer`,
    '',
    table(
      [
        'set target',
        'answers',
        'p50 ms',
        'first byte ms',
        'body',
        'items',
        'fleet CPU ms',
        'fleet CPU ms/MiB',
        'canned CPU ms',
        'failed',
      ],
      sets.flatMap(setRows),
    ),
    '',
    table(
      ['comparison (median of per-round p50 ratios)', '10×1,000', `10×${bigPods.toLocaleString('en')}`],
      [
        'fleet/slowest',
        'fleet/parallel',
        'fleet-table/slowest-table',
        'fleet-table/parallel-table',
        'parallel/slowest',
      ].map((k) => [
        k,
        ...sets.map((s) =>
          fmt.x(k === 'parallel/slowest' ? s.targets.parallel!.p50 / s.targets.slowest!.p50 : ratioOf(s, k)),
        ),
      ]),
    ),
    `   fleet peak RSS: 10×1,000 ${fmt.bytes(small.peakRss)} (idle ${fmt.bytes(small.idleRss)}); 10×${bigPods} ${fmt.bytes(big.peakRss)} (idle ${fmt.bytes(big.idleRss)}); largest single answer ${fmt.bytes(big.single.json)}`,
  ];
  const unknown = Object.entries({ ...small.unknownPaths, ...big.unknownPaths });
  if (unknown.length)
    lines.push(
      `   paths the canned clusters did not know: ${unknown.map(([k, v]) => `${k} ×${v}`).join(', ')}`,
    );
  const goals: GoalCheck[] = [];
  const floor = small.targets.parallel!.p50 / small.targets.slowest!.p50;
  goals.push({
    goal: 'goal 1: the floor is a floor (canned clusters, 10 in parallel unmerged ÷ the slowest alone)',
    ok: undefined,
    info: true,
    detail: `${fmt.x(floor)} at 10×1,000 (${fmt.ms(small.targets.parallel!.p50)} vs ${fmt.ms(small.targets.slowest!.p50)} ms); ${fmt.x(big.targets.parallel!.p50 / big.targets.slowest!.p50)} at 10×${bigPods}; canned CPU ${fmt.ms(small.targets.parallel!.cannedCpuMs)} ms per parallel answer`,
  });
  for (const s of sets) {
    const r = ratioOf(s, 'fleet/slowest');
    goals.push({
      goal: `goal 2: merged JSON list p50 ≤ ${CANNED_GOAL.p50VsSlowest}× the slowest single cluster, ${s.clusters}×${s.pods.toLocaleString('en')} canned`,
      ok: Number.isFinite(r) ? r <= CANNED_GOAL.p50VsSlowest : undefined,
      detail: `${fmt.x(r)} (fleet ${fmt.ms(s.targets.fleet!.p50)} ms, slowest ${fmt.ms(s.targets.slowest!.p50)} ms; fleet ÷ parallel unmerged ${fmt.x(ratioOf(s, 'fleet/parallel'))}, parallel ${fmt.ms(s.targets.parallel!.p50)} ms; per round ${(s.perRound['fleet/slowest'] ?? []).map((x) => x.toFixed(2)).join(', ')}${s.targets.floor ? `; the floor proxy, no scan: ${fmt.ms(s.targets.floor.p50)} ms, ${fmt.x(s.targets.floor.p50 / s.targets.slowest!.p50)} the slowest` : ''})`,
    });
  }
  for (const [form, t] of [
    ['JSON', 'fleet'],
    ['Table', 'fleet-table'],
  ] as const) {
    const v = median(sets.map((s) => cpuPerMiB(s, t)));
    const f = median(sets.map((s) => cpuPerMiB(s, t.replace('fleet', 'floor'))));
    goals.push({
      goal: `goal 2: fleet CPU ≤ ${CANNED_GOAL.cpuMsPerMiB} ms per MiB merged, ${form}, Node`,
      ok: Number.isFinite(v) ? v <= CANNED_GOAL.cpuMsPerMiB : undefined,
      detail: `${fmt.ms(v)} ms/MiB (${sets.map((s) => `${s.clusters}×${s.pods}: ${fmt.ms(cpuPerMiB(s, t))}`).join(', ')}); floor in the same rounds, the bodies only concatenated by the same upstream client: ${fmt.ms(f)} ms/MiB (${fmt.x(v / f)})`,
    });
  }
  const limit = big.single.json + CANNED_GOAL.rssExtraMiB * MiB;
  goals.push({
    goal: `goal 2: fleet peak RSS ≤ largest single answer + ${CANNED_GOAL.rssExtraMiB} MiB, 10×${bigPods.toLocaleString('en')} canned`,
    ok: Number.isFinite(big.peakRss) ? big.peakRss <= limit : undefined,
    detail: `peak ${fmt.bytes(big.peakRss)} vs ${fmt.bytes(limit)} (idle ${fmt.bytes(big.idleRss)})`,
  });
  if (burst) {
    const rate = (b: BurstResult) => b.received / (b.ms / 1000);
    const f = median(burst.fleet.map(rate));
    const d = median(burst.direct.map(rate));
    const missing = [...burst.fleet, ...burst['fleet-count']].reduce(
      (n, b) => n + (b.expected - b.received),
      0,
    );
    const fc = median(burst['fleet-count'].map(rate));
    const dc = median(burst['direct-count'].map(rate));
    const cpuPerEvent = median(burst.fleet.map((b) => ((b.cpuMs ?? Number.NaN) * 1000) / b.expected));
    const targets = (
      ['direct', 'fleet', 'fleet-base', 'floor', 'direct-count', 'fleet-count'] as const
    ).filter((k) => burst![k].length);
    lines.push(
      '',
      `   watch burst: ${small.clusters} canned clusters each write ${watchEvents} MODIFIED pods at once (watches from ${burst.from}); one merged watch through the fleet vs the ${small.clusters} watched directly; the client splits lines and parses every event (-count: only counts a marker in the bytes)`,
      table(
        [
          'watch',
          'events',
          'received',
          'ms',
          'events/s',
          'proxy CPU ms',
          'proxy CPU µs/event',
          'client CPU µs/event',
        ],
        targets.flatMap((k) =>
          burst![k].map((b) => [
            k,
            String(b.expected),
            String(b.received),
            fmt.ms(b.ms),
            (b.received / (b.ms / 1000)).toFixed(0),
            b.cpuMs === undefined ? '-' : fmt.ms(b.cpuMs),
            b.cpuMs === undefined ? '-' : ((b.cpuMs * 1000) / b.expected).toFixed(1),
            b.clientCpuMs === undefined ? '-' : ((b.clientCpuMs * 1000) / b.expected).toFixed(1),
          ]),
        ),
      ),
    );
    goals.push({
      goal: 'goal 5: watch burst delivered at ≥ 0.9× the direct rate (canned clusters), no event missing',
      ok: Number.isFinite(f / d) ? f / d >= 0.9 && missing === 0 : undefined,
      detail: `${fmt.x(f / d)} (${f.toFixed(0)} vs ${d.toFixed(0)} events/s, medians of ${burst.fleet.length} burst(s), watches from ${burst.from}, the client parsing every event; fleet CPU ${fmt.ms(cpuPerEvent)} µs per event${burst['fleet-count'].length ? `; count-only client: ${fmt.x(fc / dc)}, ${fc.toFixed(0)} vs ${dc.toFixed(0)} events/s` : ''})${missing ? `; ${missing} events MISSING (${[...burst.fleet, ...burst['fleet-count']].find((b) => b.failed)?.failed ?? ''})` : ''}`,
    });
    if (burst['fleet-base'].length) {
      const b = median(burst['fleet-base'].map(rate));
      const perRound = burst.fleet.map((x, k) => rate(x) / rate(burst!['fleet-base'][k]!));
      const cpu = (k: BurstTarget) => median(burst![k].map((x) => x.cpuMs ?? Number.NaN));
      lines.push(
        `   same run, watch burst this build ÷ BENCH_BASELINE_BUNDLE: ${fmt.x(f / b)} (${f.toFixed(0)} vs ${b.toFixed(0)} events/s; per round ${perRound.map((x) => x.toFixed(2)).join(', ')}); fleet CPU per burst ${fmt.ms(cpu('fleet'))} vs ${fmt.ms(cpu('fleet-base'))} ms (${fmt.x(cpu('fleet') / cpu('fleet-base'))})`,
      );
    }
    for (const p of burst.profiles) lines.push(formatProfile(p));
  }
  if (small.profile) lines.push(formatProfile(small.profile));
  if (small.profile?.base) lines.push('   baseline bundle (fleet-base):', formatProfile(small.profile.base));
  if (BASE_BUNDLE)
    lines.push(
      `   same run, this build ÷ BENCH_BASELINE_BUNDLE: p50 ${sets.map((s) => `${s.clusters}×${s.pods} ${fmt.x(ratioOf(s, 'fleet/fleet-base'))}`).join(', ')}; fleet CPU ${sets.map((s) => `${fmt.ms(s.targets.fleet!.fleetCpuMs)} vs ${fmt.ms(s.targets['fleet-base']!.fleetCpuMs)} ms`).join(', ')}`,
    );
  const failures = sets.flatMap((s) =>
    Object.entries(s.targets).flatMap(([n, t]) => t.failures.map((f) => `${n}: ${f}`)),
  );
  const issue33 = cannedRows33(
    sets,
    burst && { fleet: burst.fleet, direct: burst.direct, floor: burst.floor },
  );
  return {
    text: lines.join('\n'),
    goals,
    issue33,
    figures: {
      sets: sets.map((s) => ({
        ...s,
        profile: s.profile && {
          path: s.profile.path,
          busyMs: s.profile.busyMs,
          topFunctions: s.profile.topFunctions.slice(0, 10),
        },
      })),
      burst,
    },
    ...(failures.length ? { error: `${failures.length} failed answer(s): ${failures[0]}` } : {}),
  };
}

/** Issue 33's rows this case measures: each fleet figure ÷ the floor proxy's or the parallel reads', same rounds. */
function cannedRows33(
  sets: SetResult[],
  burst: { fleet: BurstResult[]; direct: BurstResult[]; floor: BurstResult[] } | undefined,
): Row33Check[] {
  const rows: Row33Check[] = [];
  const shape = (s: SetResult) => `${s.clusters}×${s.pods.toLocaleString('en')} canned`;
  const perRound = (s: SetResult, k: string) => (s.perRound[k] ?? []).map((x) => x.toFixed(2)).join(', ');
  for (const s of sets) {
    for (const [row, key, limit] of [
      ['json-floor', 'fleet/floor', 1.1],
      ['table-floor', 'fleet-table/floor-table', 1.15],
    ] as const) {
      const [f, b] = key.split('/') as [string, string];
      const r = ratioOf(s, key);
      rows.push({
        row,
        where: shape(s),
        ratio: r,
        ok: judge(r, limit),
        detail: `p50 ${fmt.ms(s.targets[f]?.p50 ?? Number.NaN)} vs ${fmt.ms(s.targets[b]?.p50 ?? Number.NaN)} ms, median of per-round ratios ${perRound(s, key)}`,
      });
    }
    for (const [row, t, limit] of [
      ['cpu-json-floor', 'fleet', 1.2],
      ['cpu-table-floor', 'fleet-table', 1.3],
    ] as const) {
      const v = cpuPerMiB(s, t);
      const f = cpuPerMiB(s, t.replace('fleet', 'floor'));
      rows.push({
        row,
        where: shape(s),
        ratio: v / f,
        ok: judge(v / f, limit),
        detail: `${fmt.ms(v)} vs ${fmt.ms(f)} ms/MiB, medians over the answers`,
      });
    }
  }
  const small = sets.find((s) => s.clusters === 10 && s.pods === 1000);
  if (small) {
    const r = ratioOf(small, 'fleet/parallel');
    rows.push({
      row: 'json-parallel',
      where: shape(small),
      ratio: r,
      ok: judge(r, 1.5),
      detail: `p50 ${fmt.ms(small.targets.fleet!.p50)} vs ${fmt.ms(small.targets.parallel!.p50)} ms, per round ${perRound(small, 'fleet/parallel')}`,
    });
  }
  if (burst) {
    const rate = (b: BurstResult) => b.received / (b.ms / 1000);
    const f = median(burst.fleet.map(rate));
    const d = median(burst.direct.map(rate));
    const where = `${small?.clusters ?? 10} canned clusters`;
    // the floor proxy's bursts ran in the same rounds (round k of each back to back): paired ratios
    const rounds: FloorRounds = {
      direct: burst.direct.map(rate),
      fleet: burst.fleet.map(rate),
      floor: burst.floor.map(rate),
    };
    rows.push({
      row: 'burst',
      where,
      ratio: f / d,
      ok: judge(f / d, 0.9, true),
      detail: `${f.toFixed(0)} vs ${d.toFixed(0)} events/s, medians of ${burst.fleet.length} burst(s)${burst.floor.length ? `; ${burstFloorClause(rounds)}` : ''}`,
    });
    if (burst.floor.length) rows.push(burstFloorRow(where, rounds));
  }
  return rows;
}

export const cannedListCase: BenchCase = {
  name: 'merged-list-canned',
  title:
    'LIST pods across 10 canned clusters (pre-serialised, +20 ms) × 1,000 and × 10,000: fleet vs slowest vs parallel; CPU per MiB; peak RSS; watch burst',
  run: runCannedList,
  // the canned processes build their base data while the harness starts (shared with scale-curve)
  prestart: () => sharedCanned(),
  loadActions: { sequences: (spec: SequenceSpec) => runSequences(spec), watchBurst },
};

// ------------------------------------------------------------------------------------------ scale-curve

async function runScale(ctx: CaseContext): Promise<CustomResult> {
  const quick = ctx.opts.quick;
  const rounds = Math.max(quick ? 1 : 3, ctx.opts.rounds);
  const shapes: Array<[number, number, string]> = [
    [10, 1000, 'same total'],
    ...(quick ? [] : ([[50, 200, 'same total']] as Array<[number, number, string]>)),
    [200, 50, 'same total'],
    [1000, 10, 'same total'],
    ...(quick
      ? []
      : ([
          [50, 1000, '1,000 each'],
          [200, 1000, '1,000 each'],
        ] as Array<[number, number, string]>)),
  ];
  const only = process.env.BENCH_SCALE_SHAPES?.split(',').map((x) => x.trim());
  const canned = await sharedCanned();
  const sets: Array<SetResult & { shape: string }> = [];
  for (const [clusters, pods, shape] of shapes) {
    if (only && !only.includes(`${clusters}x${pods}`)) continue;
    // its own 10 × 1,000 even in --quick: merged-list-canned's (its fleet warmed by Table answers too) spent
    // 17-35% less CPU per answer in the same runs, which moved the per-item growth rows
    const m = await measureSet(ctx, canned, {
      clusters,
      pods,
      forms: ['json'],
      // the floor at every shape: what one HTTP exchange per cluster costs a Node process with no merge
      // at all, so the per-item growth the fleet is asked for is set beside the floor's own
      baselines: ['parallel', 'floor'],
      rounds,
      // --quick: one answer at 1,000 clusters (its fan-out costs a quick run most: 16.7 s CPU with two, 5.9 without the point)
      iterations: clusters * pods > 50_000 || (quick && clusters >= 1000) ? 1 : 2,
      profileLabel: `scale-curve-${clusters}x${pods}`,
    });
    m.fleet.stop();
    sets.push({ ...m.set, shape });
  }
  const items = (s: SetResult) => s.clusters * s.pods;
  const rows = sets.flatMap((s) =>
    (BASE_BUNDLE ? ['fleet', 'fleet-base', 'floor'] : ['fleet', 'floor']).map((name) => {
      const f = s.targets[name]!;
      return [
        `${s.clusters}×${s.pods}${name === 'fleet' ? '' : name === 'floor' ? ' floor' : ' (base)'}`,
        s.shape,
        fmt.ms(f.p50),
        fmt.ms(f.ttfb),
        fmt.ms(s.targets.parallel!.p50),
        fmt.x(ratioOf(s, `${name}/parallel`)),
        fmt.ms(f.fleetCpuMs),
        ((f.fleetCpuMs * 1000) / items(s)).toFixed(1),
        fmt.bytes(f.bytes),
        (f.bytes / items(s)).toFixed(0),
        // peak and idle RSS are the fleet's (the floor's are not read)
        name === 'floor' ? '-' : fmt.bytes(s.peakRss),
        name === 'floor' ? '-' : fmt.bytes(s.peakRss - s.idleRss),
        fmt.bytes(s.single.json),
      ];
    }),
  );
  const lines = [
    `   canned clusters (+${LATENCY_MS} ms), JSON; ${rounds} round(s); fleet ÷ parallel = median of per-round p50 ratios; floor: ../lib/floor-proxy.mjs (${FLOOR_ENV.FLOOR_CLIENT ?? 'request'}:${FLOOR_ENV.FLOOR_WRITE ?? 'piece'}), every cluster asked, the bodies only concatenated, its own process's CPU`,
    '',
    table(
      [
        'clusters×pods',
        'shape',
        'fleet p50 ms',
        'first byte ms',
        'parallel p50 ms',
        'fleet ÷ parallel',
        'fleet CPU ms',
        'CPU µs/item',
        'bytes out',
        'bytes/item',
        'peak RSS',
        'peak − idle',
        'one answer',
      ],
      rows,
    ),
    quick ? '   (--quick: 10, 200 and 1,000 clusters only; 50×200, 50×1,000 and 200×1,000 left out)' : '',
  ];
  const curve = sets.filter((s) => s.shape === 'same total');
  if (ctx.opts.writeDocs && curve.length > 1) {
    const svg = scaleSvg(
      curve.map((s) => ({
        clusters: s.clusters,
        items: items(s),
        fleetMs: s.targets.fleet!.p50,
        parallelMs: s.targets.parallel!.p50,
        cpuMs: s.targets.fleet!.fleetCpuMs,
        memMiB: (s.peakRss - s.idleRss) / MiB,
      })),
      `npm run bench -- --only=scale-curve --write-docs${quick ? ' --quick' : ''}: canned clusters (+${LATENCY_MS} ms), JSON, ${curve[0]!.clusters * curve[0]!.pods} pods in all, ${rounds} round(s), ${new Date().toISOString().slice(0, 10)}`,
    );
    writeFileSync(SCALE_SVG, svg);
    lines.push(`   wrote ${SCALE_SVG}`);
  }
  for (const s of sets) {
    if (s.profile) lines.push(`   profile ${s.clusters}×${s.pods}:`, formatProfile(s.profile));
    if (s.profile?.base)
      lines.push(`   profile ${s.clusters}×${s.pods} (base):`, formatProfile(s.profile.base));
  }
  const by = (c: number, p: number) => sets.find((s) => s.clusters === c && s.pods === p);
  const a = by(10, 1000);
  const z = by(200, 50);
  const k = by(1000, 10);
  const cpuItem = (s: SetResult, name = 'fleet') => (s.targets[name]?.fleetCpuMs ?? Number.NaN) / items(s);
  const bytesItem = (s: SetResult) => s.targets.fleet!.bytes / items(s);
  if (!a || !z) return { text: lines.join('\n'), goals: [], figures: { sets } };
  const growth = (f: (s: SetResult) => number) => f(z) / f(a);
  if (BASE_BUNDLE) {
    // the 1,000-cluster point too, when measured: the issue's second per-item row
    const path = (name: string) =>
      [a, z, ...(k ? [k] : [])].map((s) => (cpuItem(s, name) * 1000).toFixed(1)).join(' → ');
    const grows = (name: string) =>
      [z, ...(k ? [k] : [])].map((s) => fmt.x(cpuItem(s, name) / cpuItem(a, name))).join(', ');
    lines.push(
      `   same run, BENCH_BASELINE_BUNDLE: CPU per item 10 → 200${k ? ' → 1,000' : ''} clusters ${path('fleet-base')} µs (${grows('fleet-base')}); this build ${path('fleet')} µs (${grows('fleet')})`,
    );
  }
  const goals: GoalCheck[] = [
    {
      goal: `goal 3: fleet ÷ parallel stays flat, 10 → 200 clusters, same 10,000 pods (≤ ${CANNED_GOAL.flat}× growth)`,
      ok: Number.isFinite(growth((s) => ratioOf(s, 'fleet/parallel')))
        ? growth((s) => ratioOf(s, 'fleet/parallel')) <= CANNED_GOAL.flat
        : undefined,
      detail: `${fmt.x(ratioOf(a, 'fleet/parallel'))} → ${fmt.x(ratioOf(z, 'fleet/parallel'))}`,
    },
    {
      goal: `goal 3: fleet CPU per item does not grow with clusters, 10 → 200 (≤ ${CANNED_GOAL.flat}×)`,
      ok: Number.isFinite(growth(cpuItem)) ? growth(cpuItem) <= CANNED_GOAL.flat : undefined,
      detail: `${(cpuItem(a) * 1000).toFixed(1)} → ${(cpuItem(z) * 1000).toFixed(1)} µs/item (${fmt.x(growth(cpuItem))})`,
    },
    {
      goal: `goal 3: bytes per item do not grow with clusters, 10 → 200 (≤ ${CANNED_GOAL.bytesFlat}×)`,
      ok: growth(bytesItem) <= CANNED_GOAL.bytesFlat,
      detail: `${bytesItem(a).toFixed(0)} → ${bytesItem(z).toFixed(0)} bytes/item (${fmt.x(growth(bytesItem))}; an item's RV is its own cluster's, src/merge/rv/codec.ts single form)`,
    },
  ];
  const widest = sets.reduce((m, s) => (s.clusters * s.pods > m.clusters * m.pods ? s : m));
  const limit = widest.single.json + CANNED_GOAL.rssExtraMiB * MiB;
  goals.push({
    goal: `goal 3: memory grows with the widest answer, not the sum (peak − idle ≤ one answer + ${CANNED_GOAL.rssExtraMiB} MiB at ${widest.clusters}×${widest.pods})`,
    ok: Number.isFinite(widest.peakRss) ? widest.peakRss - widest.idleRss <= limit : undefined,
    detail: `${fmt.bytes(widest.peakRss - widest.idleRss)} vs ${fmt.bytes(limit)} (merged body ${fmt.bytes(widest.targets.fleet!.bytes)})`,
  });
  const issue33: Row33Check[] = [];
  const µs = (x: number) => (x * 1000).toFixed(1);
  for (const [row, to] of [
    ['cpu-item-200', z],
    ['cpu-item-1000', k],
  ] as const) {
    if (!to) continue;
    const g = cpuItem(to) / cpuItem(a);
    // the floor's own growth over the same shapes: a goal below it is below any proxy of one HTTP exchange per cluster
    const fg = to.targets.floor && a.targets.floor ? cpuItem(to, 'floor') / cpuItem(a, 'floor') : Number.NaN;
    issue33.push({
      row,
      where: `10×1,000 → ${to.clusters.toLocaleString('en')}×${to.pods} canned`,
      ratio: g,
      ok: judge(g, CANNED_GOAL.flat),
      detail: `${µs(cpuItem(a))} → ${µs(cpuItem(to))} µs/item; floor proxy ${µs(cpuItem(a, 'floor'))} → ${µs(cpuItem(to, 'floor'))} µs/item (${fmt.x(fg)}); fleet ÷ floor ${fmt.x(cpuItem(a) / cpuItem(a, 'floor'))} → ${fmt.x(cpuItem(to) / cpuItem(to, 'floor'))} (growth ${fmt.x(g / fg)}); fleet ÷ parallel ${fmt.x(ratioOf(a, 'fleet/parallel'))} → ${fmt.x(ratioOf(to, 'fleet/parallel'))}`,
    });
  }
  const floorAt = sets.filter((s) => s.shape === 'same total' && s.targets.floor);
  if (floorAt.length > 1)
    goals.push({
      goal: 'goal 3 (information): the floor proxy’s own CPU per item over the same shapes (one HTTP exchange per cluster, no merge)',
      ok: undefined,
      info: true,
      detail: floorAt
        .map(
          (s) =>
            `${s.clusters}×${s.pods} ${(cpuItem(s, 'floor') * 1000).toFixed(1)} µs (${fmt.x(cpuItem(s, 'floor') / cpuItem(floorAt[0]!, 'floor'))}; fleet ${(cpuItem(s) * 1000).toFixed(1)}, ${fmt.x(cpuItem(s) / cpuItem(s, 'floor'))} the floor)`,
        )
        .join(', '),
    });
  if (k)
    goals.push({
      goal: `goal 3: fleet CPU per item does not grow with clusters, 10 → 1,000 (≤ ${CANNED_GOAL.flat}×)`,
      ok: judge(cpuItem(k) / cpuItem(a), CANNED_GOAL.flat),
      detail: `${(cpuItem(a) * 1000).toFixed(1)} → ${(cpuItem(k) * 1000).toFixed(1)} µs/item (${fmt.x(cpuItem(k) / cpuItem(a))})`,
    });
  return { text: lines.join('\n'), goals, issue33, figures: { sets } };
}

export const scaleCurveCase: BenchCase = {
  name: 'scale-curve',
  title:
    'merged JSON list over 10 / 50 / 200 / 1,000 canned clusters: same 10,000 pods, and 1,000 each; --write-docs: docs/bench-scale.svg',
  run: runScale,
  prestart: () => sharedCanned(),
  loadActions: { sequences: (spec: SequenceSpec) => runSequences(spec) },
};

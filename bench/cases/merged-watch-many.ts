/**
 * 10,000 concurrent merged watches in one fleet process (issue 16, goal 5), over 3 simulated clusters.
 *
 * Over HTTP/1.1 every merged watch holds one upstream connection per cluster: 10,000 merged watches are
 * 30,000 upstream sockets plus 10,000 client sockets in the fleet, past this machine's 20,000 descriptors
 * per process (and the simulated clusters' process would hold 30,000 more). kube-apiserver speaks HTTP/2
 * and client-go multiplexes every watch of a host over one connection; so does the fleet with
 * FLEET_UPSTREAM_HTTP2 (src/platform/node.ts). Here the simulated clusters are served over h2c too
 * (bench/lib/h2c.ts), a fleet process of the production bundle is started with FLEET_UPSTREAM_HTTP2=h2c,
 * and the watches are opened in two steps: 1,000 first (memory per idle watch at the size of the
 * merged-watch case), then the rest. Then events at 1,000/s over all of them, each one accounted for
 * (bench/lib/watchers.ts), and the close: every upstream stream must end with its merged watch.
 *
 * `--quick` opens 500 (the memory per watch and the accounting, not the scale); BENCH_MANY_WATCHES=N sets the
 * number.
 */
import { join } from 'node:path';
import { startFleetProcess } from '../lib/fleetproc.ts';
import { type H2cServer, serveH2c } from '../lib/h2c.ts';
import { heapOwners } from '../lib/heapsnap.ts';
import { procMemory } from '../lib/proc.ts';
import { fmt, table } from '../lib/report.ts';
import { type OpenResult, type StopResult, watchersState } from '../lib/watchers.ts';
import {
  CM_GVR,
  CM_NAME,
  type DriveResult,
  type DriveSpec,
  drive,
  MEMBERS,
  nsOf,
  sims,
  WATCH_GOAL,
} from './merged-watch.ts';
import { FLEET_BUNDLE, MEMORY_AB, memoryAB } from './merged-watch-fleet.ts';
import type { BenchCase, CaseContext, CustomResult, GoalCheck, UpstreamContext } from './types.ts';

const FIRST = 1000;
const OPEN_TIMEOUT_MS = 60_000;

// ------------------------------------------------------------------------------------------ upstream side

const servers = new Map<string, H2cServer>();
let created = 0;

/** one ConfigMap per watch and cluster; the history is compacted as it goes (past 20,000 the simulator compacts on every write) */
function prepare(ctx: UpstreamContext, { watchers }: { watchers: number }) {
  for (const sim of sims(ctx)) {
    sim.options.bookmarkIntervalMs = 60_000;
    for (let i = 0; i < watchers; i++) {
      sim.create(CM_GVR, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CM_NAME, namespace: nsOf('m', i) },
        data: { t: '0', seq: '0' },
      });
      if (i % 5000 === 4999) sim.compact();
    }
    sim.compact();
  }
  created = watchers;
  return null;
}

const upstreamActions = {
  prepare,
  async h2c(ctx: UpstreamContext) {
    const out: Record<string, string> = {};
    for (const sim of sims(ctx)) {
      const s = servers.get(sim.name) ?? (await serveH2c((req) => sim.fetch(req)));
      servers.set(sim.name, s);
      out[sim.name] = s.url;
    }
    return out;
  },
  streams(ctx: UpstreamContext) {
    return Object.fromEntries(
      sims(ctx).map((s) => [
        s.name,
        {
          streams: servers.get(s.name)?.streams() ?? 0,
          sessions: servers.get(s.name)?.sessions() ?? 0,
          watches: s.openWatches(),
        },
      ]),
    );
  },
  drive,
};

async function teardown(ctx: UpstreamContext): Promise<void> {
  for (const s of servers.values()) await s.close();
  servers.clear();
  for (const sim of sims(ctx)) {
    sim.options.bookmarkIntervalMs = 1000;
    for (let i = 0; i < created; i++) {
      sim.remove(CM_GVR, nsOf('m', i), CM_NAME);
      if (i % 5000 === 4999) sim.compact();
    }
    sim.compact();
  }
  created = 0;
}

// ------------------------------------------------------------------------------------------ the case

/**
 * The case, then with BENCH_BASELINE_BUNDLE the idle memory of the first set A/B against that build over
 * the same h2c upstreams (./merged-watch-fleet.ts; BENCH_WATCH_AB_ONLY=1: that alone).
 */
async function runMany(ctx: CaseContext): Promise<CustomResult> {
  const W = Number(process.env.BENCH_MANY_WATCHES) || (ctx.opts.quick ? 500 : 10_000);
  await ctx.upstream('prepare', { watchers: W });
  const urls = await ctx.upstream<Record<string, string>>('h2c');
  let res: CustomResult = { text: '', goals: [], figures: {} };
  if (!(MEMORY_AB && process.env.BENCH_WATCH_AB_ONLY)) res = await measureMany(ctx, W, urls);
  if (MEMORY_AB) {
    const n = Math.min(FIRST, W);
    const ab = await memoryAB(
      ctx,
      MEMBERS,
      (base, rv) =>
        Array.from(
          { length: n },
          (_, i) => `${base}/api/v1/namespaces/${nsOf('m', i)}/configmaps?watch=true&resourceVersion=${rv}`,
        ),
      {
        timeoutMs: OPEN_TIMEOUT_MS,
        concurrency: 500,
        rounds: Math.max(3, ctx.opts.rounds),
        reach: { servers: urls, env: { FLEET_UPSTREAM_HTTP2: 'h2c' } },
        label: 'many-ab',
      },
    );
    res.text += `\n   (HTTP/2 upstreams, ${n} merged watches)${ab.lines.join('\n')}`;
    res.goals.push({
      goal: 'goal 5: memory per idle merged watch over HTTP/2 upstreams, this build ÷ BENCH_BASELINE_BUNDLE (same run)',
      ok: undefined,
      info: true,
      detail: fmt.x(ab.ratio),
    });
    res.figures = { ...(res.figures as object), memoryAB: ab.figures };
  }
  return res;
}

async function measureMany(ctx: CaseContext, W: number, urls: Record<string, string>): Promise<CustomResult> {
  const first = Math.min(FIRST, W);
  const config = structuredClone(ctx.env.fleetConfigs.merged) as unknown as {
    members: { clusters: Array<{ name: string; server: string }> };
  };
  // the members served over h2c only: a run that prepared more clusters for other cases (a full run's
  // merged lists) must not hand h2c prior knowledge to HTTP/1.1 servers (every watch warned "Protocol error")
  config.members.clusters = config.members.clusters
    .filter((c) => urls[c.name] !== undefined)
    .map((c) => ({ ...c, server: urls[c.name]! }));
  const fleet = await startFleetProcess(config, {
    inspect: true,
    env: { FLEET_UPSTREAM_HTTP2: 'h2c' },
    ...(FLEET_BUNDLE ? { bundle: FLEET_BUNDLE } : {}),
  });
  const lines: string[] = [];
  const goals: GoalCheck[] = [];
  try {
    const list = await fetch(`${fleet.url}/api/v1/configmaps?limit=1`, {
      headers: { Accept: 'application/json' },
    });
    const rv = ((await list.json()) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (!rv) throw new Error(`list through the fleet: HTTP ${list.status}, no resourceVersion`);
    const url = (i: number) =>
      `${fleet.url}/api/v1/namespaces/${nsOf('m', i)}/configmaps?watch=true&resourceVersion=${rv}`;
    const settled = async () => {
      await fleet.memory(true);
      await new Promise((r) => setTimeout(r, 500));
      const heap = await fleet.memory(true);
      return { heap, rss: procMemory(fleet.pid)?.rss ?? Number.NaN };
    };
    const m0 = await settled();
    // with --profile: where an idle merged watch's heap goes, by holder (bench/lib/heapsnap.ts)
    const snap = async (label: string) =>
      ctx.profileDir
        ? fleet.heapSnapshot(join(ctx.profileDir, `merged-watch-many-${label}.heapsnapshot`))
        : undefined;
    const snap0 = await snap('idle');
    const open = (from: number, to: number) =>
      ctx.load<OpenResult>('open', {
        key: 'many',
        urls: Array.from({ length: to - from }, (_, k) => url(from + k)),
        timeoutMs: OPEN_TIMEOUT_MS,
        concurrency: 500,
        offset: from,
      });
    const o1 = await open(0, first);
    ctx.log(`   ${o1.opened}/${first} merged watches open in ${(o1.ms / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, ctx.opts.quick ? 1000 : 2000));
    const m1 = await settled();
    const snap1 = await snap(`with-${o1.opened}`);
    const owners = snap0 && snap1 ? heapOwners(snap0, snap1, 30) : undefined;
    const o2 = W > first ? await open(first, W) : { ...o1, opened: 0, failed: 0, openedIdx: [], ms: 0 };
    if (W > first)
      ctx.log(`   ${o1.opened + o2.opened}/${W} merged watches open (+${(o2.ms / 1000).toFixed(1)} s)`);
    // (--quick opens no second set: the row is the first set's)
    if (W > first) await new Promise((r) => setTimeout(r, 3000));
    const m2 = W > first ? await settled() : m1;
    const upstream =
      await ctx.upstream<Record<string, { streams: number; sessions: number; watches: number }>>('streams');
    const opened = o1.opened + o2.opened;
    const per = (a: typeof m0, b: typeof m0, n: number) => ({
      rss: (b.rss - a.rss) / Math.max(1, n),
      heap: (b.heap.heapUsed + b.heap.external - a.heap.heapUsed - a.heap.external) / Math.max(1, n),
    });
    const at1 = per(m0, m1, o1.opened);
    const atW = per(m0, m2, opened);

    // events at the merged-watch case's rate over every open watch, each one accounted for
    const phaseS = ctx.opts.quick ? 2 : 5;
    await ctx.load('record');
    const d = await ctx.upstream<DriveResult>('drive', {
      set: 'm',
      clusters: MEMBERS,
      watchers: [...o1.openedIdx, ...o2.openedIdx],
      rate: WATCH_GOAL.rate,
      durationS: phaseS,
    } satisfies DriveSpec);
    const s = await ctx.load<StopResult>('stop', {
      key: 'many',
      written: d.written,
      endMs: d.endMs,
      deadlineMs: 20_000,
    });
    ctx.log(
      `   events: ${s.received}/${s.expected}, delay p50 ${fmt.ms(s.p50 ?? Number.NaN)} ms, p99 ${fmt.ms(s.p99 ?? Number.NaN)} ms` +
        (s.received < s.expected
          ? ` — missing: ${s.lost} lost, ${s.ended} on ended watches, ${s.late} late`
          : ''),
    );
    await ctx.load('close', { key: 'many' });
    // every upstream stream ends with its merged watch
    let after = upstream;
    for (let t = 0; t < 100; t++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await ctx.upstream('streams');
      if (Object.values(after).every((x) => x.streams === 0)) break;
    }
    const left = Object.values(after).reduce((n, x) => n + x.streams, 0);

    lines.push(
      `   ${opened}/${W} merged watches open in one fleet process (production bundle, FLEET_UPSTREAM_HTTP2=h2c) over ${MEMBERS.length} simulated clusters served over h2c;`,
      `   upstream with all open: ${Object.entries(upstream)
        .map(([k, v]) => `${k} ${v.streams} streams over ${v.sessions} connection(s)`)
        .join(', ')}`,
      '',
      table(
        ['merged watches open', 'fleet RSS', 'V8 heap + external', 'RSS per watch', 'heap per watch'],
        [
          ['0', fmt.bytes(m0.rss), fmt.bytes(m0.heap.heapUsed + m0.heap.external), '-', '-'],
          [
            String(o1.opened),
            fmt.bytes(m1.rss),
            fmt.bytes(m1.heap.heapUsed + m1.heap.external),
            fmt.bytes(at1.rss),
            fmt.bytes(at1.heap),
          ],
          [
            String(opened),
            fmt.bytes(m2.rss),
            fmt.bytes(m2.heap.heapUsed + m2.heap.external),
            fmt.bytes(atW.rss),
            fmt.bytes(atW.heap),
          ],
        ],
      ),
      `   (after full GCs; RSS per watch = growth over the fleet idle ÷ watches open)`,
      `   events at ${WATCH_GOAL.rate}/s for ${phaseS} s over all ${opened}: ${s.received}/${s.expected} delivered, delay p50 ${fmt.ms(s.p50 ?? Number.NaN)} ms, p99 ${fmt.ms(s.p99 ?? Number.NaN)} ms, last ${fmt.ms(s.drainMs)} ms after the last write`,
      ...(owners
        ? [
            '',
            `   fleet heap growth with ${o1.opened} idle merged watches, by holder (${snap0} → ${snap1}):`,
            table(
              ['holder', 'objects per watch', 'bytes per watch'],
              owners.map((e) => [
                e.name,
                (e.count / Math.max(1, o1.opened)).toFixed(1),
                fmt.bytes(e.size / Math.max(1, o1.opened)),
              ]),
            ),
          ]
        : []),
      `   closed: ${left} upstream streams still open ${left ? '(not ended with their merged watch)' : '(every one ended with its merged watch)'}`,
    );
    goals.push(
      {
        goal: `goal 5: ${W} concurrent merged watches in one process (HTTP/2 upstreams), memory reported`,
        ok: opened === W && s.received === s.expected && left === 0,
        detail: `${opened}/${W} open, ${fmt.bytes(Math.max(atW.rss, atW.heap))} per watch (RSS ${fmt.bytes(atW.rss)}, heap ${fmt.bytes(atW.heap)}), fleet RSS ${fmt.bytes(m2.rss)}; ${s.expected - s.received} of ${s.expected} events missing; ${left} upstream streams left after close`,
      },
      {
        goal: `goal 5: memory per idle merged watch ≤ ${fmt.bytes(WATCH_GOAL.bytesPerWatch)} (3 clusters, ${o1.opened} watches, HTTP/2 upstreams)`,
        ok: Number.isFinite(at1.rss) ? Math.max(at1.rss, at1.heap) <= WATCH_GOAL.bytesPerWatch : undefined,
        detail: `${fmt.bytes(Math.max(at1.rss, at1.heap))} (RSS ${fmt.bytes(at1.rss)}, V8 heap + external ${fmt.bytes(at1.heap)})`,
      },
    );
    return {
      text: lines.join('\n'),
      goals,
      figures: {
        watches: W,
        open: { first: { ...o1, openedIdx: undefined }, rest: { ...o2, openedIdx: undefined } },
        memory: { m0, m1, m2, at1, atW },
        upstream,
        events: s,
        leftAfterClose: left,
      },
      ...(opened < W
        ? { error: `${W - opened} merged watch(es) failed to open: ${o1.firstError ?? o2.firstError}` }
        : {}),
    };
  } finally {
    await ctx.load('close', { key: 'many' }).catch(() => {});
    fleet.stop();
  }
}

export const mergedWatchManyCase: BenchCase = {
  name: 'merged-watch-many',
  title:
    '10,000 merged watches in one fleet process over HTTP/2 upstreams: memory per watch, every event delivered',
  members: 3,
  teardown,
  run: runMany,
  upstreamActions,
  loadActions: watchersState(),
};

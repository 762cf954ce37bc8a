/**
 * Issue 14: 1,000 informer-style starts at once against a 10-cluster fleet. Each client does what a
 * client-go reflector does with WatchList off: a list with `resourceVersion=0` (any version), then a watch
 * from the list's resourceVersion. Run twice in the same run, against two fleets started here on the same
 * simulated clusters: shared reads off (every list goes to every cluster: today's 1,000 per cluster) and on
 * (coalescing and a 30 s cache: the goal is ≤ 2 upstream lists per cluster per TTL).
 *
 * Measured: upstream lists per cluster (counted at the simulated clusters themselves), and per client the
 * time to its first event (the list complete: a reflector hands its items to the handlers as Added events
 * then) and to its watch being established (response headers), p50/p99.
 */
import { Agent, request } from 'undici';
import { serveFetch } from '../../deploy/node/http.ts';
import { createApp } from '../../src/app.ts';
import { type FleetConfigInput, parseConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import { installNodeHooks, nodePlatform } from '../../src/platform/node.ts';
import { sharedReadsOver } from '../../src/upstreams/cache/shared.ts';
import type { BenchCase, CaseContext, CustomResult, UpstreamContext } from './types.ts';

const CLIENTS = 1000;
const CLUSTERS = 10;
const TTL_SECONDS = 30;
const PATH = '/api/v1/configmaps';

/** per member: lists with resourceVersion=0, and watches (patched onto each simulated member's fetch) */
const counts = new Map<string, { lists: number; watches: number }>();

const upstreamActions = {
  arm(ctx: UpstreamContext) {
    for (const [name, sim] of ctx.sims.members) {
      if ((sim as { __counted?: boolean }).__counted) continue;
      const original = sim.fetch.bind(sim);
      (sim as { __counted?: boolean }).__counted = true;
      sim.fetch = (req: Request) => {
        const u = new URL(req.url);
        if (req.method === 'GET' && u.pathname === PATH) {
          const c = counts.get(name) ?? { lists: 0, watches: 0 };
          if (u.searchParams.get('watch') === 'true') c.watches++;
          else if (u.searchParams.get('resourceVersion') === '0') c.lists++;
          counts.set(name, c);
        }
        return original(req);
      };
    }
  },
  reset() {
    counts.clear();
  },
  read() {
    return Object.fromEntries(counts);
  },
};

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

/** One fleet in this process on the case's clusters, shared reads as given. */
async function startFleet(base: FleetConfigInput, cache: FleetConfigInput['cache']) {
  const config = parseConfig({ ...base, cache });
  installNodeHooks();
  const platform = nodePlatform();
  platform.transport = sharedReadsOver(platform.transport, config.cache);
  const app = createApp(buildFleet(config, platform));
  return serveFetch((req, env) => app.fetch(req, env), { port: 0, host: '127.0.0.1' });
}

interface Start {
  firstEventMs: number;
  watchMs: number;
}

/** One informer start: list at RV 0, then watch from the list's RV (closed once established). */
async function informer(url: string, agent: Agent): Promise<Start> {
  const t0 = performance.now();
  const list = await request(`${url}${PATH}?resourceVersion=0`, {
    dispatcher: agent,
    headers: { accept: 'application/json' },
  });
  const body = (await list.body.json()) as { metadata?: { resourceVersion?: string } };
  if (list.statusCode !== 200) throw new Error(`list: HTTP ${list.statusCode}`);
  const firstEventMs = performance.now() - t0;
  const rv = body.metadata?.resourceVersion ?? '';
  const ac = new AbortController();
  const watch = await request(
    `${url}${PATH}?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`,
    { dispatcher: agent, headers: { accept: 'application/json' }, signal: ac.signal },
  );
  const watchMs = performance.now() - t0;
  if (watch.statusCode !== 200) throw new Error(`watch: HTTP ${watch.statusCode}`);
  ac.abort();
  await watch.body.dump().catch(() => {});
  return { firstEventMs, watchMs };
}

/** --quick: a smoke run of the same comparison (≈ 24 s of CPU with 250: the off run lists 10 clusters per start) */
const clientsFor = (ctx: CaseContext) => (ctx.opts.quick ? CLIENTS / 10 : CLIENTS);

async function runMode(ctx: CaseContext, name: 'off' | 'on') {
  const cache = name === 'on' ? { ttlSeconds: TTL_SECONDS } : { ttlSeconds: 0, coalesce: false };
  const fleet = await startFleet(ctx.env.fleetConfigs.merged, cache);
  // a few hundred connections, not 1,000 connects at once: on a loaded machine those time out
  const agent = new Agent({
    connections: 256,
    connectTimeout: 60_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  try {
    await ctx.upstream('reset');
    const starts = await Promise.all([...Array(clientsFor(ctx))].map(() => informer(fleet.url, agent)));
    const perCluster = await ctx.upstream<Record<string, { lists: number; watches: number }>>('read');
    return { name, starts, perCluster };
  } finally {
    await agent.close();
    await fleet.close(500);
  }
}

async function run(ctx: CaseContext): Promise<CustomResult> {
  await ctx.upstream('arm');
  const off = await runMode(ctx, 'off');
  const on = await runMode(ctx, 'on');
  const lines = [
    `${clientsFor(ctx)} informer starts (list RV=0, then watch from its RV) against ${CLUSTERS} clusters` +
      (ctx.opts.quick ? ` (--quick: not the ${CLIENTS} of a full run)` : ''),
  ];
  const figures: Record<string, unknown> = {};
  for (const m of [off, on]) {
    const lists = Object.values(m.perCluster).map((c) => c.lists);
    const first = m.starts.map((s) => s.firstEventMs);
    const watch = m.starts.map((s) => s.watchMs);
    const f = {
      upstreamListsPerClusterMax: Math.max(...lists),
      upstreamListsTotal: lists.reduce((a, b) => a + b, 0),
      firstEventP50: pct(first, 50),
      firstEventP99: pct(first, 99),
      watchP50: pct(watch, 50),
      watchP99: pct(watch, 99),
    };
    figures[m.name] = f;
    lines.push(
      `  shared reads ${m.name.padEnd(3)}  upstream lists per cluster ≤ ${f.upstreamListsPerClusterMax} (total ${f.upstreamListsTotal})` +
        `  first event p50 ${f.firstEventP50.toFixed(0)} ms p99 ${f.firstEventP99.toFixed(0)} ms` +
        `  watch established p50 ${f.watchP50.toFixed(0)} ms p99 ${f.watchP99.toFixed(0)} ms`,
    );
  }
  const onMax = (figures.on as { upstreamListsPerClusterMax: number }).upstreamListsPerClusterMax;
  const offMax = (figures.off as { upstreamListsPerClusterMax: number }).upstreamListsPerClusterMax;
  return {
    text: lines.join('\n'),
    figures,
    goals: [
      {
        goal: 'issue 14: ≤ 2 upstream lists per cluster per TTL with coalescing and cache on',
        ok: onMax <= 2,
        detail: `${onMax} (off: ${offMax})`,
      },
      {
        goal: 'issue 14: p50/p99 time to first event, on vs off',
        ok: undefined,
        info: true,
        detail: `on ${pct(
          on.starts.map((s) => s.firstEventMs),
          50,
        ).toFixed(0)}/${pct(
          on.starts.map((s) => s.firstEventMs),
          99,
        ).toFixed(0)} ms, off ${pct(
          off.starts.map((s) => s.firstEventMs),
          50,
        ).toFixed(0)}/${pct(
          off.starts.map((s) => s.firstEventMs),
          99,
        ).toFixed(0)} ms`,
      },
    ],
  };
}

export const informerStartCase: BenchCase = {
  name: 'informer-start',
  title: `${CLIENTS} concurrent informer starts over ${CLUSTERS} clusters: upstream lists and time to first event, shared reads off vs on`,
  members: CLUSTERS,
  run,
  upstreamActions,
};

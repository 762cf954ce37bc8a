/**
 * The bench on real clusters (issue 30 part 4): the test bed (testbed/bed.ts: three kube-apiserver 1.35
 * members with kwok, karmada-apiserver with Karmada, and the two fleets, `direct` with static members and
 * `karmada` through Karmada's cluster proxy) started once for every real-* case of the run, each member
 * seeded with the same N ConfigMaps in namespace `bench-real`; each fleet figure ÷ the same members read
 * directly, in the same rounds:
 *   - real-list: the merged list of the namespace at each fleet's root ÷ the three members listed in
 *     parallel, unmerged (paired p50 per round, median of the rounds); fleet CPU per MiB;
 *   - real-passthrough: GET of one object by fleet name (`cm-7.clusterspace.member2`) ÷ the same GET on
 *     member2: latency on one connection, throughput at 8 connections;
 *   - real-watch: changes written after the lists, then the watches opened from the lists' RVs, so the
 *     members' watch caches replay them at once: time to the first event (a watch starting, as an informer
 *     after its list) and the rate of the burst, the merged watch ÷ the three members watched directly,
 *     and the floor: the first member's watch through a copy-only TLS proxy (../lib/tls-floor-proxy.ts);
 *     BENCH_REAL_H2=1 adds each fleet again with upstreamHttp2 alpn, paired with it per round. Each watch
 *     goes out as kubectl get -w's does on a warm fleet: on the client connection its list (here a
 *     `limit=1` list, untimed) has just used, so the time has no client handshake in it; the same rounds
 *     also time each fleet and direct on a new client connection per watch (`… new-conn`: a resumed TLS
 *     handshake per connection in the time, the row's form before), printed beside it; the fleets' spare
 *     upstream connections that served each round are counted (src/platform/node-watch-spare.ts).
 *
 * The fleets run in this (the harness's) process, as the bed starts them; the load runs in the load
 * process with the bed's client certificates (../lib/real-load.ts). The harness does nothing else while a
 * case measures, so its CPU over an answer is the fleets' work. Not in a default or --quick run (the bed
 * takes 1–3 minutes to start and ~2.7 GiB): `--real`, or name them (`--only=real`). N = 1,000 per member
 * (--quick 200; BENCH_REAL_OBJECTS=N).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spareCounts } from '../../src/platform/node-watch-spare.ts';
import type { Bed } from '../../testbed/bed.ts';
import type { Apiserver } from '../../testbed/kube.ts';
import { httpsRequest, waitUntil } from '../../testbed/process.ts';
import { judge, type Row33Check } from '../lib/goals33.ts';
import { MiB } from '../lib/proc.ts';
import {
  type Answer,
  type AnswersSpec,
  type GetsResult,
  type GetsSpec,
  type RealTarget,
  realAnswers,
  realGets,
  realWatches,
  type Tls,
  type WatchesSpec,
  type WatchRun,
} from '../lib/real-load.ts';
import { fmt, table } from '../lib/report.ts';
import { median, percentile } from '../lib/stats.ts';
import { startTlsFloorProxy, type TlsFloorProxy } from '../lib/tls-floor-proxy.ts';
import type { BenchCase, CaseContext, CustomResult, GoalCheck } from './types.ts';

const NS = 'bench-real';
const CM = (i: number) => `cm-${i}`;
/** a field every seeded item has once: counts the items of a list */
const ITEM_MARK = '"benchItem":"';
/** the object the passthrough case asks for */
const ONE = { member: 'member2', name: CM(7) };

interface Shared {
  bed: Bed;
  objects: number;
  tls: Record<string, Tls>;
  startS: number;
  seedS: number;
  /** the copy-only TLS proxy to the first member (../lib/tls-floor-proxy.ts): real-watch's floor */
  floor: TlsFloorProxy;
  /** BENCH_REAL_H2=1: each fleet again with upstreamHttp2 alpn, by name (`fleet-direct-h2`, ...) */
  h2: Record<string, { url: string; stop(): Promise<void> }>;
  /** the bench's own CA and serving certificate, removed at the end */
  dir: string;
}

let shared: Promise<Shared> | undefined;

/** how many objects each member gets */
function objectsFor(ctx: CaseContext): number {
  const env = Number(process.env.BENCH_REAL_OBJECTS);
  return Number.isInteger(env) && env > 0 ? env : ctx.opts.quick ? 200 : 1000;
}

/** `fn` over `xs`, `n` at a time */
async function pool<T>(xs: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, xs.length) }, async () => {
      while (next < xs.length) await fn(xs[next++]!);
    }),
  );
}

async function must(api: Apiserver, path: string, opts: Parameters<Apiserver['request']>[1] = {}) {
  const r = await api.request(path, opts);
  if (r.status < 200 || r.status > 299)
    throw new Error(`${api.name}: ${opts.method ?? 'GET'} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
  return r;
}

async function seed(api: Apiserver, n: number): Promise<void> {
  const nsr = await api.request('/api/v1/namespaces', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  });
  if (nsr.status !== 201 && nsr.status !== 409)
    throw new Error(`${api.name}: namespace ${NS}: ${nsr.status}`);
  // ~0.5 KiB of data each, the size of a small real ConfigMap
  await pool(
    Array.from({ length: n }, (_, i) => i),
    8,
    async (i) => {
      const r = await api.request(`/api/v1/namespaces/${NS}/configmaps`, {
        method: 'POST',
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: CM(i), labels: { app: 'bench-real' } },
          data: { benchItem: String(i), round: '0', pad: 'x'.repeat(480) },
        },
      });
      if (r.status !== 201 && r.status !== 409)
        throw new Error(`${api.name}: create ${CM(i)}: ${r.status} ${r.body.slice(0, 300)}`);
    },
  );
}

async function startShared(ctx: CaseContext): Promise<Shared> {
  const { startBed } = await import('../../testbed/bed.ts');
  const t0 = performance.now();
  ctx.log(
    '   starting the real bed (testbed/bed.ts: etcd, 3 members with kwok, karmada-apiserver + Karmada, 2 fleets)…',
  );
  const bed = await startBed({ log: (l) => ctx.log(`   bed: ${l}`) });
  const startS = (performance.now() - t0) / 1000;
  const objects = objectsFor(ctx);
  const t1 = performance.now();
  await Promise.all(bed.members.map((m) => seed(m.apiserver, objects)));
  const seedS = (performance.now() - t1) / 1000;
  ctx.log(
    `   bed up in ${startS.toFixed(0)} s; ${bed.members.length} × ${objects} ConfigMaps seeded in ${seedS.toFixed(0)} s`,
  );
  const admin = bed.user('bed-admin', ['system:masters']);
  const tls: Record<string, Tls> = { fleet: { ca: bed.fleetCA.cert, cert: admin.cert, key: admin.key } };
  for (const m of bed.members)
    tls[m.name] = { ca: m.apiserver.ca, cert: m.apiserver.admin.cert, key: m.apiserver.admin.key };
  // the floor proxy and the h2 fleets serve a certificate of the bench's own CA (the bed keeps its
  // serving key); they take the same client certificates as the fleets
  const dir = mkdtempSync(join(tmpdir(), 'bench-real-'));
  const { createCA } = await import('../../testbed/pki.ts');
  const benchCA = createCA(dir, 'bench-real-ca');
  const serving = benchCA.serving('bench-real-serving', { cn: 'bench-real' });
  tls.bench = { ca: benchCA.cert, cert: admin.cert, key: admin.key };
  const m1 = bed.members[0]!;
  const floor = await startTlsFloorProxy({
    serving,
    clientCA: bed.fleetCA.cert,
    upstream: { url: m1.apiserver.url, ...tls[m1.name]! },
  });
  const h2: Shared['h2'] = {};
  if (process.env.BENCH_REAL_H2 === '1') {
    if (process.env.FLEET_UPSTREAM_HTTP2)
      throw new Error('BENCH_REAL_H2=1 compares alpn with off: unset FLEET_UPSTREAM_HTTP2');
    const { startBedFleet } = await import('../../testbed/bed.ts');
    for (const [name, f] of [
      ['fleet-direct-h2', bed.fleets.direct],
      ['fleet-karmada-h2', bed.fleets.karmada],
    ] as const) {
      const twin = await startBedFleet({
        name: `${f.name}-h2`,
        config: { ...f.config, upstreamHttp2: 'alpn' } as typeof f.config,
        serving,
        dir,
        userKubeconfig: () => '',
      });
      h2[name] = { url: twin.url, stop: twin.stop };
    }
  }
  // the Karmada fleet finds its members from Karmada's Clusters: wait until its list has every item
  const listed = [
    ...Object.values(bed.fleets).map((f) => ({ name: f.name, url: f.url, as: 'fleet' })),
    ...Object.entries(h2).map(([name, f]) => ({ name, url: f.url, as: 'bench' })),
  ];
  for (const f of listed)
    await waitUntil(
      undefined,
      `${f.name} fleet lists ${bed.members.length * objects} ConfigMaps`,
      async () => {
        const r = await httpsRequest(`${f.url}/api/v1/namespaces/${NS}/configmaps`, tls[f.as]!, {
          timeoutMs: 60_000,
        });
        return (
          r.status === 200 && (r.body.match(/"benchItem":"/g)?.length ?? 0) === bed.members.length * objects
        );
      },
      180_000,
    );
  return { bed, objects, tls, startS, seedS, floor, h2, dir };
}

function bedFor(ctx: CaseContext): Promise<Shared> {
  shared ??= startShared(ctx);
  return shared;
}

async function stopShared(): Promise<void> {
  const s = shared;
  shared = undefined;
  const got = await s?.catch(() => undefined);
  if (!got) return;
  await got.floor.close();
  for (const f of Object.values(got.h2)) await f.stop();
  await got.bed.stop();
  rmSync(got.dir, { recursive: true, force: true });
}

const rounds = (ctx: CaseContext) => (ctx.opts.quick ? 1 : Math.max(3, ctx.opts.rounds));
const FLEETS = ['fleet-direct', 'fleet-karmada'] as const;
const fleetUrl = (s: Shared, f: (typeof FLEETS)[number]) =>
  f === 'fleet-direct' ? s.bed.fleets.direct.url : s.bed.fleets.karmada.url;
const header = (s: Shared) =>
  `   real bed: ${s.bed.members.map((m) => m.name).join(', ')} (kube-apiserver 1.35, kwok) + karmada-apiserver; ${s.objects} ConfigMaps per member in ${NS}; ` +
  `fleet-direct: static members; fleet-karmada: members through Karmada's cluster proxy; both in the harness process (bed up in ${s.startS.toFixed(0)} s, seeded in ${s.seedS.toFixed(0)} s)`;
const perRoundText = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');

// ------------------------------------------------------------------------------------------------ real-list

async function runList(ctx: CaseContext): Promise<CustomResult> {
  const s = await bedFor(ctx);
  const path = `/api/v1/namespaces/${NS}/configmaps`;
  const targets: RealTarget[] = [
    ...FLEETS.map((f) => ({ name: f, steps: [{ url: `${fleetUrl(s, f)}${path}`, as: 'fleet' }] })),
    {
      name: 'parallel',
      parallel: true,
      steps: s.bed.members.map((m) => ({ url: `${m.apiserver.url}${path}`, as: m.name })),
    },
  ];
  const R = rounds(ctx);
  const byRound: Array<Record<string, Answer[]>> = [];
  for (let r = 0; r < R; r++) {
    const res = await ctx.load<Record<string, Answer[]>>('answers', {
      targets: r % 2 ? [...targets].reverse() : targets,
      tls: s.tls,
      iterations: ctx.opts.quick ? 2 : 3,
      warmup: r === 0 ? 1 : 0,
      cpuPid: process.pid,
      countPattern: ITEM_MARK,
    } satisfies AnswersSpec);
    byRound.push(res);
    ctx.log(
      `   round ${r + 1}/${R}  ${Object.entries(res)
        .map(([n, a]) => `${n} ${median(a.map((x) => x.ms)).toFixed(0)} ms`)
        .join(', ')}`,
    );
  }
  const all = (n: string) => byRound.flatMap((r) => r[n] ?? []);
  const failures = targets.flatMap((t) =>
    all(t.name)
      .filter((a) => a.failed)
      .map((a) => `${t.name}: ${a.failed}`),
  );
  const ok = (n: string) => all(n).filter((a) => !a.failed);
  const p50 = (n: string) => median(ok(n).map((a) => a.ms));
  const ratios = (f: string) =>
    byRound.map((r) => median((r[f] ?? []).map((a) => a.ms)) / median((r.parallel ?? []).map((a) => a.ms)));
  const cpuPerMiB = (n: string) => median(ok(n).map((a) => a.cpuMs / (a.bytes / MiB)));
  const expected = s.objects * s.bed.members.length;
  const lines = [
    header(s),
    `   ${R} round(s), targets interleaved answer by answer; ratio = median over rounds of (fleet p50 ÷ parallel p50) of the round`,
    '',
    table(
      [
        'target',
        'answers',
        'p50 ms',
        'body',
        'items',
        'fleet CPU ms',
        'fleet CPU ms/MiB',
        'ratio ÷ parallel',
        'per round',
      ],
      targets.map((t) => {
        const fleet = t.name !== 'parallel';
        return [
          t.name,
          String(ok(t.name).length),
          fmt.ms(p50(t.name)),
          fmt.bytes(median(ok(t.name).map((a) => a.bytes))),
          String(median(ok(t.name).map((a) => a.items))),
          fleet ? fmt.ms(median(ok(t.name).map((a) => a.cpuMs))) : '-',
          fleet ? fmt.ms(cpuPerMiB(t.name)) : '-',
          fleet ? fmt.x(median(ratios(t.name))) : '',
          fleet ? perRoundText(ratios(t.name)) : '',
        ];
      }),
    ),
  ];
  const wrong = targets.filter((t) => ok(t.name).some((a) => a.items !== expected));
  if (wrong.length)
    failures.push(`${wrong.map((t) => t.name).join(', ')}: not ${expected} items in every answer`);
  const issue33: Row33Check[] = FLEETS.map((f) => ({
    row: 'json-parallel',
    where: `real members, ${f}, 3×${s.objects.toLocaleString('en')} ConfigMaps`,
    ratio: median(ratios(f)),
    ok: judge(median(ratios(f)), 1.5),
    detail: `p50 ${fmt.ms(p50(f))} vs ${fmt.ms(p50('parallel'))} ms, per round ${perRoundText(ratios(f))}`,
  }));
  const goals: GoalCheck[] = FLEETS.map((f) => ({
    goal: `real members: ${f} CPU per MiB merged (3×${s.objects} ConfigMaps)`,
    ok: undefined,
    info: true,
    detail: `${fmt.ms(cpuPerMiB(f))} ms/MiB`,
  }));
  return {
    text: lines.join('\n'),
    goals,
    issue33,
    figures: { objects: s.objects, byRound, bedStartS: s.startS },
    ...(failures.length ? { error: `${failures.length} failure(s): ${failures[0]}` } : {}),
  };
}

// ------------------------------------------------------------------------------------------------ real-passthrough

async function runPassthrough(ctx: CaseContext): Promise<CustomResult> {
  const s = await bedFor(ctx);
  const member = s.bed.members.find((m) => m.name === ONE.member)!;
  const fleetName = `${ONE.name}.clusterspace.${ONE.member}`;
  const targets: GetsSpec['targets'] = [
    ...FLEETS.map((f) => ({
      name: f,
      step: { url: `${fleetUrl(s, f)}/api/v1/namespaces/${NS}/configmaps/${fleetName}`, as: 'fleet' },
    })),
    {
      name: 'direct',
      step: {
        url: `${member.apiserver.url}/api/v1/namespaces/${NS}/configmaps/${ONE.name}`,
        as: member.name,
      },
    },
  ];
  const R = rounds(ctx);
  const byRound: Array<Record<string, GetsResult>> = [];
  for (let r = 0; r < R; r++) {
    const res = await ctx.load<Record<string, GetsResult>>('gets', {
      targets: r % 2 ? [...targets].reverse() : targets,
      tls: s.tls,
      n: ctx.opts.quick ? 30 : 200,
      concurrency: 8,
      seconds: ctx.opts.quick ? 1 : 3,
      cpuPid: process.pid,
    } satisfies GetsSpec);
    byRound.push(res);
    ctx.log(
      `   round ${r + 1}/${R}  ${Object.entries(res)
        .map(([n, g]) => `${n} p50 ${fmt.ms(percentile(g.latencies, 50))} ms, ${g.rps.toFixed(0)} req/s`)
        .join('; ')}`,
    );
  }
  const per = (n: string, f: (g: GetsResult) => number) => byRound.map((r) => f(r[n]!));
  const p50 = (g: GetsResult) => percentile(g.latencies, 50);
  const p99 = (g: GetsResult) => percentile(g.latencies, 99);
  const failures: string[] = [];
  for (const r of byRound)
    for (const [n, g] of Object.entries(r))
      if (g.failed) failures.push(`${n}: ${g.failed} failed (${g.firstFailure})`);
  // the name a client asked by comes back (docs/names.md)
  for (const f of FLEETS) {
    const body = byRound[0]?.[f]?.body;
    const name = body ? (JSON.parse(body) as { metadata?: { name?: string } }).metadata?.name : undefined;
    if (name !== fleetName) failures.push(`${f}: answered the name ${name}, asked ${fleetName}`);
  }
  const ratio = (f: string, m: (g: GetsResult) => number) =>
    median(byRound.map((r) => m(r[f]!) / m(r.direct!)));
  const lines = [
    header(s),
    `   GET ${fleetName} through each fleet vs GET ${ONE.name} on ${ONE.member}: ${ctx.opts.quick ? 30 : 200} GETs each in turn (targets alternating), then 8 connections for ${ctx.opts.quick ? 1 : 3} s each; ${R} round(s)`,
    '',
    table(
      [
        'target',
        'p50 ms',
        'p99 ms',
        'req/s (8 conns)',
        'fleet CPU µs/GET',
        'p50 ÷ direct',
        'req/s ÷ direct',
        'p50 per round',
      ],
      targets.map((t) => [
        t.name,
        fmt.ms(median(per(t.name, p50))),
        fmt.ms(median(per(t.name, p99))),
        fmt.rps(median(per(t.name, (g) => g.rps))),
        t.name === 'direct' ? '-' : fmt.us(median(per(t.name, (g) => g.cpuMsPerGet * 1000))),
        t.name === 'direct' ? '' : fmt.x(ratio(t.name, p50)),
        t.name === 'direct' ? '' : fmt.x(ratio(t.name, (g) => g.rps)),
        perRoundText(per(t.name, p50)),
      ]),
    ),
  ];
  const goals: GoalCheck[] = FLEETS.map((f) => ({
    goal: `real members: passthrough GET by fleet name, ${f} ÷ direct (issue 30 sets no target)`,
    ok: undefined,
    info: true,
    detail: `p50 ${fmt.x(ratio(f, p50))} (+${fmt.ms(median(per(f, p50)) - median(per('direct', p50)))} ms), throughput ${fmt.x(ratio(f, (g) => g.rps))}`,
  }));
  return {
    text: lines.join('\n'),
    goals,
    figures: {
      byRound: byRound.map((r) =>
        Object.fromEntries(
          Object.entries(r).map(([n, g]) => [
            n,
            { p50: p50(g), p99: p99(g), rps: g.rps, cpuMsPerGet: g.cpuMsPerGet, failed: g.failed },
          ]),
        ),
      ),
    },
    ...(failures.length ? { error: `${failures.length} failure(s): ${failures[0]}` } : {}),
  };
}

// ------------------------------------------------------------------------------------------------ real-watch

async function listRv(url: string, tls: Tls): Promise<string> {
  const r = await httpsRequest(url, tls, { timeoutMs: 120_000 });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.body.slice(0, 200)}`);
  const rv = (JSON.parse(r.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (!rv) throw new Error(`${url}: no resourceVersion`);
  return rv;
}

/** the fleets' upstream watch connections: on a ready spare, on one mid-handshake, dialled (none waited) */
const spareText = (c: { ready: number; notReady: number; none: number }) =>
  `${c.ready}/${c.ready + c.notReady + c.none} ready${c.notReady ? `, ${c.notReady} mid-handshake` : ''}`;

async function runWatch(ctx: CaseContext): Promise<CustomResult> {
  const s = await bedFor(ctx);
  const path = `/api/v1/namespaces/${NS}/configmaps`;
  // changes per member and round: written between the lists and the watches (kube-apiserver's watch cache
  // keeps 75 s of history, far more than a round takes)
  const E = Math.min(s.objects, ctx.opts.quick ? 100 : 300);
  const expect = E * s.bed.members.length;
  const R = rounds(ctx);
  const byRound: Array<Record<string, WatchRun>> = [];
  const writeS: number[] = [];
  // the fleets, and with BENCH_REAL_H2=1 each again with upstreamHttp2 alpn (paired in the same rounds)
  const fleets = [
    ...FLEETS.map((f) => ({ name: f as string, url: fleetUrl(s, f), as: 'fleet' })),
    ...Object.entries(s.h2).map(([name, f]) => ({ name, url: f.url, as: 'bench' })),
  ];
  const floorMember = s.bed.members[0]!.name;
  // kubectl get -w on a warm fleet: the watch on the connection its list just used (untimed)
  const warm = (base: string) => ({ warm: `${base}${path}?limit=1` });
  const NEW_CONN = ' new-conn';
  const spares = { ready: 0, notReady: 0, none: 0 };
  for (let r = 0; r < R; r++) {
    const rvs: Record<string, string> = {};
    for (const f of fleets) rvs[f.name] = await listRv(`${f.url}${path}`, s.tls[f.as]!);
    for (const m of s.bed.members)
      rvs[m.name] = await listRv(`${m.apiserver.url}${path}?limit=1`, s.tls[m.name]!);
    const t0 = performance.now();
    await Promise.all(
      s.bed.members.map((m) =>
        pool(
          Array.from({ length: E }, (_, i) => i),
          8,
          async (i) => {
            await must(m.apiserver, `${path}/${CM(i)}`, {
              method: 'PATCH',
              body: { data: { round: String(r + 1) } },
              contentType: 'application/merge-patch+json',
            });
          },
        ),
      ),
    );
    writeS.push((performance.now() - t0) / 1000);
    const w = (base: string, rv: string) =>
      `${base}${path}?watch=true&resourceVersion=${encodeURIComponent(rv)}`;
    const targets: RealTarget[] = [
      ...fleets.map((f) => ({
        name: f.name,
        steps: [{ url: w(f.url, rvs[f.name]!), as: f.as, ...warm(f.url) }],
      })),
      {
        name: 'direct',
        steps: s.bed.members.map((m) => ({
          url: w(m.apiserver.url, rvs[m.name]!),
          as: m.name,
          ...warm(m.apiserver.url),
        })),
      },
      // the same on a new client connection per watch (the resumed handshakes timed): the row's old form
      ...fleets
        .filter((f) => !(f.name in s.h2))
        .map((f) => ({ name: f.name + NEW_CONN, steps: [{ url: w(f.url, rvs[f.name]!), as: f.as }] })),
      {
        name: `direct${NEW_CONN}`,
        steps: s.bed.members.map((m) => ({ url: w(m.apiserver.url, rvs[m.name]!), as: m.name })),
      },
      // one member's watch through the copy-only proxy: its E changes
      {
        name: 'floor',
        steps: [{ url: w(s.floor.url, rvs[floorMember]!), as: 'bench', ...warm(s.floor.url) }],
        expect: E,
      },
    ];
    const order = [...targets.slice(r % targets.length), ...targets.slice(0, r % targets.length)];
    const spare0 = { ...spareCounts };
    const res = await ctx.load<Record<string, WatchRun>>('watches', {
      targets: order,
      tls: s.tls,
      expect,
      timeoutMs: 120_000,
      cpuPid: process.pid,
    } satisfies WatchesSpec);
    byRound.push(res);
    // the fleets' upstream watch connections this round: how many took a spare whose handshake was done
    const got = {
      ready: spareCounts.ready - spare0.ready,
      notReady: spareCounts.notReady - spare0.notReady,
      none: spareCounts.none - spare0.none,
    };
    spares.ready += got.ready;
    spares.notReady += got.notReady;
    spares.none += got.none;
    ctx.log(
      `   round ${r + 1}/${R}  ${expect} changes written in ${writeS[r]!.toFixed(1)} s; spares ${spareText(got)}; ` +
        Object.entries(res)
          .map(
            ([n, x]) =>
              `${n}: first ${fmt.ms(x.firstMs)} ms, ${x.received}/${n === 'floor' ? E : expect} in ${fmt.ms(x.allMs)} ms`,
          )
          .join('; '),
    );
  }
  const rate = (x: WatchRun) => (x.received - 1) / (x.burstMs / 1000);
  const ratio = (f: string, m: (x: WatchRun) => number, to = 'direct') =>
    byRound.map((r) => m(r[f]!) / m(r[to]!));
  const firstMs = (x: WatchRun) => x.firstMs;
  const names = fleets.map((f) => f.name);
  const per = (n: string, m: (x: WatchRun) => number) => byRound.map((r) => m(r[n]!));
  const failures = byRound.flatMap((r) =>
    Object.entries(r)
      .filter(([, x]) => x.failed)
      .map(([n, x]) => `${n}: ${x.failed}`),
  );
  // a warm watch that had to dial after all would time a handshake the row says it has not
  const redialled = byRound.flatMap((r) =>
    Object.entries(r)
      .filter(([, x]) => x.redialled)
      .map(([n, x]) => `${n}: ${x.redialled} warm connection(s) closed before the watch`),
  );
  failures.push(...redialled);
  const how =
    'each watch on the client connection a limit=1 list has just used (kubectl get -w on a warm fleet: its list, then the watch on the same connection; the list untimed); `… new-conn`: a new client connection per watch, its resumed TLS handshake timed';
  const spareAll = `fleets' upstream watch connections on a spare: ${spareText(spares)}`;
  const lines = [
    header(s),
    `   per round: the lists (their RVs), then ${E} ConfigMaps patched in each member, then each target's watch opened from its list's RV (the members replay the ${expect} changes from their watch caches at once); direct = the 3 members watched at once; floor = ${floorMember}'s watch through a copy-only TLS proxy in the fleets' process (bench/lib/tls-floor-proxy.ts: the client's TLS ended, one upstream TLS connection with a resumed session, bytes piped; its burst is one member's ${E}); ${how}; ${R} round(s), order rotating; ${spareAll}`,
    '',
    table(
      [
        'target',
        'first event ms',
        'all events ms',
        'burst events/s',
        'fleet CPU µs/event',
        'first ÷ direct',
        'first ÷ floor',
        'burst ÷ direct',
        'first per round',
      ],
      ['direct', 'floor', ...names, `direct${NEW_CONN}`, ...FLEETS.map((f) => f + NEW_CONN)].map((n) => {
        // a new-conn fleet ÷ direct on new connections too; the floor only beside the warm ones
        const direct = n.startsWith('direct');
        const to = n.endsWith(NEW_CONN) ? `direct${NEW_CONN}` : 'direct';
        const warmFleet = !direct && n !== 'floor' && !n.endsWith(NEW_CONN);
        return [
          n,
          fmt.ms(median(per(n, firstMs))),
          fmt.ms(median(per(n, (x) => x.allMs))),
          median(per(n, rate)).toFixed(0),
          direct ? '-' : ((median(per(n, (x) => x.cpuMs)) * 1000) / (n === 'floor' ? E : expect)).toFixed(1),
          direct ? '' : fmt.x(median(ratio(n, firstMs, to))),
          warmFleet ? fmt.x(median(ratio(n, firstMs, 'floor'))) : '',
          direct || n === 'floor' ? '' : fmt.x(median(ratio(n, rate, to))),
          perRoundText(per(n, firstMs)),
        ];
      }),
    ),
  ];
  const floorX = median(ratio('floor', firstMs));
  const issue33: Row33Check[] = FLEETS.flatMap((f) => {
    const first = median(ratio(f, (x) => x.firstMs));
    const burst = median(ratio(f, rate));
    return [
      {
        row: 'first-event',
        where: `real members, ${f}`,
        ratio: first,
        ok: judge(first, 1.2),
        detail: `${fmt.ms(median(per(f, firstMs)))} vs ${fmt.ms(median(per('direct', firstMs)))} ms, per round ${perRoundText(ratio(f, firstMs))}; floor proxy ÷ direct ${fmt.x(floorX)}, ${f} ÷ floor ${fmt.x(median(ratio(f, firstMs, 'floor')))}; warm client connections (on new ones ${fmt.x(median(ratio(f + NEW_CONN, firstMs, `direct${NEW_CONN}`)))}), ${spareAll}`,
      },
      {
        row: 'burst',
        where: `real members, ${f}, ${expect} changes replayed`,
        ratio: burst,
        ok: judge(burst, 0.9, true),
        detail: `${median(per(f, rate)).toFixed(0)} vs ${median(per('direct', rate)).toFixed(0)} events/s, per round ${perRoundText(ratio(f, rate))}`,
      },
    ];
  });
  // what any proxy pays here, and (BENCH_REAL_H2=1) HTTP/2 to the members against HTTP/1.1, paired
  const goals: GoalCheck[] = [
    {
      goal: 'real members: first event through a copy-only TLS proxy ÷ direct (the floor of the first-event row)',
      ok: undefined,
      info: true,
      detail: `${fmt.x(floorX)}, per round ${perRoundText(ratio('floor', firstMs))}`,
    },
    ...FLEETS.filter((f) => `${f}-h2` in s.h2).map((f) => ({
      goal: `real members: ${f} first event, upstreamHttp2 alpn ÷ off (paired per round)`,
      ok: undefined,
      info: true,
      detail: `${fmt.x(median(ratio(`${f}-h2`, firstMs, f)))}, per round ${perRoundText(ratio(`${f}-h2`, firstMs, f))}; burst ${fmt.x(median(ratio(`${f}-h2`, rate, f)))}`,
    })),
  ];
  return {
    text: lines.join('\n'),
    goals,
    issue33,
    figures: { changesPerRound: expect, writeS, byRound, spares },
    ...(failures.length ? { error: `${failures.length} failure(s): ${failures[0]}` } : {}),
  };
}

const loadActions = {
  answers: (spec: AnswersSpec) => realAnswers(spec),
  gets: (spec: GetsSpec) => realGets(spec),
  watches: (spec: WatchesSpec) => realWatches(spec),
};

export const realListCase: BenchCase = {
  name: 'real-list',
  title: 'real bed: merged list of 3 × N ConfigMaps through each fleet vs the 3 members listed in parallel',
  needsBed: true,
  run: runList,
  cleanup: stopShared,
  loadActions,
};

export const realPassthroughCase: BenchCase = {
  name: 'real-passthrough',
  title: 'real bed: GET one ConfigMap by fleet name through each fleet vs on its member',
  needsBed: true,
  run: runPassthrough,
  cleanup: stopShared,
  loadActions,
};

export const realWatchCase: BenchCase = {
  name: 'real-watch',
  title:
    'real bed: merged watch, first event and replayed burst, through each fleet vs the 3 members watched directly',
  needsBed: true,
  run: runWatch,
  cleanup: stopShared,
  loadActions,
};

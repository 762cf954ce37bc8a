/**
 * Same-run A/B of fleet builds on merged-watch's burst (bench/cases/merged-watch.ts, alone): W merged
 * watches over 3 simulated clusters per build (one namespace each, so an event reaches one watch), and W
 * direct watches on the first cluster; ConfigMap updates written as fast as the simulated clusters' process
 * can, round robin over the watches, builds and direct in turn burst by burst (every order of them in turn: n=12 runs each twice).
 * Per build and burst: the fleet process's CPU per event (/proc, every thread), the client's (this
 * process: reading, splitting lines, the case's regexes), its reads ('data' events) and bytes per event,
 * the delivered rate and its ratio to direct's in the same round, the delay p99.
 *   npx tsx bench/lib/watchburst-ab.ts bundles=base:/tmp/base/dist/node/main.js,cur:dist/node/main.js
 *   [n=12] [events=6000] [watches=1000] [strace=1] (then one more burst per build, its system calls counted)
 *   [phases=1000 phaseS=2] (after each round's bursts a fixed-rate phase per target, the same order:
 *   delay p50/p99 and the added p99, fleet − direct per round, as merged-watch's added-p99 row)
 * A bundle resolves its packages from where it lies (burst-ab.ts says how to build a commit's).
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleFleet, type FleetProcess, startFleetProcess } from './fleetproc.ts';
import { median } from './stats.ts';
import { straceStart } from './strace.ts';
import { nowMs, openSetWatches, type Written, watchersState } from './watchers.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const MEMBERS = ['member1', 'member2', 'member3'];
const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);

/** the simulated clusters' process: serves them, creates the watched objects, drives the bursts */
async function simsProcess(): Promise<void> {
  const { startSimFleet } = await import('../../deploy/node/demo.ts');
  const sims = await startSimFleet({ members: MEMBERS, seed: false });
  const all = MEMBERS.map((m) => sims.members.get(m)!);
  for (const s of all) s.options.bookmarkIntervalMs = 60_000;
  let seq = 1;
  process.on(
    'message',
    (m: {
      op: string;
      sets?: string[];
      watches?: number;
      set?: string;
      clusters?: number;
      total?: number;
      rate?: number;
    }) => {
      if (m.op === 'prepare') {
        for (const set of m.sets!)
          for (let i = 0; i < m.watches!; i++)
            for (const s of all)
              s.create(CM, {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: 'tick', namespace: `b${set}-${i}` },
                data: { t: '0', seq: '0' },
              });
        process.send!({ memberUrls: Object.fromEntries(sims.memberUrls), config: sims.staticConfig() });
        return;
      }
      // a burst: event k to watch k mod W, cluster ⌊k / W⌋ mod C, 100 a macrotask (merged-watch.ts drive)
      for (const s of all) s.compact();
      const targets = all.slice(0, m.clusters);
      const written: Written = { watch: [], cluster: [], seq: [] };
      const startMs = nowMs();
      let k = 0;
      const one = () => {
        const i = k % m.watches!;
        const c = Math.floor(k / m.watches!) % targets.length;
        written.watch.push(i);
        written.cluster.push(c);
        written.seq.push(seq);
        targets[c]!.update(CM, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'tick', namespace: `b${m.set}-${i}` },
          data: { t: nowMs().toFixed(3), seq: String(seq++), c: String(c) },
        });
        k++;
      };
      const step = () => {
        for (let b = 0; b < 100 && k < m.total!; b++) one();
        if (k < m.total!) setImmediate(step);
        else process.send!({ written, startMs, endMs: nowMs() });
      };
      if (!m.rate) return step();
      // a fixed rate instead (merged-watch's phases): what is due, every 2 ms
      const timer = setInterval(() => {
        const due = Math.min(m.total!, Math.floor(((nowMs() - startMs) / 1000) * m.rate!));
        while (k < due) one();
        if (k >= m.total!) {
          clearInterval(timer);
          process.send!({ written, startMs, endMs: nowMs() });
        }
      }, 2);
    },
  );
}

/** every order of 0 … n−1 */
function permutations(n: number): number[][] {
  if (n <= 1) return [[0]];
  return permutations(n - 1).flatMap((p) =>
    Array.from({ length: n }, (_, at) => [...p.slice(0, at), n - 1, ...p.slice(at)]),
  );
}

/** the process's CPU in ms, every thread (/proc, 10 ms ticks) */
function cpuMs(pid: number): number {
  let ms = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const f = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ms += (Number(f[11]) + Number(f[12])) * 10;
  }
  return ms;
}

async function main(): Promise<void> {
  const n = Number(args.n ?? 12);
  const total = Number(args.events ?? 6000);
  const W = Number(args.watches ?? 1000);
  const phaseS = Number(args.phaseS ?? 2);
  const child = fork(fileURLToPath(import.meta.url), ['sims'], { execArgv: ['--import', 'tsx'] });
  const reply = <T>() => new Promise<T>((r) => child.once('message', (m) => r(m as T)));
  const specs = (args.bundles ?? `cur:${await bundleFleet()}`)
    .split(',')
    .map((b) => b.split(':') as [string, string]);
  const sets = specs.map((_, k) => String.fromCharCode(102 + k)); // f, g, …: a namespace prefix per build
  child.send({ op: 'prepare', sets: [...sets, 'd'], watches: W });
  const { memberUrls, config } = await reply<{ memberUrls: Record<string, string>; config: unknown }>();
  const client = watchersState();
  const fleets: Array<{
    name: string;
    set: string;
    f: FleetProcess | undefined;
    x: Record<string, number[]>;
  }> = [];
  try {
    for (const [k, [name, bundle]] of specs.entries())
      fleets.push({ name, set: sets[k]!, f: await startFleetProcess(config, { bundle }), x: {} });
    const direct = {
      name: 'direct',
      set: 'd',
      f: undefined as FleetProcess | undefined,
      x: {} as Record<string, number[]>,
    };
    for (const t of [...fleets, direct]) {
      const o = await openSetWatches(client, t.name, t.f?.url ?? memberUrls.member1!, t.set, W);
      console.error(`${t.name}: ${o.opened}/${W} watches open in ${(o.ms / 1000).toFixed(1)} s`);
    }
    const own = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const burst = async (t: (typeof fleets)[0], events: number, rate = 0) => {
      const c0 = t.f ? cpuMs(t.f.pid) : 0;
      client.record();
      const o0 = own();
      child.send({ op: 'burst', set: t.set, watches: W, clusters: t.f ? 3 : 1, total: events, rate });
      const d = await reply<{ written: Written; startMs: number; endMs: number }>();
      const s = await client.stop({ key: t.name, written: d.written, endMs: d.endMs, deadlineMs: 30_000 });
      const add = (k: string, v: number) => {
        t.x[k] ??= [];
        t.x[k].push(v);
      };
      if (rate) {
        add('phaseP99', s.p99);
        add('phaseP50', s.p50);
        return;
      }
      add('fleetUs', t.f ? ((cpuMs(t.f.pid) - c0) * 1000) / s.received : Number.NaN);
      add('clientUs', ((own() - o0) * 1000) / s.received);
      add('reads', s.reads / s.received);
      add('bytes', s.bytes / s.received);
      add('rate', s.received / ((s.lastMs - d.startMs) / 1000));
      add('p99', s.p99);
      add('missing', s.expected - s.received);
    };
    // every order of the targets in turn (n a multiple of their count's factorial: each as often): a
    // burst runs faster or slower by its place after another (the sims' compaction, GC, the page cache)
    const ORDERS = permutations(fleets.length + 1);
    // warm-up: JIT and GC of freshly opened watches, unmeasured
    for (const t of [...fleets, direct]) await burst(t, Math.min(total, 2 * W));
    for (const t of [...fleets, direct]) t.x = {};
    for (let r = 0; r < n; r++) {
      const order = ORDERS[r % ORDERS.length]!.map((k) => [direct, ...fleets][k]!);
      for (const t of order) await burst(t, total);
      // phases=<events/s>: then a fixed-rate phase each (phaseS seconds), the same order: added p99
      if (args.phases)
        for (const t of order) await burst(t, Number(args.phases) * phaseS, Number(args.phases));
      console.error(
        `round ${r + 1}/${n}: ${order.map((t) => `${t.name} ${t.x.rate!.at(-1)!.toFixed(0)}/s`).join(', ')}`,
      );
    }
    if (args.strace)
      for (const t of fleets) {
        const stop = await straceStart(t.f!.pid);
        if (!stop) break;
        const before = t.x.rate!.length;
        await burst(t, total);
        const calls = [...(await stop())].sort((a, b) => b[1] - a[1]).slice(0, 6);
        const got = total - t.x.missing!.at(-1)!;
        for (const k of Object.keys(t.x)) t.x[k]!.length = before;
        console.log(
          `${t.name}: system calls per event (strace -c, one more burst): ${calls.map(([k, v]) => `${k} ${(v / got).toFixed(2)}`).join(', ')}`,
        );
      }
    const m = (t: (typeof fleets)[0], k: string, d = 1) => median(t.x[k]!).toFixed(d);
    for (const t of [direct, ...fleets]) {
      const vsDirect = t.x.rate!.map((x, i) => x / direct.x.rate![i]!);
      console.log(
        `${t.name}: delivered ${m(t, 'rate', 0)}/s (${median(vsDirect).toFixed(2)}x direct, per round ${vsDirect.map((x) => x.toFixed(2)).join(' ')}), ` +
          `p99 ${m(t, 'p99')} ms, fleet CPU ${t.f ? `${m(t, 'fleetUs')} µs/event` : '-'}, client ${m(t, 'clientUs')} µs/event, ` +
          `${m(t, 'reads', 2)} reads and ${m(t, 'bytes', 0)} bytes per event, missing ${t.x.missing!.reduce((a, b) => a + b, 0)}`,
      );
    }
    if (args.phases)
      for (const t of fleets) {
        const added = t.x.phaseP99!.map((p, i) => p - direct.x.phaseP99![i]!);
        console.log(
          `${t.name}: at ${args.phases} events/s (${phaseS} s phases) p50 ${m(t, 'phaseP50', 2)} ms, p99 ${m(t, 'phaseP99', 2)} ms (direct ${m(direct, 'phaseP99', 2)}); added p99 median ${median(added).toFixed(2)} ms, per round ${added.map((x) => x.toFixed(1)).join(' ')}`,
        );
      }
    if (fleets.length === 2) {
      const [a, b] = fleets as [(typeof fleets)[0], (typeof fleets)[0]];
      const per = (k: string) => a.x[k]!.map((v, i) => b.x[k]![i]! / v);
      for (const k of ['fleetUs', 'clientUs', 'rate', 'p99'])
        console.log(
          `${b.name} ÷ ${a.name} ${k} per round: ${per(k)
            .map((x) => x.toFixed(2))
            .join(' ')}; median ${median(per(k)).toFixed(2)}`,
        );
    }
  } finally {
    for (const t of fleets) t.f?.stop();
    child.kill();
  }
}

if (process.argv[2] === 'sims') await simsProcess();
else
  await main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );

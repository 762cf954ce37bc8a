/**
 * Same-run A/B of fleet builds on canned clusters, per answer: CPU by thread (main vs V8's helper threads,
 * user/sys, from /proc), GC counts by kind (a PerformanceObserver through the inspector), heap and external
 * memory, idle and peak RSS. Builds are asked in turn, answer by answer.
 *   npx tsx bench/lib/scale-ab.ts shapes=10x1000,200x50 n=6 bundles=base:/tmp/base.js,cur:/tmp/cur.js \
 *     [runs=5] [nodeargs="--trace-gc" out=1]
 * A bundle may carry node options of its own after a second colon (`semi8:/tmp/cur.js:--max-semi-space-size=8`,
 * several separated by spaces): one build under two settings, side by side. A `NAME=value` among them is
 * set in the process's environment instead: the floor proxy's way of reading and writing beside the fleet,
 * `floor:bench/lib/floor-proxy.mjs:FLOOR_CLIENT=socket` (./floor-proxy.mjs).
 * `runs`: the whole comparison again with fresh processes, medians across them at the end. A fleet process
 * settles early into a way of collecting (scavenges only, or a mark-compact every answer or two: 0 vs 16-22
 * per 6 answers of 10 x 1,000 for one build) that then sets its CPU per answer more than the build does, so
 * one process per build is one sample, however many answers it gives.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';
import { procMemory, resetPeak } from './proc.ts';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);
const shapes = (args.shapes ?? '10x1000,200x50')
  .split(',')
  .map((s) => s.split('x').map(Number) as [number, number]);
const n = Number(args.n ?? 6);
const bundles = (args.bundles ?? 'cur:.cache/bench/node/main.js').split(',').map((b) => {
  const [name, bundle, own] = b.split(':') as [string, string, string?];
  const opts = own ? own.split(' ') : [];
  const env = Object.fromEntries(
    opts
      .filter((o) => /^[A-Z_]+=/.test(o))
      .map((o) => [o.slice(0, o.indexOf('=')), o.slice(o.indexOf('=') + 1)]),
  );
  return [name, bundle, opts.filter((o) => !/^[A-Z_]+=/.test(o)), env] as const;
});
const nodeArgs = args.nodeargs ? args.nodeargs.split(' ') : [];
const runs = Number(args.runs ?? 1);

function threads(pid: number): Map<string, { u: number; s: number }> {
  const out = new Map<string, { u: number; s: number }>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const st = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    const name = t === String(pid) ? 'main' : comm.replace(/\d+$/, '#');
    const prev = out.get(name) ?? { u: 0, s: 0 };
    out.set(name, { u: prev.u + Number(f[11]) * 10, s: prev.s + Number(f[12]) * 10 });
  }
  return out;
}

function get(url: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  return new Promise((res, rej) => {
    request(url, { headers: { Accept: 'application/json' } }, (r) => {
      let bytes = 0;
      r.on('data', (c: Buffer) => (bytes += c.length));
      r.on('end', () => res({ ms: performance.now() - t0, bytes }));
      r.on('error', rej);
    })
      .on('error', rej)
      .end();
  });
}

const GC_OBS = `globalThis.__gc = { n: 0, ms: 0, kinds: {} }; new PerformanceObserver((l) => { for (const e of l.getEntries()) { __gc.n++; __gc.ms += e.duration; const k = e.detail?.kind ?? e.kind; __gc.kinds[k] = (__gc.kinds[k] || 0) + 1; } }).observe({ entryTypes: ['gc'] }); 1`;
/** per build and shape ("name WxP"), each run's median µs of CPU per item and its mark-compacts */
const results = new Map<string, { us: number[]; mc: number[] }>();
const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
const canned = await startCanned();
try {
  for (let run = 0; run < runs; run++)
    for (const [clusters, pods] of shapes) {
      const reply = await canned.serve({ clusters, pods, latencyMs: 20 });
      const config = cannedFleetConfig(reply.urls);
      const fleets = [];
      for (const [name, bundle, own, env] of bundles)
        fleets.push({
          name,
          f: await startFleetProcess(config, {
            bundle,
            env,
            nodeArgs: [...nodeArgs, ...own],
            inspect: true,
            ...(args.out ? { onOutput: (t: string) => process.stderr.write(`[${name}] ${t}`) } : {}),
          }),
        });
      for (const { f } of fleets) for (let i = 0; i < 2; i++) await get(`${f.url}/api/v1/pods`);
      await new Promise((r) => setTimeout(r, 300));
      const acc = fleets.map(() => ({
        cpu: new Map<string, { u: number; s: number }>(),
        ms: [] as number[],
        /** each answer's CPU (all threads), for the median */
        answerCpu: [] as number[],
        bytes: 0,
        idle: 0,
        peak: 0,
      }));
      for (const { f } of fleets) await f.evaluate(GC_OBS);
      fleets.forEach(({ f }, k) => {
        acc[k]!.idle = procMemory(f.pid)?.rss ?? 0;
        resetPeak(f.pid);
      });
      for (let i = 0; i < n; i++)
        for (const [k, { f }] of fleets.entries()) {
          const a = threads(f.pid);
          const r = await get(`${f.url}/api/v1/pods`);
          const b = threads(f.pid);
          let answerCpu = 0;
          for (const [t, v] of b) {
            const p = a.get(t) ?? { u: 0, s: 0 };
            const c = acc[k]!.cpu.get(t) ?? { u: 0, s: 0 };
            acc[k]!.cpu.set(t, { u: c.u + v.u - p.u, s: c.s + v.s - p.s });
            answerCpu += v.u - p.u + v.s - p.s;
          }
          acc[k]!.answerCpu.push(answerCpu);
          acc[k]!.ms.push(r.ms);
          acc[k]!.bytes = r.bytes;
        }
      for (const [k, { f }] of fleets.entries()) {
        (acc[k] as any).gc = await f.evaluate(
          'JSON.stringify({...globalThis.__gc, ms: Math.round(__gc.ms)})',
        );
        (acc[k] as any).mem = await f.evaluate(
          '(() => { const m = process.memoryUsage(); return Object.entries(m).map(([k, v]) => k + " " + (v / 1048576).toFixed(1)).join(", "); })()',
        );
        (acc[k] as any).memgc = await f.memory(true);
      }
      fleets.forEach(({ name, f }, k) => {
        const a = acc[k]!;
        console.log(
          `  gc over ${n} answers: ${(a as any).gc}; mem ${(a as any).mem}; after full gc heapUsed ${((a as any).memgc.heapUsed / 1048576).toFixed(1)} heapTotal ${((a as any).memgc.heapTotal / 1048576).toFixed(1)} ext ${((a as any).memgc.external / 1048576).toFixed(1)} ab ${((a as any).memgc.arrayBuffers / 1048576).toFixed(1)} rss ${((a as any).memgc.rss / 1048576).toFixed(1)}`,
        );
        a.peak = procMemory(f.pid)?.hwm ?? 0;
        const med = [...a.ms].sort((x, y) => x - y)[a.ms.length >> 1]!;
        // the median answer's CPU: on a shared machine one answer's neighbour can double the mean
        const cpuMed = [...a.answerCpu].sort((x, y) => x - y)[a.answerCpu.length >> 1]!;
        const r = results.get(`${name} ${clusters}x${pods}`) ?? { us: [], mc: [] };
        r.us.push((cpuMed * 1000) / (clusters * pods));
        r.mc.push(JSON.parse((a as any).gc).kinds['4'] ?? 0);
        results.set(`${name} ${clusters}x${pods}`, r);
        let tu = 0,
          ts = 0;
        const per = [...a.cpu]
          .filter(([, v]) => v.u + v.s > 0)
          .map(([t, v]) => {
            tu += v.u;
            ts += v.s;
            return `${t} ${(v.u / n).toFixed(0)}u+${(v.s / n).toFixed(0)}s`;
          });
        console.log(
          `${clusters}x${pods} ${name}: p50 ${med.toFixed(0)} ms, cpu/answer ${((tu + ts) / n).toFixed(0)} ms (median ${cpuMed} ms, ${((cpuMed * 1000) / (clusters * pods)).toFixed(1)} µs/item; ${(tu / n).toFixed(0)}u ${(ts / n).toFixed(0)}s) [${per.join(', ')}] bytes ${(a.bytes / 2 ** 20).toFixed(2)} MiB idle ${(a.idle / 2 ** 20).toFixed(1)} peak ${(a.peak / 2 ** 20).toFixed(1)} MiB`,
        );
        f.stop();
      });
    }
  for (const [name] of bundles) {
    const at = (s: [number, number]) => results.get(`${name} ${s.join('x')}`)!;
    const each = shapes.map(
      (s) =>
        `${s.join('x')} ${median(at(s).us).toFixed(1)} µs/item [${at(s)
          .us.map((u) => u.toFixed(0))
          .join(' ')}], mark-compacts ${median(at(s).mc)} [${at(s).mc.join(' ')}]`,
    );
    const ratio = shapes.length > 1 ? median(at(shapes.at(-1)!).us) / median(at(shapes[0]!).us) : 1;
    console.log(`${name}, medians of ${runs} run(s): ${each.join('; ')}; last / first ${ratio.toFixed(2)}`);
  }
} finally {
  await canned.stop();
}

/**
 * Where a merged JSON list's wall time goes beyond its CPU (issue 33), fleet against the floor proxy: canned
 * upstreams (10 clusters, +20 ms), fleet processes of one bundle each run with its own environment (the
 * knobs of ./list-timeline.patch), and the floor proxy (request:piece), asked in turn, the order reversed
 * every other round. Per process the median answer time and first byte (the client's), CPU per answer
 * (/proc), GC pause per answer (--trace-gc) and, from the patch's marks, how long the merge waited for an
 * upstream's next chunk ("starved": the fleet reads each cluster in turn, the floor all at once); TIMELINE=1
 * prints each process's first answer mark by mark (each cluster's head, first byte and end, each piece
 * written, each drain of the socket).
 *
 *   git apply bench/lib/list-timeline.patch && node scripts/build-node.mjs   # for the run only
 *   node --import tsx bench/lib/list-timeline.ts dist/node/main.js 13 base: ahead:LIST_AHEAD=8192,LIST_FRONT=2
 *   git apply -R bench/lib/list-timeline.patch
 *
 * A variant is `name:K=V,K=V` (its environment; NODEARGS=a+b: node flags); a name starting with `floor`
 * runs ./floor-proxy.mjs instead. The patch's knobs: LIST_AHEAD (KiB held process-wide by answers waiting
 * their turn, read ahead), LIST_FRONT (how many of those, oldest first, may read ahead), LIST_RHOLD (KiB the
 * answer being read holds before its connection pauses, 256), LIST_LOW=1 (its connection resumed once it
 * holds under half of that, not when it holds nothing), LIST_SLAB=1 (what is read ahead copied into 1 MiB
 * slabs, LIST_AHEAD of them in all, reused from answer to answer, instead of holding the socket's reads).
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';

const [bundle = 'dist/node/main.js', roundsS = '9', ...specs] = process.argv.slice(2);
if (specs.length === 0) specs.push('base:', 'floor:');
const pods = Number(process.env.TL_PODS ?? 1000);
const per = Number(process.env.TL_ANSWERS ?? 3);
const rounds = Number(roundsS);
const canned = await startCanned(2);
const reply = await canned.serve({ clusters: 10, pods, latencyMs: 20 });
const config = cannedFleetConfig(reply.urls);

interface Variant {
  name: string;
  p: Awaited<ReturnType<typeof startFleetProcess>>;
  /** the marks of each answer (the patch's `TL` lines) */
  marks: string[];
  gc: Record<string, number>;
  ms: number[];
  ttfb: number[];
  cpu: number[];
}
let measuring = false;
const variants: Variant[] = [];
for (const spec of specs) {
  const [name = 'x', envs = ''] = spec.split(':');
  const env: Record<string, string> = { LIST_TL: '1' };
  for (const kv of envs.split(',').filter(Boolean)) {
    const [k, v = ''] = kv.split('=');
    env[k!] = v;
  }
  const floor = name.startsWith('floor');
  if (floor) Object.assign(env, { FLOOR_CLIENT: 'request', FLOOR_WRITE: 'piece' }, env);
  const v = { name, marks: [], gc: {}, ms: [], ttfb: [], cpu: [] } as unknown as Variant;
  v.p = await startFleetProcess(config, {
    bundle: floor ? fileURLToPath(new URL('./floor-proxy.mjs', import.meta.url)) : bundle,
    env,
    nodeArgs: env.NODEARGS ? env.NODEARGS.split('+') : undefined,
    onOutput: (text) => {
      for (const l of text.split('\n')) {
        if (!measuring) continue;
        if (l.startsWith('TL ')) v.marks.push(l.slice(3));
        const gc = /ms: (Scavenge|Mark-Compact|Minor[\w-]*)[^,]*, ([\d.]+) \//.exec(l);
        if (gc) v.gc[gc[1]!] = (v.gc[gc[1]!] ?? 0) + Number(gc[2]);
      }
    },
  });
  variants.push(v);
}

/** user + system CPU ms of a process so far (10 ms ticks) */
function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

function once(url: string): Promise<{ ms: number; ttfb: number }> {
  const t0 = performance.now();
  let ttfb = 0;
  return new Promise((res, rej) => {
    get(`${url}/api/v1/pods`, { headers: { accept: 'application/json' } }, (r) => {
      r.once('data', () => {
        ttfb = performance.now() - t0;
      });
      r.on('data', () => {});
      r.on('end', () => res({ ms: performance.now() - t0, ttfb }));
    }).on('error', rej);
  });
}

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[(s.length - 1) >> 1]! : Number.NaN;
};

for (let i = 0; i < 3; i++) for (const v of variants) for (let k = 0; k < per; k++) await once(v.p.url);
await new Promise((r) => setTimeout(r, 200));
measuring = true;
for (let r = 0; r < rounds; r++) {
  for (const v of r % 2 ? [...variants].reverse() : variants) {
    const c0 = cpu(v.p.pid);
    const ms: number[] = [];
    const ttfb: number[] = [];
    for (let k = 0; k < per; k++) {
      const a = await once(v.p.url);
      ms.push(a.ms);
      ttfb.push(a.ttfb);
    }
    v.cpu.push((cpu(v.p.pid) - c0) / per);
    v.ms.push(median(ms));
    v.ttfb.push(median(ttfb));
  }
}
await new Promise((r) => setTimeout(r, 300));

type Mark = [number, string];
const num = (s: string, key: string) => Number(new RegExp(`${key}=([\\d.]+)`).exec(s)?.[1] ?? 0);
for (const v of variants) {
  const answers = v.marks.map((l) => JSON.parse(l) as Mark[]);
  const starved = answers.map((t) =>
    t
      .filter(([, s]) => s.startsWith('end ') || s.startsWith('srcend '))
      .reduce((a, [, s]) => a + num(s, 'starved'), 0),
  );
  const drains = answers.map((t) => {
    let w = 0;
    for (let j = 0; j + 1 < t.length; j++)
      if (/room=false/.test(t[j]![1]) && t[j + 1]![1] === 'drained') w += t[j + 1]![0] - t[j]![0];
    return w;
  });
  const lastHead = answers.map((t) =>
    Math.max(...t.filter(([, s]) => s.startsWith('head ')).map(([a]) => a)),
  );
  const firstWrite = answers.map((t) => t.find(([, s]) => s.startsWith('write '))?.[0] ?? Number.NaN);
  const ratio = variants[0]!.ms.map((m, i) => v.ms[i]! / m);
  const gc = Object.entries(v.gc).map(([k, ms]) => `${k} ${(ms / (rounds * per)).toFixed(1)}`);
  console.log(
    `${v.name.padEnd(10)} p50 ${median(v.ms).toFixed(1)} ms, first byte ${median(v.ttfb).toFixed(1)}, CPU ${median(v.cpu).toFixed(0)} ms/answer, ` +
      `GC ${gc.join(' ') || '-'} ms/answer; starved ${median(starved).toFixed(1)} ms, drain waits ${median(drains).toFixed(1)}, ` +
      `last head ${median(lastHead).toFixed(1)} → first write ${median(firstWrite).toFixed(1)}; ÷ ${variants[0]!.name} ${median(ratio).toFixed(3)} (${ratio.map((x) => x.toFixed(2)).join(' ')})`,
  );
  if (process.env.TIMELINE === '1' && answers[0])
    for (const [a, s] of answers[0]) console.log(`   ${a.toFixed(2).padStart(8)} ${s}`);
}
for (const v of variants) v.p.stop();
await canned.stop();
process.exit(0);

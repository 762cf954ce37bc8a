/**
 * Where a merged list's CPU per item goes as the clusters grow: one build profiled (V8 sampling, through
 * the inspector, answers only) at each shape, then every function's self time per item side by side, the
 * first shape against the last (the growth, in µs per item). Same total items, so growth is per-cluster cost.
 *   npx tsx bench/lib/scale-prof.ts shapes=10x1000,1000x10 n=6 bundle=<bundle> [top=40]
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';
import { areaOf } from './profile.ts';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);
const shapes = (args.shapes ?? '10x1000,1000x10')
  .split(',')
  .map((s) => s.split('x').map(Number) as [number, number]);
const n = Number(args.n ?? 6);
const top = Number(args.top ?? 40);

function get(url: string): Promise<void> {
  return new Promise((res, rej) => {
    request(url, { headers: { Accept: 'application/json' } }, (r) => {
      r.on('data', () => {});
      r.on('end', () => res());
      r.on('error', rej);
    })
      .on('error', rej)
      .end();
  });
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** self µs per function key, and per area, of one profile */
function selfTimes(path: string): { fns: Map<string, number>; areas: Map<string, number>; busy: number } {
  const p = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const f = byId.get(p.samples[i]!)!.callFrame;
    const us = p.timeDeltas[i] ?? 0;
    if (f.functionName === '(idle)') continue;
    busy += us;
    const where = f.url
      ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|src|deploy|bench)\//, '$1/')}:${f.lineNumber + 1}`
      : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    const a = areaOf(f);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  return { fns, areas, busy };
}

const dir = mkdtempSync(join(tmpdir(), 'scale-prof-'));
const canned = await startCanned();
const per: Array<{ shape: string; items: number } & ReturnType<typeof selfTimes>> = [];
try {
  for (const [clusters, pods] of shapes) {
    const reply = await canned.serve({ clusters, pods, latencyMs: 20 });
    const f = await startFleetProcess(cannedFleetConfig(reply.urls), { bundle: args.bundle, inspect: true });
    try {
      for (let i = 0; i < 3; i++) await get(`${f.url}/api/v1/pods`);
      await f.profileStart();
      for (let i = 0; i < n; i++) await get(`${f.url}/api/v1/pods`);
      const path = await f.profileStop(join(dir, `${clusters}x${pods}.cpuprofile`));
      per.push({ shape: `${clusters}x${pods}`, items: clusters * pods * n, ...selfTimes(path) });
      console.log(`${clusters}x${pods}: ${path}`);
    } finally {
      f.stop();
    }
  }
} finally {
  await canned.stop();
}
const first = per[0]!;
const last = per.at(-1)!;
const perItem = (x: typeof first, us = 0) => (us / (x.items / n) / n).toFixed(2);
console.log(`busy µs/item: ${per.map((x) => `${x.shape} ${perItem(x, x.busy)}`).join(', ')}`);
for (const [title, key] of [
  ['areas', 'areas'],
  ['functions', 'fns'],
] as const) {
  const keys = new Set([...first[key].keys(), ...last[key].keys()]);
  const rows = [...keys]
    .map((k) => ({
      k,
      a: (first[key].get(k) ?? 0) / first.items,
      b: (last[key].get(k) ?? 0) / last.items,
    }))
    .sort((x, y) => y.b - y.a - (x.b - x.a))
    .slice(0, key === 'areas' ? 20 : top);
  console.log(`\n${title}: µs/item ${first.shape} → ${last.shape} (growth)`);
  for (const r of rows)
    console.log(
      `  ${r.a.toFixed(2).padStart(6)} → ${r.b.toFixed(2).padStart(6)}  (+${(r.b - r.a).toFixed(2)})  ${r.k}`,
    );
}

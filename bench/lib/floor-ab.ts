/**
 * Whole-process CPU per MiB of a merged list against its floor, in one run (not a test, not a bench case):
 * canned upstreams (./canned.ts, 10 clusters, +20 ms), one fleet process per given build, and the floor
 * proxy (./floor-proxy.mjs: the same upstream client, the bodies only concatenated into the answer, no
 * scan), asked in turn answer by answer; the CPU of each process per MiB it answered (from /proc, 10 ms
 * ticks: answers of a few MiB or more), medians after two warm-up answers each.
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   (cd /tmp/base && node scripts/build-node.mjs)            # and the same for this tree's commit
 *   node --import tsx bench/lib/floor-ab.ts json 10 1000 /tmp/base/dist/node/main.js dist/node/main.js
 *
 * Builds are given as bundles (scripts/build-node.mjs) so a working tree others are editing is not what
 * runs. The floor is what reading ten upstream bodies and writing their bytes costs this process: no merge
 * in Node goes below it.
 */
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';
import { processCpuMs } from './stats.ts';

const [form = 'json', n = '10', podsS = '1000', ...bundles] = process.argv.slice(2);
const pods = Number(podsS);
const canned = await startCanned(2);
const reply = await canned.serve({ clusters: 10, pods, latencyMs: 20 });
const config = cannedFleetConfig(reply.urls);
const procs: Array<{ name: string; p: Awaited<ReturnType<typeof startFleetProcess>> }> = [];
for (const [k, b] of bundles.entries())
  procs.push({ name: `${k}:${b}`, p: await startFleetProcess(config, { bundle: b }) });
const floor = fileURLToPath(new URL('./floor-proxy.mjs', import.meta.url));
procs.push({ name: 'floor', p: await startFleetProcess(config, { bundle: floor }) });

const accept = form === 'table' ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json';
function once(url: string): Promise<number> {
  return new Promise((res, rej) => {
    get(`${url}/api/v1/pods`, { headers: { accept } }, (r) => {
      let bytes = 0;
      r.on('data', (d: Buffer) => {
        bytes += d.length;
      });
      r.on('end', () => (r.statusCode === 200 ? res(bytes) : rej(new Error(`status ${r.statusCode}`))));
      r.on('error', rej);
    }).on('error', rej);
  });
}

const per = procs.map(() => [] as number[]);
const size = procs.map(() => 0);
try {
  for (let r = 0; r < Number(n) + 2; r++)
    for (const [k, { p }] of procs.entries()) {
      const c0 = processCpuMs(p.pid)!;
      const bytes = await once(p.url);
      const ms = processCpuMs(p.pid)! - c0;
      size[k] = bytes;
      if (r >= 2) per[k]!.push(ms / (bytes / 2 ** 20));
    }
} finally {
  for (const { p } of procs) p.stop();
  await canned.stop();
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
console.log(`10×${pods} ${form}, CPU ms per MiB answered (median of ${n}):`);
for (const [k, { name }] of procs.entries())
  console.log(
    `  ${name}: ${med(per[k]!).toFixed(2)} (${(size[k]! / 2 ** 20).toFixed(1)} MiB; per answer ${per[k]!.map((x) => x.toFixed(1)).join(' ')})`,
  );
process.exit(0);

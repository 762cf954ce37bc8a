/**
 * A merged list's CPU in workerd, builds paired (not a test, not a bench case): canned upstreams
 * (./canned.ts, 10 clusters or WORKERD_AB_CLUSTERS, +20 ms), one workerd (miniflare) per worker bundle, each asked in turn for
 * the merged JSON list, the order rotated each round; the workerd process's CPU per MiB answered (from
 * /proc, 10 ms ticks; it runs the relay groups too), medians after two warm-up rounds, and per round
 * the ratio to the first bundle. This tree's bundle is built first (scripts/build-worker.mjs); others are
 * given, and must lie under the working directory (miniflare collects a bundle's modules from there):
 *
 *   (cd /tmp/base && node scripts/build-worker.mjs) && cp /tmp/base/dist/worker/worker.js .cache/base-worker.js
 *   node --import tsx bench/lib/workerd-ab.ts [rounds=9] [pods=1000] [answers=2] [bundle…]
 *
 * Floors to give beside it: bench/lib/floor-worker.mjs (bodies piped natively), floor-worker-js.mjs and
 * floor-worker-bulk.mjs (read in JavaScript 4 KiB or 64 KiB a read). WORKERD_AB_CLUSTERS=6: no relay.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { buildWorker, WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { descendantsNamed } from './proc.ts';

const [roundsS = '9', podsS = '1000', answersS = '2', ...given] = process.argv.slice(2);
const rounds = Number(roundsS);
const answers = Number(answersS);
const own = resolve('.cache/workerd-ab/worker.js');
await buildWorker(own);
const bundles = [own, ...given.map((b) => resolve(b))];

const canned = await startCanned(2);
// WORKERD_AB_CLUSTERS: 6 or fewer are read directly, more through relay groups (src/upstreams/relay.ts)
const clusters = Number(process.env.WORKERD_AB_CLUSTERS) || 10;
const reply = await canned.serve({ clusters, pods: Number(podsS), latencyMs: 20 });
const config = JSON.stringify(cannedFleetConfig(reply.urls));

function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const fleets: Array<{ name: string; mf: Miniflare; url: string; pid: number }> = [];
try {
  for (const [k, scriptPath] of bundles.entries()) {
    const before = new Set(descendantsNamed(process.pid, 'workerd'));
    const mf = new Miniflare({
      name: 'fleet',
      modules: true,
      scriptPath,
      ...WORKER_COMPATIBILITY,
      bindings: { FLEET_CONFIG: config },
      serviceBindings: { FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' } },
      host: '127.0.0.1',
      port: 0,
    });
    const url = (await mf.ready).origin;
    const pid = descendantsNamed(process.pid, 'workerd').find((p) => !before.has(p));
    if (pid === undefined) throw new Error('workerd process not found');
    fleets.push({ name: `${k}:${scriptPath}`, mf, url, pid });
  }
  const per = fleets.map(() => [] as number[]);
  for (let r = 0; r < rounds + 2; r++) {
    for (const k of fleets.map((_, i) => (i + r) % fleets.length)) {
      const f = fleets[k]!;
      const c0 = cpu(f.pid);
      let bytes = 0;
      for (let a = 0; a < answers; a++) {
        const res = await fetch(`${f.url}/api/v1/pods`, { headers: { accept: 'application/json' } }).catch(
          (e) => {
            throw new Error(`${f.name}: ${e}`);
          },
        );
        if (res.status !== 200) throw new Error(`${f.name}: status ${res.status}`);
        bytes += (
          await res.arrayBuffer().catch((e) => {
            throw new Error(`${f.name}: answer broke after its head: ${e} (${String(e.cause)})`);
          })
        ).byteLength;
      }
      if (r >= 2) per[k]!.push((cpu(f.pid) - c0) / (bytes / 2 ** 20));
    }
  }
  const med = (v: number[]) => [...v].sort((a, b) => a - b)[(v.length - 1) >> 1]!;
  console.log(
    `workerd, ${clusters}×${podsS} JSON, CPU ms per MiB answered (median of ${rounds} rounds × ${answers}):`,
  );
  for (const [k, f] of fleets.entries()) {
    const ratios = per[k]!.map((x, i) => x / per[0]![i]!);
    console.log(
      `  ${f.name}: ${med(per[k]!).toFixed(2)}  ×${med(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]`,
    );
  }
} finally {
  for (const f of fleets) await f.mf.dispose();
  await canned.stop();
}
process.exit(0);

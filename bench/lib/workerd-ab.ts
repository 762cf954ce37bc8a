import { resolve } from 'node:path';
import type { Miniflare } from 'miniflare';
import { buildWorker } from '../../scripts/build-worker.mjs';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { processCpuMs } from './stats.ts';
import { startWorkerdFleet } from './workerd.ts';

const [roundsS = '9', podsS = '1000', answersS = '2', ...given] = process.argv.slice(2);
const rounds = Number(roundsS);
const answers = Number(answersS);
const own = resolve('.cache/workerd-ab/worker.js');
await buildWorker(own);
const bundles = [own, ...given.map((b) => resolve(b))];

const canned = await startCanned(2);
// WORKERD_AB_CLUSTERS: 6 or fewer are read directly, more through relay groups (src/upstreams/relay.ts)
const clusters = Number(process.env.WORKERD_AB_CLUSTERS) || 10;
// WORKERD_AB_TABLE=1: the lists asked as Tables (kubectl get's)
const table = process.env.WORKERD_AB_TABLE === '1';
const accept = table ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json';
const reply = await canned.serve({ clusters, pods: Number(podsS), latencyMs: 20 });
const config = JSON.stringify(cannedFleetConfig(reply.urls));

const cpu = (pid: number) => processCpuMs(pid) ?? Number.NaN;

const fleets: Array<{ name: string; mf: Miniflare; url: string; pid: number }> = [];
try {
  for (const [k, scriptPath] of bundles.entries()) {
    const { mf, url, pid } = await startWorkerdFleet(scriptPath, config);
    fleets.push({ name: `${k}:${scriptPath}`, mf, url, pid });
  }
  const per = fleets.map(() => [] as number[]);
  for (let r = 0; r < rounds + 2; r++) {
    for (const k of fleets.map((_, i) => (i + r) % fleets.length)) {
      const f = fleets[k]!;
      const c0 = cpu(f.pid);
      let bytes = 0;
      for (let a = 0; a < answers; a++) {
        const res = await fetch(`${f.url}/api/v1/pods`, { headers: { accept } }).catch((e) => {
          throw new Error(`${f.name}: ${e}`);
        });
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
    `workerd, ${clusters}×${podsS} ${table ? 'Table' : 'JSON'}, CPU ms per MiB answered (median of ${rounds} rounds × ${answers}):`,
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

/**
 * When a merged list's first bytes leave, fleet builds against the floor proxy (./floor-proxy.mjs) over
 * the same canned 10×pods (+20 ms): per answer the time to the response head, to the first body byte and
 * to the last, asked in turn (rotated a place a round), medians after two warm-up rounds.
 *   node --import tsx bench/lib/firstbyte-ab.ts json 9 1000 <bundle>…
 */
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';

const [form = 'json', nS = '9', podsS = '1000', ...bundles] = process.argv.slice(2);
const accept = form === 'table' ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json';
const canned = await startCanned(2);
const reply = await canned.serve({ clusters: 10, pods: Number(podsS), latencyMs: 20 });
const config = cannedFleetConfig(reply.urls);
const procs: Array<{ name: string; url: string; stop(): void }> = [];
for (const [k, b] of bundles.entries()) {
  const p = await startFleetProcess(config, { bundle: b });
  procs.push({ name: `${k}:${b}`, url: p.url, stop: () => p.stop() });
}
const floor = await startFleetProcess(config, {
  bundle: fileURLToPath(new URL('./floor-proxy.mjs', import.meta.url)),
});
procs.push({ name: 'floor request:piece', url: floor.url, stop: () => floor.stop() });

function once(url: string): Promise<[number, number, number]> {
  const t0 = performance.now();
  return new Promise((res, rej) => {
    get(`${url}/api/v1/pods`, { headers: { accept } }, (r) => {
      const head = performance.now() - t0;
      let first = Number.NaN;
      r.on('data', () => {
        if (Number.isNaN(first)) first = performance.now() - t0;
      });
      r.on('end', () => res([head, first, performance.now() - t0]));
      r.on('error', rej);
    }).on('error', rej);
  });
}
const per = procs.map(() => [[], [], []] as number[][]);
try {
  for (let r = 0; r < Number(nS) + 2; r++)
    for (const k of [...procs.keys()].map((_, i) => (i + r) % procs.length)) {
      const t = await once(procs[k]!.url);
      if (r >= 2) for (let j = 0; j < 3; j++) per[k]![j]!.push(t[j]!);
    }
} finally {
  for (const p of procs) p.stop();
  await canned.stop();
}
const med = (v: number[]) => {
  const x = [...v].sort((a, b) => a - b);
  return x.length % 2 ? x[x.length >> 1]! : (x[x.length / 2 - 1]! + x[x.length / 2]!) / 2;
};
console.log(
  `10×${podsS} ${form}: median ms to head, first body byte, last byte; head → first byte; first byte ÷ the first's, per round (${nS} rounds)`,
);
for (const [k, p] of procs.entries()) {
  const [head, first, last] = per[k]!;
  const gap = first!.map((f, i) => f - head![i]!);
  const ratio = first!.map((f, i) => f / per[0]![1]![i]!);
  console.log(
    `  ${p.name}: ${[head!, first!, last!].map((v) => med(v).toFixed(1)).join(' / ')}; ${med(gap).toFixed(1)} ms; ×${med(ratio).toFixed(3)}`,
  );
}
process.exit(0);

/**
 * workerd cold start, paired by round: for each bundle (this tree's, minified as wrangler.toml asks, and
 * any `--base=<bundle.js>`), a fresh workerd (miniflare) is started and asked once for `/livez`. Per
 * round and bundle: the time until workerd is ready (the script parsed and evaluated: what a bundle's
 * size costs) and the first answer after it (the fleet built from FLEET_CONFIG, then the probe). The
 * bundles take turns within a round, so a noisy machine slows both; medians of the per-round ratios.
 * Run it once A/A (the tree's own bundle copied as `--base`) to see the machine's noise: on the shared
 * 2-core machine of issue 31, 11 A/A rounds read 1.18x ready and 0.63x first answer, so differences of
 * that size say nothing there.
 *
 *   node --import tsx bench/lib/worker-coldstart.ts [--base=<bundle.js>] [--rounds=7] [--out=<bundle.js>]
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { WORKER_BUILD, WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';

function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const CONFIG = JSON.stringify({
  controlPlane: { server: 'http://127.0.0.1:9' },
  authentication: { anonymous: { enabled: true } },
});

async function coldStart(scriptPath: string): Promise<{ readyMs: number; firstMs: number }> {
  const t0 = performance.now();
  const mf = new Miniflare({
    name: 'fleet',
    modules: true,
    scriptPath,
    ...WORKER_COMPATIBILITY,
    bindings: { FLEET_CONFIG: CONFIG },
    serviceBindings: { FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' } },
    host: '127.0.0.1',
    port: 0,
  });
  try {
    const url = await mf.ready;
    const t1 = performance.now();
    const res = await fetch(new URL('/livez', url));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/livez answered ${res.status}`);
    return { readyMs: t1 - t0, firstMs: performance.now() - t1 };
  } finally {
    await mf.dispose();
  }
}

const out = resolve(arg('out', '.cache/worker/coldstart.js'));
const r = await build({ ...WORKER_BUILD, minify: true, outfile: out, write: false });
writeFileSync(out, r.outputFiles[0]!.contents);
const bundles: [string, string][] = [['this tree', out]];
const base = arg('base', '');
if (base) bundles.push(['base', resolve(base)]);
const rounds = Number(arg('rounds', '7'));
const seen = new Map<string, { readyMs: number; firstMs: number }[]>(bundles.map(([n]) => [n, []]));
// one unmeasured start: the first workerd of a run pays for the binary's own page-in
await coldStart(out);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 ? [...bundles].reverse() : bundles;
  for (const [name, path] of order) seen.get(name)!.push(await coldStart(path));
  console.log(
    `round ${i + 1}: ${bundles.map(([n]) => `${n} ready ${seen.get(n)!.at(-1)!.readyMs.toFixed(0)} ms, first answer ${seen.get(n)!.at(-1)!.firstMs.toFixed(1)} ms`).join('; ')}`,
  );
}
for (const [name] of bundles) {
  const s = seen.get(name)!;
  console.log(
    `${name}: median ready ${median(s.map((x) => x.readyMs)).toFixed(0)} ms, first answer ${median(s.map((x) => x.firstMs)).toFixed(1)} ms`,
  );
}
if (base) {
  const a = seen.get('this tree')!;
  const b = seen.get('base')!;
  const ratio = (k: 'readyMs' | 'firstMs') => median(a.map((x, i) => x[k] / b[i]![k])).toFixed(2);
  console.log(
    `this tree / base, median of paired rounds: ready ${ratio('readyMs')}x, first answer ${ratio('firstMs')}x`,
  );
}

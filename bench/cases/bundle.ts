/**
 * The minified worker bundle (budget 1 MiB, issue 31; the platform's own limit is megabytes, and what a
 * bundle's size costs is measured as workerd cold start, bench/lib/worker-coldstart.ts): src/worker.ts bundled as wrangler does it for
 * `npm run build:worker` (esbuild, ESM, the workers conditions, `minify = true`, `keep_names` and the
 * `[alias]` table as in wrangler.toml, scripts/build-worker.mjs: `wrangler deploy --dry-run --outdir
 * dist/worker` writes the same size within 0.2%), in the
 * harness's own process: no upstream, no load. Gzip size beside it (what the upload counts against limits).
 */
import { gzipSync } from 'node:zlib';
import { WORKER_BUILD } from '../../scripts/build-worker.mjs';
import { fmt } from '../lib/report.ts';
import type { BenchCase, CustomResult } from './types.ts';

export const BUNDLE_GOAL_BYTES = 1024 * 1024;

async function runBundle(): Promise<CustomResult> {
  const { build } = await import('esbuild');
  const r = await build({ ...WORKER_BUILD, minify: true, write: false, metafile: true });
  const out = r.outputFiles[0]!;
  const bytes = out.contents.length;
  const gz = gzipSync(out.contents).length;
  // the largest inputs, to say where the size goes
  const inputs = Object.values(r.metafile.outputs)[0]?.inputs ?? {};
  const byPkg = new Map<string, number>();
  for (const [path, v] of Object.entries(inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
    const key = m ? m[1]! : path.split('/').slice(0, 2).join('/');
    byPkg.set(key, (byPkg.get(key) ?? 0) + v.bytesInOutput);
  }
  const top = [...byPkg].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return {
    text: [
      `   src/worker.ts, esbuild as wrangler bundles it, minified: ${fmt.bytes(bytes)} (gzip ${fmt.bytes(gz)})`,
      `   largest parts (minified bytes in the output): ${top.map(([k, v]) => `${k} ${fmt.bytes(v)}`).join(', ')}`,
    ].join('\n'),
    goals: [
      {
        goal: `minified worker bundle ≤ ${fmt.bytes(BUNDLE_GOAL_BYTES)}`,
        ok: bytes <= BUNDLE_GOAL_BYTES,
        detail: `${fmt.bytes(bytes)} (${fmt.x(bytes / BUNDLE_GOAL_BYTES)} of the budget; gzip ${fmt.bytes(gz)})`,
      },
    ],
    figures: { bytes, gzipBytes: gz, parts: Object.fromEntries(top) },
  };
}

export const bundleCase: BenchCase = {
  name: 'worker-bundle',
  title: 'size of the minified worker bundle',
  run: runBundle,
};

// Bundles the worker entry the way wrangler does (esbuild, ESM, worker conditions) into one file, for
// tests that run it in workerd through miniflare. `npm run build:worker` uses wrangler itself.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

/** wrangler keeps function and class names unless wrangler.toml says `keep_names = false` */
const keepNames = !/^keep_names\s*=\s*false\b/m.test(
  readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8'),
);

/** esbuild's options for the worker, as wrangler bundles it (the bench measures them minified). */
export const WORKER_BUILD = {
  entryPoints: ['src/worker.ts'],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  conditions: ['workerd', 'worker', 'browser', 'import'],
  mainFields: ['browser', 'module', 'main'],
  // provided by the Workers runtime itself
  external: ['cloudflare:*'],
  keepNames,
  sourcemap: false,
  logLevel: 'warning',
};

export async function buildWorker(outfile) {
  const r = await build({ ...WORKER_BUILD, outfile, metafile: true, minify: false });
  return r.metafile.outputs[outfile]?.bytes ?? 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2] ?? 'dist/worker/worker.js';
  const bytes = await buildWorker(out);
  console.log(`${out}: ${(bytes / 1024).toFixed(1)} KiB`);
}

// Bundles the worker entry the way wrangler does (esbuild, ESM, worker conditions) into one file, for
// tests that run it in workerd through miniflare. `npm run build:worker` uses wrangler itself.
import { build } from 'esbuild';

export async function buildWorker(outfile) {
  const r = await build({
    entryPoints: ['src/worker.ts'],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser', 'import'],
    mainFields: ['browser', 'module', 'main'],
    outfile,
    // provided by the Workers runtime itself
    external: ['cloudflare:*'],
    metafile: true,
    minify: false,
    sourcemap: false,
    logLevel: 'warning',
  });
  return r.metafile.outputs[outfile]?.bytes ?? 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2] ?? 'dist/worker/worker.js';
  const bytes = await buildWorker(out);
  console.log(`${out}: ${(bytes / 1024).toFixed(1)} KiB`);
}

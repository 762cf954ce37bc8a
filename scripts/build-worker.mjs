// Bundles the worker entry the way wrangler does (esbuild, ESM, worker conditions) into one file, for
// tests that run it in workerd through miniflare. `npm run build:worker` uses wrangler itself.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const wranglerToml = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');

/** wrangler keeps function and class names unless wrangler.toml says `keep_names = false` */
const keepNames = !/^keep_names\s*=\s*false\b/m.test(wranglerToml);

/** wrangler.toml's `[alias]` table (`"module" = "./path"`), each path from the project's folder, as wrangler resolves it */
function aliases(toml) {
  const table = /^\[alias\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml)?.[1] ?? '';
  const out = {};
  for (const m of table.matchAll(/^\s*"([^"]+)"\s*=\s*"([^"]+)"/gm))
    out[m[1]] = fileURLToPath(new URL(`../${m[2]}`, import.meta.url));
  return out;
}

/**
 * A `.wasm` import stays an import, of the file copied beside the bundle, as wrangler does: Workers take a
 * module bundled at build time (a `WebAssembly.Module`) and refuse compiling bytes at run time
 * (src/merge/jsonsplit/wasm/lane.ts); miniflare loads it by WORKER_COMPATIBILITY's modulesRules.
 */
const wasmBeside = {
  name: 'wasm-beside',
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (args) => {
      const file = resolve(args.resolveDir, args.path);
      const out = b.initialOptions.outfile;
      if (out) {
        mkdirSync(dirname(out), { recursive: true });
        copyFileSync(file, join(dirname(out), basename(file)));
      }
      return { path: `./${basename(file)}`, external: true };
    });
  },
};

/** esbuild's options for the worker, as wrangler bundles it (the bench measures them minified). */
export const WORKER_BUILD = {
  entryPoints: ['src/worker.ts'],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  conditions: ['workerd', 'worker', 'browser', 'import'],
  mainFields: ['browser', 'module', 'main'],
  // provided by the Workers runtime itself (node:crypto with the `nodejs_compat` flag: src/merge/names/hash.ts)
  external: ['cloudflare:*', 'node:crypto'],
  keepNames,
  // modules wrangler.toml swaps for others (js-yaml: JSON only on Workers)
  alias: aliases(wranglerToml),
  plugins: [wasmBeside],
  sourcemap: false,
  logLevel: 'warning',
};

/** wrangler.toml's compatibility date and flags, for whatever runs the bundle in workerd (miniflare) */
export const WORKER_COMPATIBILITY = {
  compatibilityDate: /^compatibility_date\s*=\s*"([^"]+)"/m.exec(wranglerToml)?.[1],
  compatibilityFlags: [
    ...(/^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(wranglerToml)?.[1].matchAll(/"([^"]+)"/g) ?? []),
  ].map((m) => m[1]),
  // a .wasm the bundle imports is a compiled module, as wrangler's default rules make it (miniflare then
  // collects the bundle's modules from the working directory: a bundle run must lie under it)
  modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
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

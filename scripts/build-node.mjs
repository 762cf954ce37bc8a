// Bundles the Node entry (deploy/node/main.ts) into one file, dependencies kept external (installed by
// `npm ci --omit=dev`), so production runs plain `node` without tsx. `npm run build:node` writes
// dist/node/main.js; the tests and the bench bundle the same way into a file of their own.
import { build } from 'esbuild';

export async function buildNode(outfile, opts = {}) {
  await build({
    entryPoints: ['deploy/node/main.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    sourcemap: opts.sourcemap ?? false,
    logLevel: opts.logLevel ?? 'warning',
  });
  return outfile;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildNode('dist/node/main.js', { sourcemap: true, logLevel: 'info' });
}

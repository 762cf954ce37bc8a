// Bundles the Node entry (deploy/node/main.ts) into dist/node/main.js: one file, dependencies kept
// external (installed by `npm ci --omit=dev`), so production runs plain `node` without tsx.
import { build } from 'esbuild';

await build({
  entryPoints: ['deploy/node/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outfile: 'dist/node/main.js',
  sourcemap: true,
  logLevel: 'info',
});

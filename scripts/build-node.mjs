// Bundles the Node entry (deploy/node/main.ts) into one file, dependencies kept external (installed by
// `npm ci --omit=dev`), so production runs plain `node` without tsx. `npm run build:node` writes
// dist/node/main.js; the tests and the bench bundle the same way into a file of their own.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * V8 keeps a script's source in memory for as long as it runs, one byte per character when every
 * character is Latin-1, two otherwise. esbuild escapes what is not ASCII in strings, not in regular
 * expressions or the comments it keeps (a few "…", "≤" in doc comments and a "µs" in a pattern made the
 * whole 1.3 MB source two bytes per character: 2.6 MB of heap in every process). Escaped here as \uXXXX:
 * in a pattern it matches the same character, in a comment it changes nothing that runs.
 */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every non-ASCII character
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== text) writeFileSync(file, ascii);
}

/** how the fleet's Node code is bundled (bench/lib/bundled-ab.ts bundles the merge's modules the same way) */
export const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  charset: 'ascii',
};

export async function buildNode(outfile, opts = {}) {
  await build({
    ...NODE_BUNDLE,
    entryPoints: ['deploy/node/main.ts'],
    outfile,
    sourcemap: opts.sourcemap ?? false,
    logLevel: opts.logLevel ?? 'warning',
  });
  asciiOnly(outfile);
  // the item scanner's WebAssembly lane, read beside the bundle (src/platform/node.ts nodeScannerWasm)
  const wasm = fileURLToPath(new URL('../src/merge/jsonsplit/wasm/skip.wasm', import.meta.url));
  copyFileSync(wasm, join(dirname(outfile), 'skip.wasm'));
  return outfile;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildNode('dist/node/main.js', { sourcemap: true, logLevel: 'info' });
}

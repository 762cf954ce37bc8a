/**
 * Modules of a tree bundled as scripts/build-node.mjs bundles the fleet (NODE_BUNDLE: esm, node20, ASCII,
 * packages external), then imported: in-process benches of bundled code (esbuild turns a module's
 * constants into `var`s a bench under tsx never sees). Used by bundled-ab.ts and wfacts-proto.ts.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../../scripts/build-node.mjs';

const OUT = resolve(import.meta.dirname, '../../.cache/bundled-ab');

/** `entry` (TypeScript source whose imports resolve from `root`) bundled as `<name>.mjs` and imported */
export async function bundleEntry(root: string, entry: string, name: string): Promise<any> {
  mkdirSync(OUT, { recursive: true });
  const outfile = resolve(OUT, `${name}.mjs`);
  await build({
    ...NODE_BUNDLE,
    stdin: { contents: entry, resolveDir: root, loader: 'ts', sourcefile: 'entry.ts' },
    outfile,
    logLevel: 'warning',
  });
  return import(`${outfile}?${Date.now()}`);
}

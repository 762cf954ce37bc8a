/**
 * The item scanner's WebAssembly lane in workerd (miniflare): skip.wasm reaches the isolate as a module
 * bundled at build time (scripts/build-worker.mjs, as wrangler bundles it), instantiates there (SIMD), and
 * answers as the JavaScript lane on every prefix of loose JSON, and the item scanner reading its tape notes
 * the facts the JavaScript scan notes. The worker is
 * test/e2e/fixtures/scanner-wasm-worker.ts.
 */
import { resolve } from 'node:path';
import { build } from 'esbuild';
import fc from 'fast-check';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_BUILD, WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';
import { looseJson, seeded } from '../helpers/loosejson.ts';

const BUNDLE = resolve('.cache/scanner-wasm-worker/worker.js');
let mf: Miniflare;

beforeAll(async () => {
  await build({
    ...WORKER_BUILD,
    entryPoints: ['test/e2e/fixtures/scanner-wasm-worker.ts'],
    outfile: BUNDLE,
  });
  mf = new Miniflare({ name: 'scanner-wasm', modules: true, scriptPath: BUNDLE, ...WORKER_COMPATIBILITY });
  await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

async function ask(text: string): Promise<{ wasm: boolean; tape: boolean; differ: string[]; end: number }> {
  const r = await mf.dispatchFetch('http://scanner/', { method: 'POST', body: text });
  return (await r.json()) as { wasm: boolean; tape: boolean; differ: string[]; end: number };
}

describe('the item scanner in workerd', () => {
  it('runs skip.wasm, which answers as the JavaScript lane', async () => {
    const text = '{"a":["x\\u00e9y",1.5e3,true,{"b":null}],"c":"0123456789abcdefXYZ"} ';
    expect(await ask(text)).toEqual({ wasm: true, tape: true, differ: [], end: text.length - 1 });
  });

  it("reads an item's facts from the lane's tape as the JavaScript scan notes them", async () => {
    const item =
      '{"kind":"Pod","metadata":{"name":"p","resourceVersion":"9","labels":{"fleet.karmada.io/cluster":"c"},' +
      '"ownerReferences":[{"name":"o","name":"o2"}]},"spec":{"nodeName":"n","containers":[{"a":[1]}]},"status":{}} ';
    expect(await ask(item)).toEqual({ wasm: true, tape: true, differ: [], end: item.length - 1 });
  });

  it('agrees on every prefix of loose and broken JSON', async () => {
    const texts = fc.sample(fc.tuple(fc.jsonValue({ maxDepth: 5 }), fc.integer(), fc.nat()), {
      numRuns: 60,
      seed: 33,
    });
    for (const [v, seed, cut] of texts) {
      let t = `${looseJson(v, seeded(seed), { keyEscapes: 0.3 })} `;
      // every third one broken somewhere: a byte dropped
      if (cut % 3 === 0 && t.length > 2) t = t.slice(0, cut % t.length) + t.slice((cut % t.length) + 1);
      if (t.trimStart() !== t) continue;
      expect((await ask(t)).differ).toEqual([]);
    }
  });
});

/**
 * The list splitter alone, this tree against another checkout, in one process (not a test, not a bench case):
 *   node --import tsx bench/lib/splitter-ab.ts <checkout> [wasm|js] [rounds=11] [pods=3000]
 * The canned pods (./canned-bodies.ts) as one list body in 64 KiB chunks through each tree's ListSplitter
 * (its item scanner on the wasm lane, or JavaScript), the trees in turn, the order swapped every other
 * round, CPU per MiB (medians) and the per-round ratio other/this; with the wasm lane also the bytes each
 * copied into wasm memory per body byte. Where merge-ab measures the merge, this isolates the scanner.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { makeBase, nth } from './canned-bodies.ts';

const [other, lane = 'wasm', r = '11', p = '3000'] = process.argv.slice(2);
if (!other) throw new Error('usage: splitter-ab.ts <checkout> [wasm|js] [rounds] [pods]');
const js = lane === 'js';
const rounds = Number(r);
const trees = [resolve(other), resolve(new URL('../..', import.meta.url).pathname)];
const nodeEqual = (m: Uint8Array, b: Uint8Array, at: number) =>
  Buffer.prototype.compare.call(m, b, at, at + m.length) === 0;

interface Tree {
  ListSplitter: new (o: object) => { push(c: Uint8Array, emit: (e: any) => void): void; end(): void };
  lane: { sharedWasmSkip(): { copied: number } | undefined };
}
const loaded: Tree[] = [];
for (const t of trees) {
  const split = await import(`${t}/src/merge/jsonsplit/index.ts`);
  const lanes = await import(`${t}/src/merge/jsonsplit/wasm/lane.ts`);
  (await import(`${t}/src/merge/jsonsplit/memo.ts`)).useNativeEquality(nodeEqual);
  if (!js)
    lanes.useWasmScanner(new WebAssembly.Module(readFileSync(`${t}/src/merge/jsonsplit/wasm/skip.wasm`)));
  loaded.push({ ListSplitter: split.ListSplitter, lane: lanes });
}

const base = await makeBase();
const texts = Array.from({ length: Number(p) }, (_, i) => nth(base.items, i, false));
const body = new TextEncoder().encode(
  `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[${texts.join(',')}]}`,
);
const chunks: Uint8Array[] = [];
for (let o = 0; o < body.length; o += 65536) chunks.push(body.slice(o, o + 65536));
let sink = 0;
const run = (t: Tree) => () => {
  const s = new t.ListSplitter({ arrayKey: 'items' });
  for (const c of chunks)
    s.push(c, (e) => {
      if (e.type === 'item') sink += e.bytes.length + (e.facts ? e.facts.mdTo : 0);
    });
  s.end();
};
const cpu = (f: () => void) => {
  const t = process.cpuUsage();
  for (let k = 0; k < 3; k++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 3000;
};
const [a, b] = loaded.map(run) as [() => void, () => void];
for (let w = 0; w < 3; w++) {
  a();
  b();
}
const ta: number[] = [];
const tb: number[] = [];
for (let k = 0; k < rounds; k++) {
  if (k % 2) {
    tb.push(cpu(b));
    ta.push(cpu(a));
  } else {
    ta.push(cpu(a));
    tb.push(cpu(b));
  }
}
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
const mib = body.length / 2 ** 20;
const ratios = ta.map((x, k) => x / tb[k]!);
console.log(
  `${js ? 'js' : 'wasm'} lane: other ${(med(ta) / mib).toFixed(3)} ms/MiB, this ${(med(tb) / mib).toFixed(3)} ms/MiB, other/this ${med(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]`,
);
if (!js)
  for (const [k, t] of loaded.entries()) {
    const lane = t.lane.sharedWasmSkip();
    const before = lane?.copied ?? 0;
    run(t)();
    const per = ((lane?.copied ?? 0) - before) / body.length;
    console.log(`${k ? 'this' : 'other'}: bytes copied into wasm memory per body byte ${per.toFixed(4)}`);
  }
if (sink === 0.5) console.log('');

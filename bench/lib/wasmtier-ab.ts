/**
 * The scanner's WebAssembly compiled by V8's two tiers, paired in one process (not a test): a fleet process
 * sets `--liftoff-only` on itself (deploy/node/memory.ts: undici's llhttp must not be optimised), so a
 * skip.wasm compiled after that runs on the baseline compiler for good; one compiled before it with
 * `--no-liftoff` runs TurboFan's code. Both modules come from the same bytes; the flags are then left as a
 * fleet has them. Per round each module in turn (the order swapped every other round), CPU time:
 * (1) the item scanner over the canned pods and Table rows, 64 KiB chunks (as wasmbench.ts tape);
 * (2) the merged list's work in this process (./canned-merge.ts), 10 × 1,000 JSON and Table.
 *   node --import tsx bench/lib/wasmtier-ab.ts [rounds=9]
 * Prints ns per byte or ms per MiB (medians) and the median per-round ratio baseline ÷ TurboFan.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { ITEM, ItemScanner, ROW } from '../../src/merge/jsonsplit/item.ts';
import { useWasmScanner } from '../../src/merge/jsonsplit/wasm/lane.ts';
import { useNativeEquality } from '../../src/watch/read.ts';
import { itemChunks, makeBase } from './canned-bodies.ts';
import { benchmarkMerge } from './canned-merge.ts';

const bytes = readFileSync(new URL('../../src/merge/jsonsplit/wasm/skip.wasm', import.meta.url));
setFlagsFromString('--liftoff-only');
const baseline = new WebAssembly.Module(bytes);
// V8 compiles a module's functions lazily, at their first call, with the flags set then: eagerly here
setFlagsFromString('--no-liftoff-only');
setFlagsFromString('--no-liftoff');
setFlagsFromString('--no-wasm-lazy-compilation');
// an empty custom section: other wire bytes, so V8's module cache does not hand back the baseline's code
const turbofan = new WebAssembly.Module(new Uint8Array([...bytes, 0, 2, 1, 0x74]));
setFlagsFromString('--wasm-lazy-compilation');
setFlagsFromString('--liftoff');
setFlagsFromString('--liftoff-only');

const rounds = Number(process.argv[2]) || 9;
const nodeEqual = (m: Uint8Array, b: Uint8Array, at: number) =>
  Buffer.prototype.compare.call(m, b, at, at + m.length) === 0;
useNativeEquality(nodeEqual);
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
const cpuMs = (f: () => unknown) => {
  const t0 = process.cpuUsage();
  f();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
};

/** per round [baseline, turbofan] in turn, the order swapped every other round */
async function pairedRounds(run: (m: WebAssembly.Module) => Promise<number> | number) {
  const lo: number[] = [];
  const tf: number[] = [];
  for (let w = 0; w < 2; w++) for (const m of [baseline, turbofan]) await run(m);
  for (let r = 0; r < rounds; r++)
    for (const m of r % 2 ? [turbofan, baseline] : [baseline, turbofan])
      (m === baseline ? lo : tf).push(await run(m));
  return { lo: med(lo), tf: med(tf), ratio: med(lo.map((x, k) => x / tf[k]!)) };
}

const base = await makeBase();
let sink = 0;
for (const rows of [false, true]) {
  const pods = 2000;
  const { body, chunks } = itemChunks(base, rows, pods);
  const scanners = new Map([baseline, turbofan].map((m) => [m, new ItemScanner(nodeEqual, undefined, m)]));
  const ctx = rows ? ROW : ITEM;
  const r = await pairedRounds((m) =>
    cpuMs(() => {
      const s = scanners.get(m)!;
      for (const { b, items } of chunks) for (const at of items) sink += s.scan(b, at, b.length, ctx, 100);
    }),
  );
  const ns = (ms: number) => ((ms * 1e6) / body.length).toFixed(3);
  console.log(
    `item scanner, ${rows ? 'rows' : 'pods'}: baseline ${ns(r.lo)} ns/B, TurboFan ${ns(r.tf)} ns/B, baseline ÷ TurboFan ${r.ratio.toFixed(2)}`,
  );
}
for (const table of [false, true]) {
  const r = await pairedRounds(async (m) => {
    useWasmScanner(m);
    return (await benchmarkMerge(10, 1000, table, 3)).msPerMiB;
  });
  console.log(
    `merge in process, 10×1000 ${table ? 'table' : 'json'}: baseline ${r.lo.toFixed(2)} ms/MiB, TurboFan ${r.tf.toFixed(2)} ms/MiB, baseline ÷ TurboFan ${r.ratio.toFixed(2)}`,
  );
}
if (sink === 0.5) console.log('');

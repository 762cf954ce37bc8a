/**
 * The wasm lane's `tape` export alone, another checkout's against this tree's, in one process (not a test):
 *   node --import tsx bench/lib/tape-ab.ts <checkout> [rounds=11] [pods=2000]
 * The canned pods and rows (./canned-bodies.ts) as list bodies in 64 KiB chunks, each item's tape call
 * as the item scanner makes it (src/merge/jsonsplit/item.ts), each tree's lane.ts with its skip.wasm, in
 * turn, the order swapped every other round, CPU time: ns per byte (medians) and the per-round ratio
 * other/this. The answers and tapes of both are compared first (a difference throws). Where wasmbench.ts
 * tape measures the item scanner around it, this isolates the scan.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { itemChunks, makeBase } from './canned-bodies.ts';

interface Lane {
  tape(b: Uint8Array, i: number, n: number, room: number): number;
  words: Int32Array;
  tapeBase: number;
}
const [other, r = '11', p = '2000'] = process.argv.slice(2);
if (!other) throw new Error('usage: tape-ab.ts <checkout> [rounds] [pods]');
const lanes: Lane[] = [];
for (const tree of [resolve(other), resolve(new URL('../..', import.meta.url).pathname)]) {
  const { WasmSkip } = await import(`${tree}/src/merge/jsonsplit/wasm/lane.ts`);
  lanes.push(
    new WasmSkip(new WebAssembly.Module(readFileSync(`${tree}/src/merge/jsonsplit/wasm/skip.wasm`))),
  );
}
const rounds = Number(r);
const pods = Number(p);
const base = await makeBase();

function cpuMs(f: () => unknown): number {
  const t0 = process.cpuUsage();
  f();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;

for (const rows of [false, true]) {
  const { body, chunks } = itemChunks(base, rows, pods);
  // the same answers and tapes from both
  for (const { b, items } of chunks)
    for (const s of items) {
      const got = lanes.map((l) => {
        const end = l.tape(b, s, b.length, 100);
        const count = l.words[l.tapeBase - 256]!;
        return `${end} ${end >= 0 ? Array.from(l.words.subarray(l.tapeBase, l.tapeBase + 5 * count)).join(',') : ''}`;
      });
      if (got[0] !== got[1])
        throw new Error(
          `the binaries differ at item ${s}: ${got[0]!.slice(0, 200)} / ${got[1]!.slice(0, 200)}`,
        );
    }
  let sink = 0;
  const run = (l: Lane) => () => {
    for (const { b, items } of chunks) for (const s of items) sink += l.tape(b, s, b.length, 100);
  };
  const runs = lanes.map(run);
  const t: number[][] = [[], []];
  for (let w = 0; w < 5; w++) for (const f of runs) f();
  for (let k = 0; k < rounds; k++) {
    const order = k % 2 ? [1, 0] : [0, 1];
    for (const o of order) t[o]!.push(cpuMs(runs[o]!));
  }
  const ns = (ms: number) => ((ms * 1e6) / body.length).toFixed(3);
  const ratios = t[0]!.map((x, k) => x / t[1]![k]!);
  console.log(
    `tape, ${rows ? 'rows' : 'pods'}: other ${ns(med(t[0]!))} ns/B, this ${ns(med(t[1]!))} ns/B, other/this ${med(ratios).toFixed(2)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]${sink === 0.5 ? ' ' : ''}`,
  );
}

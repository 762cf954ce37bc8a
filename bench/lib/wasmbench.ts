/**
 * skipValue's two lanes on the canned pods, paired in one process (not a test):
 *   node --import tsx bench/lib/wasmbench.ts [rounds] [pods]
 * JavaScript (src/merge/jsonsplit/skip.ts) against WebAssembly SIMD (src/merge/jsonsplit/wasm/skip.wat),
 * in turn on the same bytes, the order swapped every other round, CPU time: (1) each pod skipped whole by
 * one call; (2) each pod scanned by an item scanner as the list splitter does (its facts, its memo with
 * Node's comparison, skipValue for what nothing is noted in), the body cut into 64 KiB chunks, each
 * chunk copied into wasm memory once; (3) the merged list's own work in this process (./canned-merge.ts),
 * 10 × 1,000 JSON and Table, the platform's lane switched between runs. Prints ns per byte or ms per MiB
 * (medians) and the per-round ratio JS/wasm.
 *   node --import tsx bench/lib/wasmbench.ts tape [rounds]
 * compares, both on the wasm lane, the item scanner reading its facts from the lane's tape against the
 * JavaScript walk of the noted levels (benchmarkTape).
 */
import { readFileSync } from 'node:fs';
import { ITEM, ItemScanner, ROW, useTapeFacts } from '../../src/merge/jsonsplit/item.ts';
import { SKIP_STACK, skipValue } from '../../src/merge/jsonsplit/skip.ts';
import { sharedWasmSkip, useWasmScanner, WasmSkip } from '../../src/merge/jsonsplit/wasm/lane.ts';
import { useNativeEquality } from '../../src/watch/read.ts';
import { itemChunks, makeBase, nth } from './canned-bodies.ts';
import { benchmarkMerge } from './canned-merge.ts';

const enc = new TextEncoder();
const module = new WebAssembly.Module(
  readFileSync(new URL('../../src/merge/jsonsplit/wasm/skip.wasm', import.meta.url)),
);
const nodeEqual = (m: Uint8Array, b: Uint8Array, at: number) =>
  Buffer.prototype.compare.call(m, b, at, at + m.length) === 0;

function cpuMs(f: () => unknown): number {
  const t0 = process.cpuUsage();
  f();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

function paired(name: string, bytes: number, rounds: number, a: () => unknown, b: () => unknown): string {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let w = 0; w < 3; w++) {
    a();
    b();
  }
  for (let r = 0; r < rounds; r++) {
    const first = r % 2 ? b : a;
    const t = cpuMs(first);
    const u = cpuMs(first === a ? b : a);
    ta.push(first === a ? t : u);
    tb.push(first === a ? u : t);
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
  const q = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.floor(p * (xs.length - 1))]!;
  const ratios = ta.map((x, k) => x / tb[k]!);
  const ns = (ms: number) => ((ms * 1e6) / bytes).toFixed(3);
  return `${name}: JS ${ns(med(ta))} ns/B, wasm ${ns(med(tb))} ns/B, JS/wasm ${med(ratios).toFixed(2)} (q1 ${q(ratios, 0.25).toFixed(2)}, q3 ${q(ratios, 0.75).toFixed(2)})`;
}

export async function benchmarkWasm(rounds = 11, pods = 2000): Promise<string[]> {
  const base = await makeBase();
  const texts = Array.from({ length: pods }, (_, i) => nth(base.items, i, false));
  const body = enc.encode(`[${texts.join(',')}]`);
  // item starts, and the 64 KiB chunks (as a list's body arrives) with the items wholly inside each
  const starts: number[] = [];
  for (let at = 1, k = 0; k < pods; k++) {
    starts.push(at);
    at += enc.encode(texts[k]!).length + 1;
  }
  const CHUNK = 65536;
  const chunks: Array<{ b: Uint8Array; items: number[] }> = [];
  for (let from = 0; from < body.length; from += CHUNK) {
    const b = body.slice(from, from + CHUNK);
    chunks.push({ b, items: starts.filter((s) => s >= from && s < from + CHUNK).map((s) => s - from) });
  }
  const stack = new Uint8Array(SKIP_STACK);
  const wasm = new WasmSkip(module);
  let sink = 0;
  const out: string[] = [];

  out.push(
    paired(
      'skipValue, each pod whole (one call each)',
      body.length,
      rounds,
      () => {
        for (const s of starts) sink += skipValue(body, s, body.length, 100, stack);
      },
      () => {
        wasm.forget();
        for (const s of starts) sink += wasm.skip(body, s, body.length, 100);
      },
    ),
  );

  const scanAll = (scanner: ItemScanner) => () => {
    for (const { b, items } of chunks) for (const s of items) sink += scanner.scan(b, s, b.length, ITEM, 100);
  };
  const js = new ItemScanner(nodeEqual, undefined, null);
  const wa = new ItemScanner(nodeEqual, undefined, module);
  out.push(paired('item scanner, 64 KiB chunks, memo on', body.length, rounds, scanAll(js), scanAll(wa)));
  const jsNoMemo = new ItemScanner(undefined, undefined, null);
  const waNoMemo = new ItemScanner(undefined, undefined, module);
  out.push(
    paired(
      'item scanner, 64 KiB chunks, memo off',
      body.length,
      rounds,
      scanAll(jsNoMemo),
      scanAll(waNoMemo),
    ),
  );
  out.push(
    paired('wasm lane: memo on (JS column) vs off', body.length, rounds, scanAll(wa), scanAll(waNoMemo)),
  );
  // an instance per scanner (one per upstream body): what making one costs
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < 1000; k++) new WasmSkip(module);
  out.push(
    `an instance: ${(Number(process.hrtime.bigint() - t0) / 1000 / 1000).toFixed(1)} µs (wall, mean of 1,000)`,
  );
  if (sink === 0.5) out.push('');
  return out;
}

/**
 * The merged list's own work in this process (./canned-merge.ts: splitter, merge, answer bytes, no HTTP),
 * the platform's lane switched between runs as src/platform/node.ts sets it (with its native equality)
 */
export async function benchmarkMergeLanes(rounds: number, clusters: number, pods: number, table: boolean) {
  useNativeEquality(nodeEqual);
  const js: number[] = [];
  const wa: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const lane of r % 2 ? ['wasm', 'js'] : ['js', 'wasm']) {
      useWasmScanner(lane === 'wasm' ? module : undefined);
      const m = await benchmarkMerge(clusters, pods, table, 5);
      (lane === 'wasm' ? wa : js).push(m.msPerMiB);
    }
  }
  useWasmScanner(undefined);
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
  const ratios = js.map((x, k) => x / wa[k]!);
  const copied = sharedWasmSkip()?.copied ?? 0;
  return `merge in process, ${clusters}×${pods} ${table ? 'table' : 'json'}: JS ${med(js).toFixed(2)} ms/MiB, wasm ${med(wa).toFixed(2)} ms/MiB, JS/wasm ${med(ratios).toFixed(2)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]; bytes copied into wasm ${(copied / 2 ** 20).toFixed(0)} MiB`;
}

/**
 * The item scanner reading its facts from the wasm lane's tape (src/merge/jsonsplit/tape.ts) against the
 * JavaScript walk of the noted levels with the wasm skip (and its memo), both on the wasm lane: the canned
 * pods and rows in 64 KiB chunks, then the merged list in process, paired as above (ns/B, ms/MiB).
 */
export async function benchmarkTape(rounds = 11, pods = 2000): Promise<string[]> {
  const base = await makeBase();
  useNativeEquality(nodeEqual);
  const out: string[] = [];
  let sink = 0;
  for (const rows of [false, true]) {
    const { body, chunks } = itemChunks(base, rows, pods);
    const ctx = rows ? ROW : ITEM;
    const scanAll = (scanner: ItemScanner) => () => {
      for (const { b, items } of chunks)
        for (const s of items) sink += scanner.scan(b, s, b.length, ctx, 100) + scanner.facts.mdTo;
    };
    useTapeFacts(false);
    const walk = new ItemScanner(nodeEqual, undefined, module);
    useTapeFacts(true);
    const tape = new ItemScanner(nodeEqual, undefined, module);
    const line = paired(
      `item scanner, ${rows ? 'rows' : 'pods'}`,
      body.length,
      rounds,
      scanAll(walk),
      scanAll(tape),
    );
    out.push(line.replace('JS ', 'walk ').replace('wasm ', 'tape ').replace('JS/wasm', 'walk/tape'));
  }
  useWasmScanner(module);
  for (const table of [false, true]) {
    const on: number[] = [];
    const off: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const t of r % 2 ? [true, false] : [false, true]) {
        useTapeFacts(t);
        (t ? on : off).push((await benchmarkMerge(10, 1000, table, 5)).msPerMiB);
      }
    }
    const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)]!;
    const ratios = off.map((x, k) => x / on[k]!);
    out.push(
      `merge in process, 10×1000 ${table ? 'table' : 'json'}: walk ${med(off).toFixed(2)} ms/MiB, tape ${med(on).toFixed(2)} ms/MiB, walk/tape ${med(ratios).toFixed(2)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]`,
    );
  }
  useTapeFacts(true);
  useWasmScanner(undefined);
  if (sink === 0.5) out.push('');
  return out;
}

if (process.argv[2] === 'tape') {
  for (const line of await benchmarkTape(Number(process.argv[3]) || 11)) console.log(line);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const [rounds, pods] = process.argv.slice(2).map(Number);
  for (const line of await benchmarkWasm(rounds || 11, pods || 2000)) console.log(line);
  console.log(await benchmarkMergeLanes(rounds || 11, 10, 1000, false));
  console.log(await benchmarkMergeLanes(rounds || 11, 10, 1000, true));
}

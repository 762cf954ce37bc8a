/**
 * "The wasm lane notes the facts itself" (issue 33), prototyped before building it (not a test, not a bench
 * case; docs/benchmarks.md, "Facts noted in wasm"):
 *   node --import tsx bench/lib/wfacts-proto.ts [table|json] [rounds=21]
 * This tree's src bundled by esbuild as the fleet's is, with in the same bundle `blockFacts`: a reader of
 * one fixed block of i32 (flags, the facts' fields in order, the owner names' and cells' ranges) into an
 * ItemFacts. Paired, alternating rounds (CPU ns per canned row or pod, medians):
 * 1. tape.ts's walk over each item's kept tape against the block reader over blocks filled from the walk's
 *    own facts: the most the lead can save in JavaScript;
 * 2. the tape call and the walk against the tape call, wfacts-proto.wat's walk of the tape in wasm
 *    writing the block, and the block read (every item's facts compared first): the prototype whole;
 *    WFACTS_WAT=<file> runs a variant of the .wat, WFACTS_NOCHECK=1 skips the comparison (one that notes less);
 * 3. the tape call alone against it with the wasm walk; 4. on one tape, the JavaScript walk against the
 *    wasm walk, an empty wasm call and the walk's skeleton (entries visited, nothing noted) against it;
 * 5. with WFACTS_SCAN=<.wat> (bench/lib/wfacts-scan.mjs writes it): the integrated form, the tape noting
 *    the facts as it scans, against the tape and the JavaScript walk, and against the tape alone.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { bundleEntry } from './bundle-entry.ts';
import { makeBase } from './canned-bodies.ts';
import { pairedRounds, upperMedian } from './stats.ts';

const HERE = resolve(import.meta.dirname, '../..');
const [form = 'table', roundsS = '21'] = process.argv.slice(2);
const table = form === 'table';
const rounds = Number(roundsS);

const FIELDS = [
  'mdFrom',
  'mdTo',
  'mdKeys',
  'nameFrom',
  'nameTo',
  'rvFrom',
  'rvTo',
  'nsFrom',
  'nsTo',
  'uidFrom',
  'uidTo',
  'labelsFrom',
  'labelsTo',
  'labelsKeys',
  'labelsMarkFrom',
  'labelsMarkTo',
  'annFrom',
  'annTo',
  'annKeys',
  'annMarkFrom',
  'annMarkTo',
  'ownersFrom',
  'ownersTo',
  'kindFrom',
  'kindTo',
  'avFrom',
  'avTo',
  'specFrom',
  'selFrom',
  'selTo',
  'selKeys',
  'mlFrom',
  'mlTo',
  'mlKeys',
  'nodeNameFrom',
  'nodeNameTo',
  'cellsFrom',
  'cellsTo',
  'objectFrom',
  'objectTo',
  'refs',
  'seen',
];
// the reader as it would be written in src: one literal index per field
const reader = [
  'export function blockFacts(w, at) {',
  '  const f = new ItemFacts();',
  '  const flags = w[at];',
  '  f.odd = (flags & 1) !== 0; f.podSpec = (flags & 2) !== 0; f.podTemplate = (flags & 4) !== 0; f.mlMark = (flags & 8) !== 0;',
  ...FIELDS.map((k, i) => `  f.${k} = w[at + ${i + 1}];`),
  `  const owners = w[at + ${FIELDS.length + 1}];`,
  '  if (owners !== 0) { const o = new Array(owners); for (let i = 0; i < owners; i++) o[i] = w[at + 64 + i]; f.ownerNames = o; }',
  `  const cells = w[at + ${FIELDS.length + 2}];`,
  '  if (cells !== 0) { const c = new Array(cells); for (let i = 0; i < cells; i++) c[i] = w[at + 2112 + i]; f.cells = c; }',
  '  return f;',
  '}',
].join('\n');
const ENTRY = [
  "export * from './src/merge/jsonsplit/wasm/lane.ts';",
  "export { tapeFacts } from './src/merge/jsonsplit/tape.ts';",
  "export { ITEM, ROW } from './src/merge/jsonsplit/item.ts';",
  "import { ItemFacts } from './src/merge/jsonsplit/facts.ts';",
  "export { SLOT_BY_ID, BIT_BY_ID, REFS_BY_ID } from './src/merge/jsonsplit/facts.ts';",
  reader,
].join('\n');

const M = await bundleEntry(HERE, ENTRY, 'wfacts-proto');
const base = await makeBase();
const wasm = new WebAssembly.Module(readFileSync(resolve(HERE, 'src/merge/jsonsplit/wasm/skip.wasm')));
const lane = new M.WasmSkip(wasm);
const ctx = table ? M.ROW : M.ITEM;
const tapes = (table ? base.rows : base.items).map((s: string) => {
  const b = new TextEncoder().encode(s);
  if (lane.tape(b, 0, b.length, 100) !== b.length) throw new Error('tape');
  return { b, words: new Int32Array(lane.words.subarray(lane.tapeBase, lane.tapeBase + 5 * 400)) };
});
const held: { words: Int32Array; tapeBase: number } = { words: new Int32Array(0), tapeBase: 0 };
// the blocks, from the walk's facts (what the lane would write)
const blocks = tapes.map((tp: { b: Uint8Array; words: Int32Array }) => {
  held.words = tp.words;
  const f = M.tapeFacts(held, tp.b, 0, ctx);
  const o: number[] = f.ownerNames ?? [];
  const c: number[] = f.cells ?? [];
  const w = new Int32Array(2112 + c.length);
  w[0] = (f.odd ? 1 : 0) | (f.podSpec ? 2 : 0) | (f.podTemplate ? 4 : 0) | (f.mlMark ? 8 : 0);
  FIELDS.forEach((k, i) => {
    w[i + 1] = f[k];
  });
  w[FIELDS.length + 1] = o.length;
  w[FIELDS.length + 2] = c.length;
  w.set(o, 64);
  w.set(c, 2112);
  if (!isDeepStrictEqual({ ...M.blockFacts(w, 0) }, { ...f })) throw new Error('the block reader differs');
  return w;
});
let sum = 0;
const walk = () => {
  for (const tp of tapes) {
    held.words = tp.words;
    sum += M.tapeFacts(held, tp.b, 0, ctx).nameFrom;
  }
};
const read = () => {
  for (const w of blocks) sum += M.blockFacts(w, 0).nameFrom;
};

// `lane`: the whole per-row cost: the tape call and tape.ts's walk, against the tape call, the prototype's
// wasm walk (wfacts-proto.wat: the facts noted in wasm into one block) and the block read, over one buffer
// of every row (copied into the lane's memory once); every row's facts compared first
const { assemble } = await import('../../scripts/build-wasm.mjs');
const proto = new WebAssembly.Module(
  (await assemble(
    'wfacts-proto.wat',
    readFileSync(process.env.WFACTS_WAT ?? resolve(import.meta.dirname, 'wfacts-proto.wat'), 'utf8'),
  )) as Uint8Array<ArrayBuffer>,
);
const texts: string[] = table ? base.rows : base.items;
const all = new TextEncoder().encode(texts.join(''));
const starts: number[] = [];
for (let i = 0, at = 0; i < texts.length; i++) {
  starts.push(at);
  at += new TextEncoder().encode(texts[i]).length;
}
/** the lane's memory grown past its tape, the prototype's tables written there: [T, OUT] */
function tables(lane: any, before?: (T: number, OUT: number) => void): [WebAssembly.Memory, number, number] {
  const mem: WebAssembly.Memory = lane.memory;
  // past what the lane's copy of `all` and its tape take (lane.ts load), before any tape call
  const T = (4096 + all.length + 1024 + 4096 * 20 + 65536 + 65535) & ~65535;
  const OUT = T + 16384;
  const need = OUT + 4 * (2112 + 8192);
  if (mem.buffer.byteLength < need) mem.grow(Math.ceil((need - mem.buffer.byteLength) / 65536));
  before?.(T, OUT);
  lane.forget();
  lane.tape(all, 0, all.length, 100);
  {
    const w = new Int32Array(mem.buffer);
    const t = T >> 2;
    w.set(M.SLOT_BY_ID, t);
    w.set(M.BIT_BY_ID, t + 1024);
    w.set(M.REFS_BY_ID, t + 2048);
    const fromTo: Record<number, [number, number]> = {
      2: [1, 2],
      3: [28, 45],
      [-10]: [24, 25],
      [-11]: [4, 5],
      [-12]: [6, 7],
      [-20]: [26, 27],
      [-17]: [8, 9],
      [-18]: [10, 11],
      5: [12, 13],
      6: [17, 18],
      7: [22, 23],
      [-13]: [-1, 0],
      [-19]: [-2, 0],
      11: [29, 30],
      12: [32, 33],
      [-14]: [35, 36],
      [-15]: [-3, 0],
      [-16]: [-4, 0],
      10: [37, 38],
      1: [39, 40],
    };
    for (const [slot, [f, to]] of Object.entries(fromTo)) {
      w[t + 3072 + 2 * (Number(slot) + 32)] = f;
      w[t + 3072 + 2 * (Number(slot) + 32) + 1] = to;
    }
    const counts: Array<[number, number]> = [
      [2, 3],
      [5, 14],
      [6, 19],
      [11, 31],
      [12, 34],
    ];
    for (const [c, word] of counts) w[t + 3200 + c] = word;
    for (let i = 0; i < 46; i++)
      w[t + 3328 + i] = i >= 1 && i <= 42 && ![3, 14, 19, 31, 34, 41, 42].includes(i) ? -1 : 0;
  }
  return [mem, T, OUT];
}
const [mem, T, OUT] = tables(lane);
const factsWasm = new WebAssembly.Instance(proto, { m: { memory: mem } }).exports.facts as (
  at: number,
  start: number,
  ctx: number,
  out: number,
  T: number,
) => void;
const tapeAt = lane.tapeBase * 4 - 1024;
const viaWalk = (i: number) => {
  const s = starts[i]!;
  lane.tape(all, s, all.length, 100);
  return M.tapeFacts(lane, all, s, ctx);
};
const viaBlock = (i: number) => {
  const s = starts[i]!;
  lane.tape(all, s, all.length, 100);
  factsWasm(tapeAt, s, ctx, OUT, T);
  return M.blockFacts(lane.words, OUT >> 2);
};
if (!process.env.WFACTS_NOCHECK)
  for (let i = 0; i < texts.length; i++)
    if (!isDeepStrictEqual({ ...viaWalk(i) }, { ...viaBlock(i) }))
      throw new Error(`row ${i}: the wasm facts differ`);
const laneWalk = () => {
  for (let i = 0; i < texts.length; i++) sum += viaWalk(i).nameFrom;
};
const laneBlock = () => {
  for (let i = 0; i < texts.length; i++) sum += viaBlock(i).nameFrom;
};
const ns = (fn: () => void) => {
  const t0 = process.cpuUsage();
  for (let i = 0; i < 20; i++) fn();
  const d = process.cpuUsage(t0);
  return ((d.user + d.system) * 1000) / (20 * tapes.length);
};
const pair = (x: () => void, y: () => void, label: string) => {
  for (let i = 0; i < 100; i++) {
    x();
    y();
  }
  const r = pairedRounds(
    rounds,
    () => ns(x),
    () => ns(y),
  );
  const [mx, my] = [upperMedian(r.a), upperMedian(r.b)];
  console.log(
    `${form} ${label}: ${mx.toFixed(0)} → ${my.toFixed(0)} ns per ${table ? 'row' : 'item'}, saved ${(mx - my).toFixed(0)} ns; per-round ratio median ${upperMedian(r.ratio).toFixed(3)} (${rounds} paired rounds${sum > 0 ? '' : ', ?'})`,
  );
};
pair(walk, read, 'JS walk → block read');
pair(laneWalk, laneBlock, 'tape + JS walk → tape + wasm facts + block read');
// where the prototype's cost lies: the tape call alone, and with the wasm walk (no block read)
const tapeOnly = () => {
  for (let i = 0; i < texts.length; i++) sum += lane.tape(all, starts[i]!, all.length, 100);
};
const tapeWasm = () => {
  for (let i = 0; i < texts.length; i++) {
    sum += lane.tape(all, starts[i]!, all.length, 100);
    factsWasm(tapeAt, starts[i]!, ctx, OUT, T);
  }
};
pair(tapeOnly, tapeWasm, 'tape → tape + wasm facts');
// the wasm walk alone, the tape written once (the first row's), as often as rows
const oneWasm = () => {
  for (let i = 0; i < texts.length; i++) factsWasm(tapeAt, starts[0]!, ctx, OUT, T);
};
const oneWalk = () => {
  for (let i = 0; i < texts.length; i++) sum += M.tapeFacts(lane, all, starts[0]!, ctx).nameFrom;
};
lane.tape(all, starts[0]!, all.length, 100);
pair(oneWalk, oneWasm, 'one tape: JS walk → wasm walk alone');
const nop = new WebAssembly.Instance(proto, { m: { memory: mem } }).exports.nop as typeof factsWasm;
const oneNop = () => {
  for (let i = 0; i < texts.length; i++) nop(tapeAt, starts[0]!, ctx, OUT, T);
};
pair(oneNop, oneWasm, 'one tape: an empty wasm call → the wasm walk');
lane.tape(all, starts[0]!, all.length, 100);
console.log(
  `row 0: ${lane.words[tapeAt >> 2]} tape entries, ${new TextEncoder().encode(texts[0]).length} bytes`,
);
const chase = new WebAssembly.Instance(proto, { m: { memory: mem } }).exports.chase as typeof factsWasm;
const oneChase = () => {
  for (let i = 0; i < texts.length; i++) chase(tapeAt, starts[0]!, ctx, OUT, T);
};
lane.tape(all, starts[0]!, all.length, 100);
pair(oneChase, oneWasm, "one tape: the walk's skeleton in wasm → the wasm walk");

// WFACTS_SCAN=<.wat>: the integrated form, prototyped: skip.wat with its tape noting the facts into the block
// as it scans (bench/lib/wfacts-scan.mjs writes it from skip.wat and wfacts-proto.wat), against today's tape
// and walk; its facts compared with theirs on every item first
if (process.env.WFACTS_SCAN) {
  const scanMod = new WebAssembly.Module(
    (await assemble('scan.wat', readFileSync(process.env.WFACTS_SCAN, 'utf8'))) as Uint8Array<ArrayBuffer>,
  );
  // the lane's own instance, for its `setup` export (WasmSkip keeps only what it calls)
  const Instance = WebAssembly.Instance;
  let made: WebAssembly.Instance | undefined;
  (WebAssembly as any).Instance = class {
    constructor(m: WebAssembly.Module, i: WebAssembly.Imports) {
      made = new Instance(m, i);
      // biome-ignore lint/correctness/noConstructorReturn: the bench's capture of the instance made
      return made;
    }
  };
  const lane2 = new M.WasmSkip(scanMod);
  (WebAssembly as any).Instance = Instance;
  const [, , OUT2] = tables(lane2, (t, o) =>
    (made!.exports.setup as (t: number, o: number, c: number) => void)(t, o, ctx),
  );
  const viaScan = (i: number) => {
    const s = starts[i]!;
    lane2.tape(all, s, all.length, 100);
    return M.blockFacts(lane2.words, OUT2 >> 2);
  };
  // against today's lane and walk (the scan's own tape may be left out: a variant that writes none)
  for (let i = 0; i < texts.length; i++) {
    const walked = { ...viaWalk(i) };
    const block = { ...viaScan(i) };
    if (!isDeepStrictEqual(walked, block)) {
      console.log(walked, block);
      throw new Error(`row ${i}: the scan's facts differ`);
    }
  }
  const scanBlock = () => {
    for (let i = 0; i < texts.length; i++) sum += viaScan(i).nameFrom;
  };
  const scanTape = () => {
    for (let i = 0; i < texts.length; i++) sum += lane2.tape(all, starts[i]!, all.length, 100);
  };
  pair(laneWalk, scanBlock, 'tape + JS walk → tape noting the facts + block read');
  pair(tapeOnly, scanTape, 'tape → tape noting the facts');
}

/**
 * A merged list's own per-item work, another checkout against this tree, each BUNDLED by esbuild as the
 * fleet's bundle is (not a test, not a bench case):
 *   node --import tsx bench/lib/bundled-ab.ts <checkout> [table|json] [both|split|write|walk] [rounds=21]
 * merge-ab.ts and rewritebench.ts load each tree's modules through tsx, one module per file; the bundle
 * scopes them otherwise (a top-level const becomes a module `var`, V8 loads it again at each use; an
 * enum's members are written as their values), so a change to how constants are written shows only
 * here and in the whole process (floor-ab.ts). Each tree's src is bundled into .cache/bundled-ab/ with its
 * own skip.wasm; the canned 10×1,000 body (./canned-bodies.ts) in 64 KiB chunks, per round: `split` the
 * list splitter (wasm lane, tape facts), `write` writeFleetRow / writeFleetItem of the split items into a
 * ByteSink, `both` the two, `walk` tape.ts's facts walk alone over tapes kept; the trees alternate, the
 * order swapped every other round; CPU ns per item (medians) and the median of this ÷ other per round.
 * The two trees' answers are compared (a difference is printed).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleEntry } from './bundle-entry.ts';
import { listBytes, makeBase } from './canned-bodies.ts';
import { pairedRounds, upperMedian } from './stats.ts';

const HERE = resolve(import.meta.dirname, '../..');
const [other, form = 'table', mode = 'both', roundsS = '21'] = process.argv.slice(2);
if (!other) throw new Error('usage: bundled-ab.ts <checkout> [table|json] [both|split|write|walk] [rounds]');
const table = form === 'table';
const rounds = Number(roundsS);

const ENTRY = [
  "export * from './src/merge/jsonsplit/wasm/lane.ts';",
  "export { tapeFacts } from './src/merge/jsonsplit/tape.ts';",
  "export { ITEM, ROW } from './src/merge/jsonsplit/item.ts';",
  "export { ListSplitter } from './src/merge/jsonsplit/index.ts';",
  "export { itemView, writeFleetItem } from './src/merge/itembytes/index.ts';",
  "export { writeFleetRow } from './src/merge/itembytes/row.ts';",
  "export { mergeColumns } from './src/merge/table/index.ts';",
  "export { compositeWith, prepareMembership } from './src/merge/rv/index.ts';",
  "export { ByteSink, recyclePiece } from './src/util/bytes.ts';",
].join('\n');

/** the tree's modules bundled as the fleet is */
const bundled = (root: string, name: string) => bundleEntry(root, ENTRY, name);

const base = await makeBase();
const body = table
  ? listBytes(base.tableHead, 'rows', base.rows, 1000, true)
  : listBytes(base.listHead, 'items', base.items, 1000, false);
const chunks: Uint8Array[] = [];
for (let i = 0; i < body.length; i += 65536) chunks.push(new Uint8Array(body.subarray(i, i + 65536)));

async function tree(root: string, name: string) {
  const M = await bundled(root, name);
  const wasm = new WebAssembly.Module(readFileSync(resolve(root, 'src/merge/jsonsplit/wasm/skip.wasm')));
  M.useWasmScanner(wasm);
  const merged = M.mergeColumns([table ? JSON.parse(`${base.tableHead}}`).columnDefinitions : []]);
  const iv = M.itemView(
    { federation: false },
    'c1',
    M.compositeWith(M.prepareMembership(['c1', 'c2']), new Map(), 'c1'),
  );
  const sink = new M.ByteSink(256 * 1024);
  const items: Array<{ bytes: Uint8Array; facts: unknown }> = [];
  let hash: ReturnType<typeof createHash> | undefined;
  const split = () => {
    items.length = 0;
    const s = new M.ListSplitter({ arrayKey: ['items', 'rows'] });
    const emit = (e: { type: string; bytes: Uint8Array; facts: unknown }) => {
      if (e.type === 'item') items.push(e);
    };
    for (const c of chunks) s.push(c, emit);
    s.end(emit);
  };
  const write = () => {
    for (const it of items) {
      if (sink.free < 8192) {
        const p = sink.take();
        hash?.update(p);
        M.recyclePiece(p);
      }
      const ok = table
        ? M.writeFleetRow(sink, it.bytes, it.facts, iv, merged, 0)
        : M.writeFleetItem(sink, it.bytes, it.facts, iv);
      if (!ok) throw new Error('an item took the parsing path: not what this measures');
    }
  };
  // the walk: each item's tape kept (a copy of its entries), its facts read again from it
  const lane = new M.WasmSkip(wasm);
  const tapes = (table ? base.rows : base.items).map((s: string) => {
    const b = new TextEncoder().encode(s);
    if (lane.tape(b, 0, b.length, 100) !== b.length) throw new Error('tape');
    return { b, words: new Int32Array(lane.words.subarray(lane.tapeBase, lane.tapeBase + 5 * 400)) };
  });
  const held = { words: new Int32Array(0), tapeBase: 0 };
  let sum = 0;
  const walk = () => {
    for (const tp of tapes) {
      held.words = tp.words;
      sum += M.tapeFacts(held, tp.b, 0, table ? M.ROW : M.ITEM).nameFrom;
    }
  };
  if (mode === 'write') split();
  const round =
    mode === 'split'
      ? split
      : mode === 'write'
        ? write
        : mode === 'walk'
          ? walk
          : () => {
              split();
              write();
            };
  const perRound = mode === 'walk' ? tapes.length : 1000;
  const digest = () => {
    split();
    hash = createHash('sha1');
    write();
    hash.update(sink.take());
    const d = hash.digest('hex');
    hash = undefined;
    return d;
  };
  return { round, perRound, digest, sum: () => sum };
}

const a = await tree(resolve(other), 'other');
const b = await tree(HERE, 'this');
const ns = (t: Awaited<ReturnType<typeof tree>>) => {
  const t0 = process.cpuUsage();
  for (let i = 0; i < 5; i++) t.round();
  const d = process.cpuUsage(t0);
  return ((d.user + d.system) * 1000) / (5 * t.perRound);
};
for (let i = 0; i < 60; i++) {
  a.round();
  b.round();
}
const r = pairedRounds(
  rounds,
  () => ns(a),
  () => ns(b),
);
const same = a.digest() === b.digest();
console.log(
  `${form} ${mode}: other ${upperMedian(r.a).toFixed(0)} ns, this ${upperMedian(r.b).toFixed(0)} ns CPU per ${table ? 'row' : 'item'} (medians of ${rounds} paired rounds); this ÷ other ${upperMedian(r.ratio).toFixed(3)}; answers ${same ? 'byte-identical' : 'DIFFER'}`,
);
process.exit(0);

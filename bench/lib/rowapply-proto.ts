/**
 * A prototype, not a lane: a Table row's edit list (src/merge/itembytes/edits.ts) applied in WebAssembly
 * instead of by Edits.write, to size what fewer native steps a row would save (docs/benchmarks.md, "Where a
 * canned Table row's 1.1-1.2 µs go"). The row is copied into the instance's memory, every stretch between
 * edits and every text is one memory.copy, the result is copied out: 4 native steps against the writer's
 * 15 for a canned row. Two copies of the tree's modules, the base's untouched and this tree's with
 * Edits.prototype.write replaced, alternate their rounds over the same split rows (as rewritebench.ts);
 * the bytes of one pass of each are compared first.
 *
 *   node --import tsx bench/lib/rowapply-proto.ts <base tree: a checkout with src/> [rounds=21]
 */
import { resolve } from 'node:path';
import wabt from 'wabt';
import { listBytes, makeBase } from './canned-bodies.ts';
import { pairedRounds, upperMedian } from './stats.ts';

const HERE = resolve(import.meta.dirname, '../..');

/** apply(row, len, edits, n, out): row[0..len) with n edits (i32 from, to, text at, text length) at out */
const WAT = `(module
 (memory (export "m") 64)
 (func (export "apply") (param $row i32) (param $len i32) (param $edits i32) (param $n i32) (param $out i32)
   (result i32)
   (local $r i32) (local $w i32) (local $k i32) (local $p i32) (local $f i32) (local $tl i32)
   (local.set $w (local.get $out))
   (block $done
     (loop $next
       (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
       (local.set $p (i32.add (local.get $edits) (i32.shl (local.get $k) (i32.const 4))))
       (local.set $f (i32.load (local.get $p)))
       (memory.copy (local.get $w) (i32.add (local.get $row) (local.get $r)) (i32.sub (local.get $f) (local.get $r)))
       (local.set $w (i32.add (local.get $w) (i32.sub (local.get $f) (local.get $r))))
       (local.set $tl (i32.load offset=12 (local.get $p)))
       (memory.copy (local.get $w) (i32.load offset=8 (local.get $p)) (local.get $tl))
       (local.set $w (i32.add (local.get $w) (local.get $tl)))
       (local.set $r (i32.load offset=4 (local.get $p)))
       (local.set $k (i32.add (local.get $k) (i32.const 1)))
       (br $next)))
   (memory.copy (local.get $w) (i32.add (local.get $row) (local.get $r)) (i32.sub (local.get $len) (local.get $r)))
   (i32.sub (i32.add (local.get $w) (i32.sub (local.get $len) (local.get $r))) (local.get $out))))`;

async function applier() {
  const w = await wabt();
  const mod = w.parseWat('rowapply.wat', WAT, {});
  mod.validate();
  const bytes = Uint8Array.from(mod.toBinary({}).buffer);
  mod.destroy();
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes));
  const ab = (inst.exports.m as WebAssembly.Memory).buffer;
  return {
    apply: inst.exports.apply as (row: number, len: number, edits: number, n: number, out: number) => number,
    mem: new Uint8Array(ab),
    words: new Int32Array(ab),
  };
}

type Sink = { reserve(n: number): Uint8Array; advance(n: number): void; length: number };
type EditList = {
  n: number;
  from: number[];
  to: number[];
  text: Uint8Array[];
  tFrom: number[];
  tLen: number[];
  scratch: Uint8Array;
};

async function setup(root: string, wasm: boolean, canned: Awaited<ReturnType<typeof makeBase>>) {
  const m = (p: string) => import(resolve(root, p));
  const { itemView } = await m('src/merge/itembytes/index.ts');
  const { writeFleetRow } = await m('src/merge/itembytes/row.ts');
  const { Edits } = await m('src/merge/itembytes/edits.ts');
  const { ListSplitter } = await m('src/merge/jsonsplit/index.ts');
  const { compositeWith, prepareMembership } = await m('src/merge/rv/index.ts');
  const { mergeColumns } = await m('src/merge/table/index.ts');
  const { ByteSink, recyclePiece } = await m('src/util/bytes.ts');
  if (wasm) {
    const { apply, mem, words } = await applier();
    // the row at 0, the edit list at 64 KiB, the view's texts after it, a row's scratch texts at 512 KiB,
    // the result at 1 MiB
    const EDITS = 65536;
    const SCRATCH = 512 * 1024;
    const OUT = 1 << 20;
    const textAt = new Map<Uint8Array, number>();
    let textEnd = EDITS + 4096;
    const write = Edits.prototype.write;
    Edits.prototype.write = function (this: EditList, sink: Sink, b: Uint8Array, from: number, to: number) {
      if (from !== 0 || to !== b.length) return write.call(this, sink, b, from, to);
      mem.set(b, 0);
      let scratch = SCRATCH;
      for (let k = 0; k < this.n; k++) {
        const t = this.text[k]!;
        const tFrom = this.tFrom[k]!;
        const tLen = this.tLen[k]!;
        let at: number;
        if (t === this.scratch) {
          at = scratch;
          for (let j = 0; j < tLen; j++) mem[scratch++] = t[tFrom + j]!;
        } else {
          let o = textAt.get(t);
          if (o === undefined) {
            o = textEnd;
            mem.set(t, o);
            textEnd += t.length;
            textAt.set(t, o);
          }
          at = o + tFrom;
        }
        const e = (EDITS >> 2) + 4 * k;
        words[e] = this.from[k]!;
        words[e + 1] = this.to[k]!;
        words[e + 2] = at;
        words[e + 3] = tLen;
      }
      const n = apply(0, b.length, EDITS, this.n, OUT);
      sink.reserve(n).set(mem.subarray(OUT, OUT + n), sink.length);
      sink.advance(n);
    };
  }
  const body = listBytes(canned.tableHead, 'rows', canned.rows, 1000, true);
  const items: Array<{ bytes: Uint8Array; facts: unknown }> = [];
  new ListSplitter({ arrayKey: ['items', 'rows'] }).push(
    new Uint8Array(body),
    (e: { type: string; bytes: Uint8Array; facts: unknown }) => {
      if (e.type === 'item') items.push(e);
    },
  );
  const merged = mergeColumns([JSON.parse(`${canned.tableHead}}`).columnDefinitions]);
  const iv = itemView(
    { federation: false },
    'c1',
    compositeWith(prepareMembership(['c1', 'c2']), new Map(), 'c1'),
  );
  const once = new ByteSink(4 << 20);
  for (const it of items) writeFleetRow(once, it.bytes, it.facts, iv, merged, 0);
  const sink = new ByteSink(256 * 1024);
  const round = () => {
    for (const it of items) {
      if (sink.free < 8192) recyclePiece(sink.take());
      if (!writeFleetRow(sink, it.bytes, it.facts, iv, merged, 0))
        throw new Error('a row took the parsing path');
    }
  };
  return { round, out: once.take() as Uint8Array, count: items.length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [baseRoot, n = '21'] = process.argv.slice(2);
  if (!baseRoot) throw new Error('usage: rowapply-proto.ts <base tree> [rounds]');
  const canned = await makeBase();
  const js = await setup(resolve(baseRoot), false, canned);
  const wasm = await setup(HERE, true, canned);
  if (!Buffer.from(js.out).equals(Buffer.from(wasm.out)))
    throw new Error('the wasm applier wrote other bytes');
  for (let i = 0; i < 200; i++) {
    js.round();
    wasm.round();
  }
  const per = 50;
  const measure = (r: typeof js) => {
    const t = process.cpuUsage();
    for (let i = 0; i < per; i++) r.round();
    const c = process.cpuUsage(t);
    return ((c.user + c.system) * 1000) / (per * r.count);
  };
  const r = pairedRounds(
    Number(n),
    () => measure(js),
    () => measure(wasm),
  );
  console.log(
    `same bytes; Edits.write ${upperMedian(r.a).toFixed(0)} ns a row, the wasm applier ${upperMedian(r.b).toFixed(0)} ns (medians of ${n} paired rounds); wasm ÷ js ${upperMedian(r.ratio).toFixed(3)}`,
  );
  process.exit(0);
}

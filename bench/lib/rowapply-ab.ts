/**
 * A canned Table row's rewrite (writeFleetRow) with its edits written by the wasm lane
 * (src/merge/itembytes/wasm.ts) against Edits.write, paired: the same code in one process, the lane
 * switched on and off round by round (useWasmEdits), over 1,000 canned rows. The bytes of one pass of each
 * are compared first.
 *
 *   write: the rows split once from the body as one chunk (every row in the wasm memory), the writes timed
 *   split: each round splits the body in 64 KiB chunks and writes each chunk's rows after it, as a merged
 *          list does (the scan timed too: the same in both lanes)
 *   copied: the rows copied out of the chunk first, so the lane copies each into the memory
 *   merge: a 10×1,000 merged Table list in this process (./canned-merge.ts: 64 KiB chunks through the
 *          list route's splitter, sources and merge, no HTTP), CPU per answer, 3 answers a round
 *
 *   node --import tsx bench/lib/rowapply-ab.ts [write|split|copied|merge] [rounds=21]
 */
import { readFileSync } from 'node:fs';
import { itemView } from '../../src/merge/itembytes/index.ts';
import { writeFleetRow } from '../../src/merge/itembytes/row.ts';
import { useWasmEdits, wasmEdits } from '../../src/merge/itembytes/wasm.ts';
import { ListSplitter, type SplitEvent } from '../../src/merge/jsonsplit/index.ts';
import { useWasmScanner } from '../../src/merge/jsonsplit/wasm/lane.ts';
import { compositeWith, prepareMembership } from '../../src/merge/rv/index.ts';
import { mergeColumns } from '../../src/merge/table/index.ts';
import { ByteSink, recyclePiece } from '../../src/util/bytes.ts';
import { listBytes, makeBase } from './canned-bodies.ts';
import { mergeOnce } from './canned-merge.ts';

const [mode = 'write', n = '21'] = process.argv.slice(2);
if (!['write', 'split', 'copied', 'merge'].includes(mode))
  throw new Error('usage: rowapply-ab.ts [write|split|copied|merge] [rounds]');
useWasmScanner(
  new WebAssembly.Module(readFileSync(new URL('../../src/merge/jsonsplit/wasm/skip.wasm', import.meta.url))),
);

const canned = await makeBase();
const median = (v: number[]) => [...v].sort((p, q) => p - q)[v.length >> 1]!;
if (mode === 'merge') await mergeAb();
const body = new Uint8Array(listBytes(canned.tableHead, 'rows', canned.rows, 1000, true));
const merged = mergeColumns([JSON.parse(`${canned.tableHead}}`).columnDefinitions]);
const iv = itemView(
  { federation: false },
  'c1',
  compositeWith(prepareMembership(['c1', 'c2']), new Map(), 'c1'),
);
type Row = { bytes: Uint8Array; facts: any };
const put = (s: ByteSink, r: Row) => writeFleetRow(s, r.bytes, r.facts, iv, merged, 0);
const CHUNK = 64 * 1024;

function split(each: (r: Row) => void, chunk = body.length): void {
  const s = new ListSplitter({ arrayKey: ['items', 'rows'] });
  for (let at = 0; at < body.length; at += chunk) {
    // a fresh array per chunk, as a socket's are (an array scanned is never written again)
    const c = body.slice(at, Math.min(at + chunk, body.length));
    s.push(c, (e: SplitEvent) => {
      if (e.type === 'item') each(e as Row);
    });
  }
}

const rows: Row[] = [];
split((r) => rows.push(mode === 'copied' ? { bytes: r.bytes.slice(), facts: r.facts } : r));
const sink = new ByteSink(256 * 1024);
const write = (r: Row) => {
  if (sink.free < 8192) recyclePiece(sink.take());
  if (!put(sink, r)) throw new Error('a row took the parsing path');
};
const round =
  mode === 'split'
    ? () => split(write, CHUNK)
    : () => {
        for (const r of rows) write(r);
      };

function once(on: boolean): Buffer {
  useWasmEdits(on);
  const all = new ByteSink(4 << 20);
  if (mode === 'split') split((r) => put(all, r), CHUNK);
  else for (const r of rows) put(all, r);
  return Buffer.from(all.take());
}
if (!once(false).equals(once(true))) throw new Error('the wasm lane wrote other bytes');
const lane = wasmEdits()!;
const before = { written: lane.written, declined: lane.declined };
for (let i = 0; i < 100; i++) {
  useWasmEdits((i & 1) === 1);
  round();
}
const per = 40;
const measure = (on: boolean) => {
  useWasmEdits(on);
  const t = process.cpuUsage();
  for (let i = 0; i < per; i++) round();
  const c = process.cpuUsage(t);
  return ((c.user + c.system) * 1000) / (per * rows.length);
};
const js: number[] = [];
const wasm: number[] = [];
const ratio: number[] = [];
for (let k = 0; k < Number(n); k++) {
  const first = (k & 1) === 1;
  const x = measure(first);
  const y = measure(!first);
  const [a, b] = first ? [y, x] : [x, y];
  js.push(a);
  wasm.push(b);
  ratio.push(b / a);
}
console.log(
  `${mode}: same bytes; Edits.write ${median(js).toFixed(0)} ns a row, the wasm lane ${median(wasm).toFixed(0)} ns (medians of ${n} paired rounds); wasm ÷ js ${median(ratio).toFixed(3)} [${ratio
    .map((r) => r.toFixed(2))
    .join(' ')}]; lane wrote ${lane.written - before.written}, declined ${lane.declined - before.declined}`,
);

/** the merge of ten canned Table bodies, the lane on and off in turn; exits */
async function mergeAb(): Promise<never> {
  const bodies = Array.from(
    { length: 10 },
    () => new Uint8Array(listBytes(canned.tableHead, 'rows', canned.rows, 1000, true)),
  );
  const answer = async (on: boolean) => {
    useWasmEdits(on);
    let cpu = 0;
    for (let j = 0; j < 3; j++) cpu += (await mergeOnce(bodies, true)).cpuMs;
    return cpu / 3;
  };
  for (let i = 0; i < 6; i++) await answer((i & 1) === 1);
  const js: number[] = [];
  const wasm: number[] = [];
  const ratio: number[] = [];
  for (let k = 0; k < Number(n); k++) {
    const first = (k & 1) === 1;
    const x = await answer(first);
    const y = await answer(!first);
    const [a, b] = first ? [y, x] : [x, y];
    js.push(a);
    wasm.push(b);
    ratio.push(b / a);
  }
  const lane = wasmEdits()!;
  console.log(
    `merge 10×1,000 Table: Edits.write ${median(js).toFixed(1)} ms CPU an answer, the wasm lane ${median(wasm).toFixed(1)} ms (medians of ${n} paired rounds); wasm ÷ js ${median(ratio).toFixed(3)} [${ratio.map((r) => r.toFixed(2)).join(' ')}]; lane wrote ${lane.written} (copied in ${lane.copiedIn}), declined ${lane.declined}`,
  );
  process.exit(0);
}

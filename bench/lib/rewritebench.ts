/**
 * The byte-level rewriting alone (src/merge/itembytes: writeFleetItem, writeFleetRow), in this process (not
 * a test, not a bench case): the canned clusters' list or Table body (./canned-bodies.ts) split once, then
 * its items rewritten for one cluster's view into a ByteSink whose pieces are given back as the Node
 * server gives them back, round after round. CPU ns per item, median of the rounds after a warm-up:
 *
 *   node --import tsx bench/lib/rewritebench.ts [table|json] [rounds=15] [base tree]
 *
 * With a base tree (a checkout of another commit, e.g. /tmp/base), its src/ modules are loaded beside
 * this tree's and the rounds alternate, base then this tree, on the same split items: the medians and the
 * median of the per-round ratios are printed (./canned-merge.ts measures the whole merge, splitter
 * included; ./floor-ab.ts the whole process).
 */
import { resolve } from 'node:path';
import { listBytes, makeBase } from './canned-bodies.ts';
import { pairedRounds, upperMedian } from './stats.ts';

const HERE = resolve(import.meta.dirname, '../..');

/** one round of the rewriting with tree `root`'s modules: every item written once */
async function rounder(root: string, table: boolean, base: Awaited<ReturnType<typeof makeBase>>) {
  const m = (p: string) => import(resolve(root, p));
  const { itemView, writeFleetItem } = await m('src/merge/itembytes/index.ts');
  const { writeFleetRow } = await m('src/merge/itembytes/row.ts');
  const { ListSplitter } = await m('src/merge/jsonsplit/index.ts');
  const { compositeWith, prepareMembership } = await m('src/merge/rv/index.ts');
  const { mergeColumns } = await m('src/merge/table/index.ts');
  const { ByteSink, recyclePiece } = await m('src/util/bytes.ts');
  const body = table
    ? listBytes(base.tableHead, 'rows', base.rows, 1000, true)
    : listBytes(base.listHead, 'items', base.items, 1000, false);
  const items: Array<{ bytes: Uint8Array; facts: unknown }> = [];
  new ListSplitter({ arrayKey: ['items', 'rows'] }).push(
    new Uint8Array(body),
    (e: { type: string; bytes: Uint8Array; facts: unknown }) => {
      if (e.type === 'item') items.push(e);
    },
  );
  const merged = mergeColumns([table ? JSON.parse(`${base.tableHead}}`).columnDefinitions : []]);
  const membership = prepareMembership(['c1', 'c2']);
  const iv = itemView({ federation: false }, 'c1', compositeWith(membership, new Map(), 'c1'));
  const sink = new ByteSink(256 * 1024);
  const round = () => {
    for (const it of items) {
      if (sink.free < 8192) recyclePiece(sink.take());
      const ok = table
        ? writeFleetRow(sink, it.bytes, it.facts, iv, merged, 0)
        : writeFleetItem(sink, it.bytes, it.facts, iv);
      if (!ok) throw new Error('an item took the parsing path: not what this measures');
    }
  };
  return { round, count: items.length };
}

const PER = 50;

/** CPU ns per item of PER rounds */
function measure(r: { round: () => void; count: number }): number {
  const t = process.cpuUsage();
  for (let i = 0; i < PER; i++) r.round();
  const c = process.cpuUsage(t);
  return ((c.user + c.system) * 1000) / (PER * r.count);
}

const median = upperMedian;

export async function benchmarkRewrite(table: boolean, rounds = 15): Promise<number> {
  const r = await rounder(HERE, table, await makeBase());
  for (let i = 0; i < 200; i++) r.round();
  const ns: number[] = [];
  for (let k = 0; k < rounds; k++) ns.push(measure(r));
  return median(ns);
}

/** base tree and this one alternately: their medians and the median of this ÷ base per round */
export async function pairedRewrite(baseRoot: string, table: boolean, rounds = 15) {
  const canned = await makeBase();
  const a = await rounder(resolve(baseRoot), table, canned);
  const b = await rounder(HERE, table, canned);
  for (let i = 0; i < 200; i++) {
    a.round();
    b.round();
  }
  const r = pairedRounds(
    rounds,
    () => measure(a),
    () => measure(b),
  );
  return { base: median(r.a), mine: median(r.b), ratio: median(r.ratio) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [form = 'table', n = '15', baseRoot] = process.argv.slice(2);
  if (baseRoot) {
    const r = await pairedRewrite(baseRoot, form === 'table', Number(n));
    console.log(
      `${form}: base ${r.base.toFixed(0)} ns, this tree ${r.mine.toFixed(0)} ns CPU per ${form === 'table' ? 'row' : 'item'} (medians of ${n} paired rounds); this ÷ base ${r.ratio.toFixed(3)} (median of the rounds' ratios)`,
    );
    process.exit(0);
  }
  const ns = await benchmarkRewrite(form === 'table', Number(n));
  console.log(
    `${form}: ${ns.toFixed(0)} ns CPU per ${form === 'table' ? 'row' : 'item'} rewritten (median of ${n})`,
  );
  process.exit(0);
}

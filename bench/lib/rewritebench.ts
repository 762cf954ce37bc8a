/**
 * The byte-level rewriting alone (src/merge/itembytes: writeFleetItem, writeFleetRow), in this process (not
 * a test, not a bench case): the canned clusters' list or Table body (./canned-bodies.ts) split once, then
 * its items rewritten for one cluster's view into a ByteSink whose pieces are given back as the Node
 * server gives them back, round after round. CPU ns per item, median of the rounds after a warm-up:
 *
 *   node --import tsx bench/lib/rewritebench.ts [table|json] [rounds=15]
 *
 * To compare two trees, run each tree's copy of this file in turn (./canned-merge.ts measures the whole
 * merge, splitter included; ./floor-ab.ts the whole process).
 */
import { itemView, writeFleetItem } from '../../src/merge/itembytes/index.ts';
import { writeFleetRow } from '../../src/merge/itembytes/row.ts';
import { ListSplitter, type SplitEvent } from '../../src/merge/jsonsplit/index.ts';
import { compositeWith, prepareMembership } from '../../src/merge/rv/index.ts';
import { mergeColumns } from '../../src/merge/table/index.ts';
import { ByteSink, recyclePiece } from '../../src/util/bytes.ts';
import { listBytes, makeBase } from './canned-bodies.ts';

type Item = Extract<SplitEvent, { type: 'item' }>;

export async function benchmarkRewrite(table: boolean, rounds = 15): Promise<number> {
  const base = await makeBase();
  const body = table
    ? listBytes(base.tableHead, 'rows', base.rows, 1000, true)
    : listBytes(base.listHead, 'items', base.items, 1000, false);
  const items: Item[] = [];
  new ListSplitter({ arrayKey: ['items', 'rows'] }).push(new Uint8Array(body), (e) => {
    if (e.type === 'item') items.push(e);
  });
  const merged = mergeColumns([table ? JSON.parse(`${base.tableHead}}`).columnDefinitions : []]);
  const membership = prepareMembership(['c1', 'c2']);
  const iv = itemView({ federation: false }, 'c1', compositeWith(membership, new Map(), 'c1'));
  const sink = new ByteSink(256 * 1024);
  const round = () => {
    for (const it of items) {
      if (sink.free < 8192) recyclePiece(sink.take());
      const ok = table
        ? writeFleetRow(sink, it.bytes, it.facts!, iv, merged, 0)
        : writeFleetItem(sink, it.bytes, it.facts!, iv);
      if (!ok) throw new Error('an item took the parsing path: not what this measures');
    }
  };
  const per = 50;
  for (let i = 0; i < 200; i++) round();
  const ns: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < per; i++) round();
    const c = process.cpuUsage(t);
    ns.push(((c.user + c.system) * 1000) / (per * items.length));
  }
  ns.sort((a, b) => a - b);
  return ns[ns.length >> 1]!;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [form = 'table', n = '15'] = process.argv.slice(2);
  const ns = await benchmarkRewrite(form === 'table', Number(n));
  console.log(
    `${form}: ${ns.toFixed(0)} ns CPU per ${form === 'table' ? 'row' : 'item'} rewritten (median of ${n})`,
  );
  process.exit(0);
}

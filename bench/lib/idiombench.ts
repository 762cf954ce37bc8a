/**
 * The hot path's hard-to-read idioms against their plain forms, paired in one process (not a test):
 *   node --import tsx bench/lib/idiombench.ts [rounds]
 * Each case runs its idiom (A) and the plain form (B) in turn, the order swapped every other round, on the
 * same bytes; it prints the medians and the per-round ratio B/A (median, and its quartiles: a gain whose
 * quartiles hold 1 is within noise). docs/architecture.md "Hot-path idioms" lists the figures.
 */
import { isNone } from '../../src/merge/itembytes/index.ts';
import { ItemFacts, noteValue, Slot } from '../../src/merge/jsonsplit/facts.ts';
import { ITEM, ItemScanner } from '../../src/merge/jsonsplit/item.ts';
import { plain } from '../../src/merge/jsonsplit/skip.ts';
import { utf8Short } from '../../src/util/utf8.ts';
import { makeBase, nth } from './canned-bodies.ts';
import { syntheticPod } from './splitbench.ts';

const enc = new TextEncoder();

/** the plain form of skip.ts `plain`: one byte a turn */
function plainByByte(b: Uint8Array, i: number, n: number): number {
  for (; i < n; i++) {
    const c = b[i]!;
    if (c === 0x22 || c === 0x5c || c < 0x20) return i;
  }
  return i;
}

/** the strings of `b` read to their ends (an escape's byte skipped) with `f`, as the scanner reads them */
function strings(b: Uint8Array, f: (b: Uint8Array, i: number, n: number) => number): number {
  const n = b.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (b[i] !== 0x22) continue;
    i = f(b, i + 1, n);
    if (b[i] === 0x5c) i++;
    count++;
  }
  return count;
}

/** the plain form of itembytes isNone: `b[from..to)` against the char codes of the cell's text */
const NONE_CELL = '"<none>"';
function isNoneByCodes(b: Uint8Array, from: number, to: number): boolean {
  if (to - from !== NONE_CELL.length) return false;
  for (let k = 0; k < NONE_CELL.length; k++) if (b[from + k] !== NONE_CELL.charCodeAt(k)) return false;
  return true;
}

/** the string cells' ranges of the canned Table rows in `b` (two numbers each; none escaped) */
function stringCells(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    // `"cells":[` ... `]` (the canned rows' cells hold no brackets)
    if (b[i] !== 0x5b || b[i - 1] !== 0x3a || b[i - 2] !== 0x22 || b[i - 3] !== 0x73) continue;
    for (i++; i < b.length && b[i] !== 0x5d; i++) {
      if (b[i] !== 0x22) continue;
      let j = i + 1;
      while (b[j] !== 0x22) j++;
      out.push(i, j + 1);
      i = j;
    }
  }
  return out;
}

/** each cell asked whether it is `"<none>"` with `f`, as a row's reference cells are (ten times) */
function nones(
  b: Uint8Array,
  cells: number[],
  f: (b: Uint8Array, from: number, to: number) => boolean,
): number {
  let count = 0;
  for (let r = 0; r < 10; r++)
    for (let k = 0; k < cells.length; k += 2) if (f(b, cells[k]!, cells[k + 1]!)) count++;
  return count;
}

/**
 * The plain form of facts.ts noteValue: its cases as module-level bindings, what the bundle makes of
 * top-level consts (esbuild writes them as `var`s, which V8 loads again at each compare); the same cases
 * in the same order as the enum's
 */
let P_META: number = Slot.Meta;
let P_SPEC: number = Slot.Spec;
let P_KIND: number = Slot.Kind;
let P_NAME: number = Slot.Name;
let P_RV: number = Slot.Rv;
let P_API_VERSION: number = Slot.ApiVersion;
let P_NAMESPACE: number = Slot.Namespace;
let P_UID: number = Slot.Uid;
let P_LABELS: number = Slot.Labels;
let P_ANNOTATIONS: number = Slot.Annotations;
let P_OWNERS: number = Slot.Owners;
let P_CONTAINERS: number = Slot.Containers;
let P_TEMPLATE: number = Slot.Template;
let P_SELECTOR: number = Slot.Selector;
let P_MATCH_LABELS: number = Slot.MatchLabels;
let P_NODENAME: number = Slot.NodeName;
let P_MARK: number = Slot.Mark;
let P_OWNER_NAME: number = Slot.OwnerName;
let P_CELLS: number = Slot.Cells;
let P_ITEM: number = Slot.Item;
/** the bindings stay bindings (a module that never assigns them would let a bundler fold them) */
export function rebindSlots(d: number): void {
  P_META += d;
  P_SPEC += d;
  P_KIND += d;
  P_NAME += d;
  P_RV += d;
  P_API_VERSION += d;
  P_NAMESPACE += d;
  P_UID += d;
  P_LABELS += d;
  P_ANNOTATIONS += d;
  P_OWNERS += d;
  P_CONTAINERS += d;
  P_TEMPLATE += d;
  P_SELECTOR += d;
  P_MATCH_LABELS += d;
  P_NODENAME += d;
  P_MARK += d;
  P_OWNER_NAME += d;
  P_CELLS += d;
  P_ITEM += d;
}
function noteByBindings(
  f: ItemFacts,
  b: Uint8Array,
  start: number,
  ctx: number,
  slot: number,
  from: number,
  to: number,
): void {
  switch (slot) {
    case P_META:
      f.mdFrom = from;
      f.mdTo = to;
      return;
    case P_SPEC:
      f.specFrom = from;
      return;
    case P_KIND:
      f.kindFrom = from;
      f.kindTo = to;
      return;
    case P_NAME:
      f.nameFrom = from;
      f.nameTo = to;
      return;
    case P_RV:
      f.rvFrom = from;
      f.rvTo = to;
      return;
    case P_API_VERSION:
      f.avFrom = from;
      f.avTo = to;
      return;
    case P_NAMESPACE:
      f.nsFrom = from;
      f.nsTo = to;
      return;
    case P_UID:
      f.uidFrom = from;
      f.uidTo = to;
      return;
    case P_LABELS:
      f.labelsFrom = from;
      f.labelsTo = to;
      return;
    case P_ANNOTATIONS:
      f.annFrom = from;
      f.annTo = to;
      return;
    case P_OWNERS:
      f.ownersFrom = from;
      f.ownersTo = to;
      return;
    case P_CONTAINERS:
      f.podSpec = b[start + from] === 0x5b;
      return;
    case P_TEMPLATE:
      f.podTemplate = b[start + from] === 0x7b;
      return;
    case P_SELECTOR:
      f.selFrom = from;
      f.selTo = to;
      return;
    case P_MATCH_LABELS:
      f.mlFrom = from;
      f.mlTo = to;
      return;
    case P_NODENAME:
      f.nodeNameFrom = from;
      f.nodeNameTo = to;
      return;
    case P_MARK:
      if (ctx === Slot.Labels) {
        f.labelsMarkFrom = from;
        f.labelsMarkTo = to;
      }
      return;
    case P_OWNER_NAME:
      if (f.ownerNames === undefined) f.ownerNames = [from, to];
      else f.ownerNames.push(from, to);
      return;
    case P_CELLS:
      f.cellsFrom = from;
      f.cellsTo = to;
      return;
    case P_ITEM:
      f.objectFrom = from;
      f.objectTo = to;
      return;
  }
}

/** the values a canned Table row notes, in its order (its contexts and slots), noted with `note` */
const ROW_NOTES = [
  [Slot.Row, Slot.Cells],
  [Slot.Row, Slot.Item],
  [Slot.Item, Slot.Kind],
  [Slot.Item, Slot.ApiVersion],
  [Slot.Item, Slot.Meta],
  [Slot.Meta, Slot.Name],
  [Slot.Meta, Slot.Namespace],
  [Slot.Meta, Slot.Uid],
  [Slot.Meta, Slot.Rv],
  [Slot.Meta, Slot.Labels],
  [Slot.Meta, Slot.Annotations],
  [Slot.Meta, Slot.Owners],
  [Slot.Owner, Slot.OwnerName],
] as const;
function noteRows(b: Uint8Array, note: typeof noteValue): number {
  let sum = 0;
  for (let r = 0; r < 20000; r++) {
    const f = new ItemFacts();
    for (let k = 0; k < ROW_NOTES.length; k++) note(f, b, 0, ROW_NOTES[k]![0], ROW_NOTES[k]![1], k, k + 9);
    sum += f.nameTo + f.ownersFrom;
  }
  return sum;
}

export interface IdiomCase {
  name: string;
  /** median ms of the idiom, of the plain form */
  idiomMs: number;
  plainMs: number;
  /** the plain form's time over the idiom's, per round: median and quartiles */
  ratio: number;
  q1: number;
  q3: number;
}

function paired(name: string, rounds: number, a: () => unknown, b: () => unknown): IdiomCase {
  const ta: number[] = [];
  const tb: number[] = [];
  // CPU time, not wall time: 8 engineers' runs share 2 cores, and a round descheduled is not slower
  const time = (f: () => unknown) => {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  };
  for (let w = 0; w < 3; w++) {
    a();
    b();
  }
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      tb.push(time(b));
      ta.push(time(a));
    } else {
      ta.push(time(a));
      tb.push(time(b));
    }
  }
  const q = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.floor(p * (xs.length - 1))]!;
  const ratios = ta.map((x, k) => tb[k]! / x);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    name,
    idiomMs: r2(q(ta, 0.5)),
    plainMs: r2(q(tb, 0.5)),
    ratio: r2(q(ratios, 0.5)),
    q1: r2(q(ratios, 0.25)),
    q3: r2(q(ratios, 0.75)),
  };
}

export async function benchmarkIdioms(rounds = 21, pods = 2000): Promise<IdiomCase[]> {
  const items = Array.from({ length: pods }, (_, i) => enc.encode(JSON.stringify(syntheticPod(i))));
  const body = enc.encode(`[${items.map((b) => new TextDecoder().decode(b)).join(',')}]`);
  // the canned pods (bench/cases/passthrough.ts, as the simulator lists them): what the bench's fleet reads
  const base = await makeBase();
  const canned = Array.from({ length: pods }, (_, i) => enc.encode(nth(base.items, i, false)));
  const cannedBody = enc.encode(
    `[${Array.from({ length: pods }, (_, i) => nth(base.items, i, false)).join(',')}]`,
  );
  const tableBody = enc.encode(
    `[${Array.from({ length: pods }, (_, i) => nth(base.rows, i, true)).join(',')}]`,
  );
  const cases: IdiomCase[] = [];

  // skip.ts plain: four bytes a turn
  cases.push(
    paired(
      'plain: string bytes four a turn (skip.ts), synthetic pods',
      rounds,
      () => strings(body, plain),
      () => strings(body, plainByByte),
    ),
  );
  cases.push(
    paired(
      'plain: string bytes four a turn (skip.ts), canned pods',
      rounds,
      () => strings(cannedBody, plain),
      () => strings(cannedBody, plainByByte),
    ),
  );

  // jsonsplit base.ts push / list read.ts: chunks seen as plain views, not Node Buffers
  const buf = Buffer.from(body);
  const view = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  const views = (b: Uint8Array) => {
    let s = 0;
    for (let k = 0; k + 64 <= b.length; k += 16) s += b.subarray(k, k + 64).length;
    return s;
  };
  cases.push(
    paired(
      'subarray of a plain view, not a Buffer (base.ts push)',
      rounds,
      () => views(view),
      () => views(buf),
    ),
  );

  // util/bytes.ts ByteSink.bytes, itembytes/edits.ts copy: a short piece copied byte by byte, by length
  const dst = new Uint8Array(1 << 20);
  const pieces = (lens: number[], loop: boolean) => {
    let at = 0;
    for (let r = 0; r < 40; r++)
      for (let k = 0, from = 0; k < lens.length; k++) {
        const to = from + lens[k]!;
        if (loop) for (let j = from; j < to; j++) dst[at++] = body[j]!;
        else {
          dst.set(body.subarray(from, to), at);
          at += to - from;
        }
        from = to;
        if (at > dst.length - 64) at = 0;
      }
    return at;
  };
  for (const [lo, hi] of [
    [1, 8],
    [17, 32],
    [33, 63],
  ] as const) {
    const lens = Array.from({ length: 4096 }, (_, k) => lo + (((k * 2654435761) >>> 0) % (hi - lo + 1)));
    cases.push(
      paired(
        `pieces of ${lo}-${hi} bytes copied byte by byte, not set(subarray) (util/bytes.ts)`,
        rounds,
        () => pieces(lens, true),
        () => pieces(lens, false),
      ),
    );
  }

  // memo.ts: values seen before compared natively instead of scanned
  const compare = Buffer.prototype.compare as (
    this: Uint8Array,
    t: Uint8Array,
    s: number,
    e: number,
  ) => number;
  const native = (m: Uint8Array, b: Uint8Array, at: number) => compare.call(m, b, at, at + m.length) === 0;
  const withMemo = new ItemScanner(native);
  const without = new ItemScanner();
  const scanAll = (s: ItemScanner) => {
    for (const b of canned) if (s.scan(b, 0, b.length, ITEM, 100) !== b.length) throw new Error('scan');
  };
  cases.push(
    paired(
      'memo: repeated values compared natively (memo.ts)',
      rounds,
      () => scanAll(withMemo),
      () => scanAll(without),
    ),
  );

  // itembytes isNone: a cell compared with `"<none>"` byte by byte as constants
  const cells = stringCells(tableBody);
  cases.push(
    paired(
      'isNone: "<none>" as byte constants, not char codes (itembytes/index.ts), canned Table rows',
      rounds,
      () => nones(tableBody, cells, isNone),
      () => nones(tableBody, cells, isNoneByCodes),
    ),
  );

  // facts.ts: contexts and slots as an enum, so the bundle's switch compares literals
  cases.push(
    paired(
      "slot constants: an enum (literals where used), not module bindings (facts.ts noteValue), a row's 13 values",
      rounds,
      () => noteRows(tableBody, noteValue),
      () => noteRows(tableBody, noteByBindings),
    ),
  );
  // util/utf8.ts: a merged list's per-cluster RV texts copied to heap bytes, not TextEncoder#encode
  const rvTexts = Array.from({ length: 3000 }, (_, k) => `"m${k % 1000}.${(k * 7919) % 100000}`);
  const encodeAll = (f: (s: string) => Uint8Array) => {
    let n = 0;
    for (const t of rvTexts) n += f(t).length;
    return n;
  };
  cases.push(
    paired(
      'utf8Short: short ASCII texts copied to a heap Uint8Array, not TextEncoder#encode (util/utf8.ts)',
      rounds,
      () => encodeAll(utf8Short),
      () => encodeAll((t) => enc.encode(t)),
    ),
  );
  return cases;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const c of await benchmarkIdioms(Number(process.argv[2] ?? 21)))
    console.log(
      `${c.name}: idiom ${c.idiomMs} ms, plain ${c.plainMs} ms, plain/idiom ${c.ratio} (quartiles ${c.q1}-${c.q3})`,
    );
}

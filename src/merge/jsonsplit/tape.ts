/**
 * The item scanner's facts (./facts.ts) read from the WebAssembly lane's tape (wasm/skip.wat `tape`): the
 * lane scans and validates the whole item at SIMD speed and writes where the members of the containers
 * the facts look into lie; this walks those few entries (a canned pod: ~50 of its 3,100 bytes' tokens) and
 * notes them as ./item.ts's scan would, without reading the item's bytes again (the lane names each key
 * by its id in ./facts.ts's KEYS). The same ends and facts as ./item.ts's JavaScript scan (its oracle, wasm/skip-wasm.test.ts).
 */
import { BIT_BY_ID, countKeys, ID_ROW, ItemFacts, noteValue, REFS_BY_ID, SLOT_BY_ID, Slot } from './facts.ts';
import { TAPE_ENTRY, type WasmSkip } from './wasm/lane.ts';

/** the facts of the tape the lane wrote for the value that began at `start` in `b` (its last tape call ended) */
export function tapeFacts(lane: WasmSkip, b: Uint8Array, start: number, ctx: number): ItemFacts {
  const f = new ItemFacts();
  const t = lane.words;
  const base = lane.tapeBase;
  // entry 0: the value itself; its own entries follow it
  const c = b[start];
  if (c === 0x7b || c === 0x5b) inside(f, b, t, base, 1, t[base + 4]!, ctx, start, start);
  return f;
}

/** the entries k up to stop of the object or array at `from`, in context `ctx` */
function inside(
  f: ItemFacts,
  b: Uint8Array,
  t: Int32Array,
  base: number,
  k: number,
  stop: number,
  ctx: number,
  start: number,
  from: number,
): void {
  if (b[from] === 0x7b) object(f, b, t, base, k, stop, ctx, start);
  else array(f, b, t, base, k, stop, ctx, start);
}

/** the members of an object in context `ctx` (entries k up to stop): ./item.ts's member and ended */
function object(
  f: ItemFacts,
  b: Uint8Array,
  t: Int32Array,
  base: number,
  k: number,
  stop: number,
  ctx: number,
  start: number,
): void {
  // facts.ts keySlot's answers, read from its flat tables by the key's id; its key counts added once
  const row = ctx * ID_ROW;
  let keys = 0;
  while (k < stop) {
    const e = base + k * TAPE_ENTRY;
    const next = t[e + 4]!;
    // the key's id: 0 none the facts know, -1 a key with escapes, which makes the item odd
    const id = t[e + 1]!;
    if (id > 0) {
      const at = row + id;
      const slot = SLOT_BY_ID[at]!;
      if (slot !== Slot.None) {
        const bit = BIT_BY_ID[at]!;
        // a key read the first time; given twice: odd
        if (bit !== 0) {
          if (f.seen & bit) f.odd = true;
          f.seen |= bit;
        }
        const from = t[e + 2]!;
        // a context whose value the lane looked into
        if (slot > 0 && next > k + 1) inside(f, b, t, base, k + 1, next, slot, start, from);
        noteValue(f, b, start, ctx, slot, from - start, t[e + 3]! - start);
      } else f.refs |= REFS_BY_ID[at]!;
    } else if (id < 0) {
      f.odd = true;
      keys--;
    }
    keys++;
    k = next;
  }
  if (keys !== 0) countKeys(f, ctx, keys);
}

/** the elements of an array in context `ctx`: a row's cells' ranges, ownerReferences' names */
function array(
  f: ItemFacts,
  b: Uint8Array,
  t: Int32Array,
  base: number,
  k: number,
  stop: number,
  ctx: number,
  start: number,
): void {
  if (ctx === Slot.Cells) {
    let count = 0;
    for (let j = k; j < stop; j = t[base + j * TAPE_ENTRY + 4]!) count++;
    // one array of its final length (pushes grow one through two backing stores)
    let cells = f.cells;
    let at = 0;
    if (cells === undefined) cells = f.cells = new Array<number>(2 * count);
    else at = cells.length;
    for (; k < stop; k = t[base + k * TAPE_ENTRY + 4]!) {
      const e = base + k * TAPE_ENTRY;
      cells[at++] = t[e + 2]! - start;
      cells[at++] = t[e + 3]! - start;
    }
  } else if (ctx === Slot.Owners) {
    while (k < stop) {
      const e = base + k * TAPE_ENTRY;
      const next = t[e + 4]!;
      const names = f.ownerNames?.length ?? 0;
      if (next > k + 1) inside(f, b, t, base, k + 1, next, Slot.Owner, start, t[e + 2]!);
      // an element that names its owner twice: ./item.ts's ended
      if ((f.ownerNames?.length ?? 0) - names > 2) f.odd = true;
      k = next;
    }
  }
  // elements of arrays elsewhere have no context (./item.ts's element): nothing in them is noted
}

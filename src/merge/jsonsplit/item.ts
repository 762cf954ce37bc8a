/**
 * One list item (or Table row) scanned whole, as fast as a JavaScript loop over bytes goes: a validating
 * scan of a complete JSON value, one loop with an explicit stack, that notes on the way where the values
 * the fleet view changes lie (jsonsplit-facts.ts), so the rewriting (itembytes.ts) copies every other byte.
 *
 * With the wasm lane (wasm/lane.ts) an item is scanned whole there instead, and its facts are read from the
 * tape the lane writes (./tape.ts): this scan is then the fallback (an item the tape cannot hold) and the
 * oracle of the tests. The list splitter (jsonsplit.ts) calls it at each item's first byte. It gives up, and the splitter's
 * resumable automaton takes the item over, when the chunk ends inside the item (SCAN_MORE), or on anything
 * it does not accept (SCAN_REFUSED): malformed JSON (the automaton then reports it with its offset),
 * nesting deeper than its limit. What it accepts is exactly RFC 8259 JSON, as the automaton (neither
 * validates UTF-8 sequences). Its stacks, facts and memo are an ItemScanner's: one merged list's
 * splitters share one (list/read.ts), the process's watch readers another (watch/read.ts); a scan is
 * synchronous, so sharing is safe, and no list state outlives its request.
 */
import { ItemFacts, keySlot, noteValue, Slot } from './facts.ts';
import { type EqualAt, memoSlot, ValueMemo } from './memo.ts';
import { plain, SCAN_MORE, SCAN_REFUSED, SKIP_STACK, scalar, strRest, ws } from './skip.ts';
import { tapeFacts } from './tape.ts';
import { type Skip, skipLane, TAPE_FULL, type WasmSkip, wasmLane, wasmScannerModule } from './wasm/lane.ts';

export { ITEM, ItemFacts, ROW } from './facts.ts';

export { SCAN_MORE, SCAN_REFUSED } from './skip.ts';

/** an array element whose range the facts want (a row's cells, ownerReferences' elements) */
const ELEMENT = -100;
const OBJ = 1;
const ARR = 2;
const STACK = 128;

/** scans go through the wasm lane's tape when it has one (bench/lib/wasmbench.ts switches it to compare) */
let tapeOn = true;

/** whether item scanners made from now on read their facts from the wasm lane's tape (./tape.ts) */
export function useTapeFacts(on: boolean): void {
  tapeOn = on;
}

/** One scan at a time (it is synchronous); its owner keeps it for a stream's items. */
export class ItemScanner {
  // per depth: container kind, context, the slot of the member being read, where its value began
  readonly kinds = new Uint8Array(STACK + 2);
  readonly ctxs = new Int8Array(STACK + 2);
  readonly slots = new Int16Array(STACK + 2);
  readonly froms = new Int32Array(STACK + 2);
  readonly names = new Int32Array(STACK + 2);
  /** skipValue's stack */
  readonly skipStack = new Uint8Array(SKIP_STACK);
  /** the fast lane: skip.wasm's when the platform gave it (wasm/lane.ts), else skipValue on skipStack */
  readonly fast: Skip;
  /** the values of the stream seen before (jsonsplit-memo.ts) */
  readonly memo: ValueMemo;
  /**
   * the wasm lane that scans whole items and writes the tape their facts are read from (./tape.ts);
   * undefined: the JavaScript scan below, its memo and its fast lane (an item the tape cannot hold too)
   */
  readonly lane: WasmSkip | undefined;

  /** the facts of the last scan */
  facts = new ItemFacts();
  /** context of the value about to be read, set by member and element */
  next = Slot.None;
  /** the memo slot of the key of the value about to be read (jsonsplit-memo.ts; -1: an element) */
  slot = -1;

  /**
   * `equalAt`: the memo's comparison (default: the platform's); `memo`: one to share instead of its own;
   * `wasm`: the fast lane's module (default: the platform's, wasm/lane.ts; null: JavaScript)
   */
  constructor(
    equalAt?: EqualAt,
    memo?: ValueMemo,
    wasm: WebAssembly.Module | null = wasmScannerModule() ?? null,
  ) {
    this.memo = memo ?? (equalAt ? new ValueMemo(equalAt) : new ValueMemo());
    this.fast = skipLane(this.skipStack, wasm ?? undefined);
    const lane = tapeOn && wasm ? wasmLane(wasm) : undefined;
    this.lane = lane?.hasTape ? lane : undefined;
  }

  /** skipValue with this scanner's lane; `b`'s bytes must not change while it is the array scanned */
  skip(b: Uint8Array, i: number, n: number, room: number): number {
    return this.fast(b, i, n, room);
  }

  /**
   * Scans the value whose first byte is `b[i]` (an object: `{`), up to `n`. Its end (exclusive), or
   * SCAN_MORE / SCAN_REFUSED; its facts in `facts`. `ctx`: ITEM or ROW. `maxDepth`: nesting allowed.
   */
  scan(b: Uint8Array, i: number, n: number, ctx: number, maxDepth: number): number {
    const lane = this.lane;
    if (lane !== undefined) {
      const end = lane.tape(b, i, n, Math.min(maxDepth, STACK));
      if (end !== TAPE_FULL) {
        // facts are the caller's only on an end (a scan given up leaves none worth reading)
        this.facts = end >= 0 ? tapeFacts(lane, b, i, ctx) : new ItemFacts();
        return end;
      }
    }
    return scanItem(this, b, i, n, ctx, maxDepth);
  }
}

/**
 * A member's key at `i` (its quote) of the object at `depth`, the colon, and the whitespace before its
 * value: where the value begins. Sets `next` to the value's context.
 */
function member(s: ItemScanner, b: Uint8Array, i: number, n: number, depth: number, start: number): number {
  if (b[i] !== 0x22) return SCAN_REFUSED;
  const ctx = s.ctxs[depth]!;
  // the key: its plain bytes (plain), the rest in strRest (where it stops, an escape begins, or a
  // control character strRest refuses)
  let end = plain(b, i + 1, n);
  if (end >= n) return SCAN_MORE;
  const escaped = b[end] !== 0x22;
  if (!escaped) end++;
  else {
    end = strRest(b, end, n);
    if (end < 0) return end;
  }
  let j = end;
  if (j < n && b[j]! <= 0x20) j = ws(b, j, n);
  if (j >= n) return SCAN_MORE;
  if (b[j] !== 0x3a) return SCAN_REFUSED;
  j++;
  if (j < n && b[j]! <= 0x20) j = ws(b, j, n);
  if (j >= n) return SCAN_MORE;
  if (ctx === Slot.None) {
    // nothing noted here (slots[depth] stays None), nor below
    s.next = Slot.None;
    s.slot = -1;
    return j;
  }
  s.slot = end - i > 2 ? memoSlot(b, ctx, i + 1, end - i - 2) : -1;
  const slot = keySlot(s.facts, b, ctx, i + 1, end - i - 2, escaped);
  s.slots[depth] = slot;
  s.froms[depth] = j - start;
  s.next = slot < 0 ? Slot.None : slot;
  return j;
}

/** an element begins at `i` in the array at `depth`: sets `next` to its context */
function element(s: ItemScanner, i: number, depth: number, start: number): void {
  const ctx = s.ctxs[depth]!;
  s.slot = -1;
  if (ctx === Slot.Cells || ctx === Slot.Owners) {
    s.slots[depth] = ELEMENT;
    s.froms[depth] = i - start;
    s.names[depth] = s.facts.ownerNames?.length ?? 0;
    s.next = ctx === Slot.Owners ? Slot.Owner : Slot.None;
  } else {
    s.slots[depth] = Slot.None;
    s.next = Slot.None;
  }
}

/** the value of a noted member or element of the container at `depth` ended at `end` */
function ended(s: ItemScanner, b: Uint8Array, depth: number, end: number, start: number): void {
  const { slots, ctxs, froms, facts } = s;
  const slot = slots[depth]!;
  slots[depth] = Slot.None;
  if (slot !== ELEMENT) noteValue(facts, b, start, ctxs[depth]!, slot, froms[depth]!, end - start);
  else if (ctxs[depth] === Slot.Cells) {
    facts.cells ??= [];
    facts.cells.push(froms[depth]!, end - start);
  } else if ((facts.ownerNames?.length ?? 0) - s.names[depth]! > 2) facts.odd = true;
}

/** ItemScanner.scan, a function of the scanner as member, element and ended are */
function scanItem(
  s: ItemScanner,
  b: Uint8Array,
  i: number,
  n: number,
  ctx: number,
  maxDepth: number,
): number {
  const start = i;
  const limit = Math.min(maxDepth, STACK);
  const { kinds, ctxs, slots, memo, fast } = s;
  s.facts = new ItemFacts();
  s.next = ctx;
  let depth = 0;
  let c = 0;
  for (;;) {
    // a value begins at i
    c = b[i]!;
    if (c === 0x22) {
      // a string value: its plain bytes (plain), the rest (escapes) in strRest
      i = plain(b, i + 1, n);
      i = i >= n ? SCAN_MORE : b[i] === 0x22 ? i + 1 : strRest(b, i, n);
    } else if (s.next === Slot.None && depth > 0 && (c === 0x7b || c === 0x5b)) {
      // nothing is noted inside: validated in the fast lane, an object or array seen before compared (a
      // number or literal is scalar's below: a call into the wasm lane costs more than it)
      i = memo.skip(b, i, n, limit - depth, s.slot, fast);
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return SCAN_REFUSED;
      kinds[depth] = c === 0x7b ? OBJ : ARR;
      ctxs[depth] = s.next;
      slots[depth] = Slot.None;
      i++;
      if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
      if (i >= n) return SCAN_MORE;
      c = b[i]!;
      if (c === (kinds[depth] === OBJ ? 0x7d : 0x5d)) {
        i++;
        depth--;
      } else {
        if (kinds[depth] === OBJ) i = member(s, b, i, n, depth, start);
        else element(s, i, depth, start);
        if (i < 0) return i;
        continue;
      }
    } else i = scalar(b, i, n);
    if (i < 0) return i;
    // after a value: its container goes on or closes
    for (;;) {
      if (depth === 0) return i;
      if (slots[depth] !== Slot.None) ended(s, b, depth, i, start);
      if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
      if (i >= n) return SCAN_MORE;
      c = b[i]!;
      if (c === 0x2c) {
        i++;
        if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
        if (i >= n) return SCAN_MORE;
        if (kinds[depth] === OBJ) i = member(s, b, i, n, depth, start);
        else element(s, i, depth, start);
        if (i < 0) return i;
        break;
      }
      if (c !== (kinds[depth] === OBJ ? 0x7d : 0x5d)) return SCAN_REFUSED;
      i++;
      depth--;
    }
  }
}

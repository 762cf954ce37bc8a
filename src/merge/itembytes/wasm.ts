/**
 * The WebAssembly lane of Edits.write (./edits.ts, its oracle): an item's edits applied by skip.wat's
 * apply in the scanner's instance (../jsonsplit/wasm/lane.ts), where the item's bytes mostly lie already
 * (the chunk it was scanned in is still the array loaded), so a row costs one call and one copy out
 * instead of the writer's ~15 calls into the engine (docs/benchmarks.md, "Where a canned Table row's
 * 1.1-1.2 µs go"). No module given, or refused: Edits.write. Like the scan it is synchronous: an item's
 * call reads only what its own edits point at, written for it or placed by its own edit list.
 *
 * Its region lies after what the scanner holds (the array loaded, its tape), where it stays until a
 * larger array comes: the edit list, the views' constant texts (copied once per edit list, which is a
 * view's, and found again by identity: a view's texts are made once and never change), then per item
 * the scratch texts, the item's copy when it is not in the memory, and the result.
 */
import type { ByteSink } from '../../util/bytes.ts';
import type { ItemFacts } from '../jsonsplit/facts.ts';
import { type WasmSkip, wasmLane } from '../jsonsplit/wasm/lane.ts';
import type { Edits } from './edits.ts';

/** edits one call takes (an item with more: Edits.write) */
const EDIT_CAP = 256;
/** the constant texts' room (a list's clusters' few each) */
const TEXT_ROOM = 16 * 1024;
const EDITS_SIZE = EDIT_CAP * 16;
const SCRATCH_AT = EDITS_SIZE + TEXT_ROOM;
/** the scratch texts' room before the result's fixed place, and the result's view there (see write) */
const SCRATCH_ROOM = 4096;
const OUT_AT = SCRATCH_AT + SCRATCH_ROOM;
const OUT_VIEW = 2048;
/** the region begins at a multiple of this after the scanner's: moved (its texts copied again) seldom */
const STEP = 64 * 1024;

/** placements made in the process (WasmEdits.placement) */
let placements = 0;

export class WasmEdits {
  /** where the region begins (-1: not yet placed) */
  private base = -1;
  /**
   * the placement of the constant texts copied so far (each edit list records where its own lie,
   * Edits.placed): a new one, unique in the process, whenever they are forgotten
   */
  private placement = ++placements;
  private textsEnd = 0;
  /** a view of OUT_VIEW bytes at the result's fixed place, and the memory's view it was made in */
  private outView: Uint8Array | undefined;
  private outOf: Uint8Array | undefined;
  /** items written here, those of them copied in first, and items left to Edits.write (the bench's) */
  written = 0;
  copiedIn = 0;
  declined = 0;

  constructor(private readonly lane: WasmSkip) {}

  /**
   * Edits.write(sink, b, from, to) in the wasm lane; false: nothing written, the caller writes it.
   * `f`: the item's facts, which say where its bytes lie in the memory while they are still there.
   */
  write(e: Edits, sink: ByteSink, b: Uint8Array, from: number, to: number, f?: ItemFacts): boolean {
    const lane = this.lane;
    const n = e.n;
    if (n > EDIT_CAP || lane.apply === undefined) return this.decline();
    let base = this.base;
    if (lane.end > base) {
      // the scanner's array and tape reach into the region: placed after them, its texts forgotten
      base = Math.ceil((lane.end + 1) / STEP) * STEP;
      if (!lane.room(base + SCRATCH_AT)) return this.decline();
      this.base = base;
      this.forget();
    }
    // the edit list, the texts placed, and what the edits add
    let mem = lane.view;
    const words = lane.words;
    const s = e.scratch;
    const scratch = base + SCRATCH_AT;
    if (e.placedIn !== this.placement) {
      e.placed.length = 0;
      e.placedAt.length = 0;
      e.placedIn = this.placement;
    }
    let added = 0;
    for (let k = 0, w = base >> 2; k < n; k++, w += 4) {
      const t = e.text[k]!;
      const len = e.tLen[k]!;
      let at = scratch;
      if (t !== s) {
        at = this.place(e, t, mem, base);
        if (at < 0) return this.decline();
      }
      words[w] = e.from[k]!;
      words[w + 1] = e.to[k]!;
      words[w + 2] = at + e.tFrom[k]!;
      words[w + 3] = len;
      added += len;
    }
    const used = e.used;
    // a short result at a fixed place, copied out whole by a view made once (a view per item costs
    // more than copying the bytes after it), a long one after the scratch
    const short = used <= SCRATCH_ROOM && to - from + added <= OUT_VIEW;
    let out = short ? base + OUT_AT : (scratch + used + 7) & ~7;
    const next = short ? out + OUT_VIEW : out;
    let at = f?.laneAt(b.length, lane.loads) ?? -1;
    if (at < 0) at = lane.at(b);
    const copy = at < 0;
    if (copy) {
      at = next - from;
      if (!short) out = (out + (to - from) + 7) & ~7;
    }
    // the result is at most the item and its texts
    if (!lane.room(Math.max(out + (to - from) + added, next + (copy ? to - from : 0)))) return this.decline();
    mem = lane.view;
    if (used > 64) mem.set(s.subarray(0, used), scratch);
    else for (let k = 0; k < used; k++) mem[scratch + k] = s[k]!;
    if (copy) {
      mem.set(from === 0 && to === b.length ? b : b.subarray(from, to), at + from);
      this.copiedIn++;
    }
    const len = lane.apply(at, from, to, base, n, out);
    if (len < 0) return this.decline();
    const buf = sink.reserve(len);
    if (short && buf.length - sink.length >= OUT_VIEW) {
      // the view's bytes after the result land where the sink writes next
      if (this.outOf !== mem || this.outView!.byteOffset !== out) {
        this.outView = new Uint8Array(mem.buffer, out, OUT_VIEW);
        this.outOf = mem;
      }
      buf.set(this.outView!, sink.length);
    } else buf.set(mem.subarray(out, out + len), sink.length);
    sink.advance(len);
    this.written++;
    return true;
  }

  /** where constant text `t` of `e` lies in the memory, copied there the first time; -1: no room left */
  private place(e: Edits, t: Uint8Array, mem: Uint8Array, base: number): number {
    const placed = e.placed;
    for (let i = 0; i < placed.length; i++) if (placed[i] === t) return e.placedAt[i]!;
    const at = base + EDITS_SIZE + this.textsEnd;
    if (this.textsEnd + t.length > TEXT_ROOM) {
      // full: begun again with the next item (this one's texts placed so far would be overwritten)
      this.forget();
      return -1;
    }
    mem.set(t, at);
    placed.push(t);
    e.placedAt.push(at);
    this.textsEnd += t.length;
    return at;
  }

  /** every text placed forgotten: edit lists find theirs no more */
  private forget(): void {
    this.placement = ++placements;
    this.textsEnd = 0;
  }

  private decline(): false {
    this.declined++;
    return false;
  }
}

let made: { lane: WasmSkip; edits: WasmEdits } | undefined;
let on = true;

/** whether items are written by the wasm lane when the platform gave one (the bench switches it) */
export function useWasmEdits(use: boolean): void {
  on = use;
}

/** the wasm lane of Edits.write for the platform's scanner module; undefined: Edits.write alone */
export function wasmEdits(): WasmEdits | undefined {
  if (!on) return undefined;
  const lane = wasmLane();
  if (lane === undefined || lane.apply === undefined) return undefined;
  if (made?.lane !== lane) made = { lane, edits: new WasmEdits(lane) };
  return made.edits;
}

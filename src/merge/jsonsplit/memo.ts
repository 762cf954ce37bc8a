/**
 * Values the item scanner (jsonsplit-item.ts) validated already, recognised when they come again, so their
 * bytes are compared (natively) instead of scanned: a watch's events of one object repeat its spec
 * whole, replicas share their containers, volumes and tolerations (the canned pods: 1,100 of 3,100 bytes
 * each), and a list's items as much. Only values nothing is noted in are kept (the scanner's fast lane:
 * skipValue), so a value recognised is skipped exactly as a scan would have: a JSON object or array is
 * complete at its closing bracket, so bytes that begin with a value validated before are that value.
 *
 * One value is kept per member key (by a hash of the key and its context: a collision only misses); a key
 * whose values keep changing (conditions with their times) keeps its value only now and then, so what it
 * costs is mostly a comparison that fails at its first bytes. Without a native comparison (Node's, given
 * by src/platform/node.ts) nothing is kept: a JavaScript loop compares no faster than skipValue
 * scans. The canned pods scan 1.2× faster with it (bench/lib/idiombench.ts). It serves the JavaScript
 * scan (./item.ts); the wasm lane's tape path (./tape.ts) rescans repeats at SIMD speed and still went 1.5×
 * faster than this scan with the memo (bench/lib/wasmbench.ts tape).
 */
import type { Skip } from './wasm/lane.ts';

/** are the bytes of `b` from `at` on `m` (`at + m.length <= b.length`)? */
export type EqualAt = (m: Uint8Array, b: Uint8Array, at: number) => boolean;

/**
 * the platform's native comparison, given once at startup (src/platform/node.ts): configuration, not state;
 * each memo takes it when made
 */
let platformEqualAt: EqualAt | undefined;

/** the platform's native comparison (memcmp); none: memos made from now on keep nothing */
export function useNativeEquality(f: EqualAt | undefined): void {
  platformEqualAt = f;
}

/** shorter values are scanned: the comparison's call costs what scanning ~100 bytes does */
const MIN = 128;
/** longer ones are not kept (a ConfigMap's data): a memo holds 1 MiB at most */
const MAX = 16 * 1024;
const SLOTS = 64;

/** the slot of the values of key `b[from..from+len)` (quotes excluded, len > 0) in context `ctx` */
export function memoSlot(b: Uint8Array, ctx: number, from: number, len: number): number {
  return (ctx * 131 + len * 17 + b[from]! * 3 + b[from + (len >> 1)]! + b[from + len - 1]! * 7) & (SLOTS - 1);
}

/**
 * The values one item scanner (its splitter's, its watch stream's) has kept: per stream, so a stream's
 * repeats are recognised and nothing is shared between requests.
 */
export class ValueMemo {
  private readonly kept: Array<Uint8Array | undefined> = new Array(SLOTS).fill(undefined);
  /** the nesting room each was validated with (it is valid where at least that much is allowed) */
  private readonly rooms = new Int16Array(SLOTS);
  /** misses since the last hit (wrapping) */
  private readonly misses = new Uint8Array(SLOTS);
  /** values recognised so far (tests read it) */
  hits = 0;

  constructor(private readonly equalAt: EqualAt | undefined = platformEqualAt) {}

  /**
   * skipValue of the object or array at `i`, the value of the key of `slot` (-1: none known): its end, by
   * comparison when it is the value kept for that key, else scanned (and kept, when the key's values are
   * worth it). `skip`: the scanner's skipValue (its lane, its stack).
   */
  skip(b: Uint8Array, i: number, n: number, room: number, slot: number, skip: Skip): number {
    const eq = this.equalAt;
    if (eq === undefined || slot < 0) return skip(b, i, n, room);
    const kept = this.kept;
    const m = kept[slot];
    if (m !== undefined && this.rooms[slot]! <= room && i + m.length <= n && eq(m, b, i)) {
      this.misses[slot] = 0;
      this.hits++;
      return i + m.length;
    }
    const e = skip(b, i, n, room);
    const len = e - i;
    if (len >= MIN && len <= MAX) {
      const k = ++this.misses[slot]!;
      // a key whose values change every time keeps a new one only every 16th miss
      if (m === undefined || k <= 2 || (k & 15) === 0) {
        // a copy (the item's bytes are the caller's; a Node Buffer's slice would be a view)
        kept[slot] = new Uint8Array(b.subarray(i, e));
        this.rooms[slot] = room;
      }
    }
    return e;
  }
}

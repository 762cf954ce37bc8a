/** Byte helpers shared by every layer (Web APIs only: this runs on Node and in workerd alike). */

/**
 * One array holding `parts` back to back. `total` may be given when the caller already counted it
 * (readers usually do, to enforce a limit); a wrong `total` is a bug, so it is checked.
 */
export function concatBytes(parts: readonly Uint8Array[], total?: number): Uint8Array {
  // one part is returned as is: callers own what they read and never mutate it afterwards
  if (parts.length === 1 && (total === undefined || total === parts[0]!.length)) return parts[0]!;
  return concatOwned(parts, total);
}

/**
 * `parts` back to back in a new array of its own: what a Response body takes (an ArrayBuffer, never a
 * shared one), which {@link concatBytes}'s one part returned as is may not be.
 */
export function concatOwned(parts: readonly Uint8Array[], total?: number): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const p of parts) size += p.length;
  if (total !== undefined && total !== size) {
    throw new RangeError(`concatBytes: ${size} bytes given, ${total} announced`);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const encoder = new TextEncoder();
const NO_BYTES = new Uint8Array(0);

/**
 * Pieces given back by their last reader ({@link recyclePiece}), by size, to be written into again: a new
 * 256 KiB buffer for every 256 KiB of a merged list cost its process ≈ 0.6 ms of CPU per MiB answered, a
 * quarter of what reading and writing the bytes cost (bench/lib/floor-ab.ts, FLOOR_WRITE piece vs pool;
 * not the zeroing: unzeroed buffers cost the same). Only sinks of {@link LENT_MIN} bytes or more lend
 * their pieces (smaller ones, the watch lines' slab, hand out many views of one buffer); a few pieces of
 * each size are kept, the rest left to the collector.
 */
const LENT_MIN = 128 * 1024;
const FREE_MAX = 4;
const freePieces = new Map<number, Uint8Array<ArrayBuffer>[]>();
/** buffers taken whole from a lending sink, not given back yet: only these may be given back, once */
const lent = new WeakSet<ArrayBufferLike>();

/**
 * `piece` (a {@link ByteSink.take}'s answer) is written out and nobody will read it again: its buffer may
 * be written into by the next sink that needs one. Called by the one reader that owns the piece last (the
 * Node server, once the socket has taken its bytes); anything else is ignored.
 */
export function recyclePiece(piece: Uint8Array): void {
  const ab = piece.buffer;
  if (piece.byteOffset !== 0 || !lent.delete(ab)) return;
  let list = freePieces.get(ab.byteLength);
  if (!list) {
    list = [];
    freePieces.set(ab.byteLength, list);
  }
  // a lent buffer is one a sink made: an ArrayBuffer
  if (list.length < FREE_MAX) list.push(new Uint8Array(ab as ArrayBuffer));
}

/**
 * An answer's bytes written piece by piece into one buffer, taken in large pieces: copying bytes and
 * encoding the few strings in between costs less than joining strings and encoding them again, and a
 * socket takes a few large writes faster than many small ones.
 */
export class ByteSink {
  // a buffer is made when the first byte after a take comes, not at the take: the last piece of an
  // answer (the most of a small one) leaves no zeroed buffer of `size` bytes behind it
  private buf = NO_BYTES;
  private at = 0;

  constructor(private readonly size = 256 * 1024) {}

  /** bytes written since the last take */
  get length(): number {
    return this.at;
  }

  /** bytes that fit before the buffer must grow (a copy); a buffer not made yet has `size` */
  get free(): number {
    return (this.buf.length === 0 ? this.size : this.buf.length) - this.at;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const want = Math.max(this.buf.length === 0 ? this.size : this.buf.length * 2, this.at + n);
    const grown = (want === this.size && freePieces.get(want)?.pop()) || new Uint8Array(want);
    if (this.at > 0) grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
  }

  /** `b[from..to)` */
  bytes(b: Uint8Array, from = 0, to = b.length): void {
    const n = to - from;
    this.room(n);
    const buf = this.buf;
    let at = this.at;
    // a short piece byte by byte: a view to copy from costs more than the loop
    if (n < 64) for (let k = from; k < to; k++) buf[at++] = b[k]!;
    else {
      buf.set(b.subarray(from, to), at);
      at += n;
    }
    this.at = at;
  }

  /**
   * Room for `n` more bytes: the buffer to write them into, from {@link length} on; {@link advance} then
   * says how many were written (writers that place pieces themselves, e.g. with copyWithin).
   */
  reserve(n: number): Uint8Array {
    this.room(n);
    return this.buf;
  }

  advance(n: number): void {
    this.at += n;
  }

  /** one byte */
  byte(c: number): void {
    if (this.at === this.buf.length) this.room(1);
    this.buf[this.at++] = c;
  }

  /** a string as UTF-8 (lone surrogates as U+FFFD, as TextEncoder does) */
  string(s: string): void {
    const n = s.length;
    this.room(n * 3);
    const buf = this.buf;
    let at = this.at;
    for (let k = 0; k < n; k++) {
      const c = s.charCodeAt(k);
      if (c >= 0x80) {
        at += encoder.encodeInto(s.slice(k), buf.subarray(at)).written;
        break;
      }
      buf[at++] = c;
    }
    this.at = at;
  }

  /**
   * everything written so far; the sink starts a new buffer when written to again (the piece taken is the
   * caller's: nothing is ever written over it, unless its last reader gives it back: {@link recyclePiece})
   */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.at);
    if (this.size >= LENT_MIN && this.buf.length === this.size) lent.add(this.buf.buffer);
    this.buf = NO_BYTES;
    this.at = 0;
    return out;
  }
}

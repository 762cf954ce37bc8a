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
    const grown = new Uint8Array(
      Math.max(this.buf.length === 0 ? this.size : this.buf.length * 2, this.at + n),
    );
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
   * caller's: nothing is ever written over it)
   */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.at);
    this.buf = NO_BYTES;
    this.at = 0;
    return out;
  }
}

/**
 * The edits the byte-level rewriting (./itembytes.ts) makes to one item, and how they are written into
 * the answer: the item copied once and the bytes after each edit moved into place, or piece by piece when
 * an edit shrinks it.
 */
import type { ByteSink } from '../../util/bytes.ts';

const encoder = new TextEncoder();

/**
 * The edits of one item: each replaces `b[from..to)` with a text, a constant of the view's (whole) or
 * bytes written for this item into `scratch` (an RV, a renamed name). Reused item after item; edits do
 * not overlap.
 */
export class Edits {
  from: number[] = [];
  to: number[] = [];
  text: Uint8Array[] = [];
  tFrom: number[] = [];
  tLen: number[] = [];
  n = 0;
  // grown to the largest item's need (one per cluster's view: most items need a few dozen bytes)
  scratch = new Uint8Array(512);
  used = 0;

  reset(): void {
    this.n = 0;
    this.used = 0;
  }

  /** `b[from..to)` becomes `text[tFrom..tFrom+tLen)` */
  private add(from: number, to: number, text: Uint8Array, tFrom: number, tLen: number): void {
    // insertion in order of `from` (a handful of edits, mostly already in order; equal ones keep theirs)
    let k = this.n++;
    while (k > 0 && this.from[k - 1]! > from) {
      this.from[k] = this.from[k - 1]!;
      this.to[k] = this.to[k - 1]!;
      this.text[k] = this.text[k - 1]!;
      this.tFrom[k] = this.tFrom[k - 1]!;
      this.tLen[k] = this.tLen[k - 1]!;
      k--;
    }
    this.from[k] = from;
    this.to[k] = to;
    this.text[k] = text;
    this.tFrom[k] = tFrom;
    this.tLen[k] = tLen;
  }

  put(from: number, to: number, text: Uint8Array): void {
    this.add(from, to, text, 0, text.length);
  }

  /** `b[from..to)` becomes what was written to the scratch since `mark` */
  putScratch(from: number, to: number, mark: number): void {
    this.add(from, to, this.scratch, mark, this.used - mark);
  }

  /** `b[from..to)` becomes the JSON text of string `v` */
  putJson(from: number, to: number, v: string): void {
    const mark = this.used;
    this.json(v);
    this.putScratch(from, to, mark);
  }

  /**
   * `b[from..to)` becomes the JSON string of `head`, the two-digit length of the digits `d[dFrom..dTo)`
   * (fewer than 100, ASCII), those digits, then `tail`: a composite RV (rvcodec.ts Splicer), its head and
   * tail ASCII digits
   */
  putSpliced(
    from: number,
    to: number,
    head: Uint8Array,
    d: Uint8Array,
    dFrom: number,
    dTo: number,
    tail: Uint8Array,
  ): void {
    const mark = this.used;
    const n = dTo - dFrom;
    const s = this.room(head.length + n + tail.length + 4);
    let at = mark;
    s[at++] = 0x22;
    at = whole(s, at, head);
    s[at++] = 0x30 + ((n / 10) | 0);
    s[at++] = 0x30 + (n % 10);
    for (let k = dFrom; k < dTo; k++) s[at++] = d[k]!;
    at = whole(s, at, tail);
    s[at++] = 0x22;
    this.used = at;
    this.putScratch(from, to, mark);
  }

  private room(n: number): Uint8Array {
    if (this.used + n > this.scratch.length) {
      // edits already made keep the old buffer (their texts are in it)
      const grown = new Uint8Array(Math.max(this.scratch.length * 2, this.used + n));
      grown.set(this.scratch.subarray(0, this.used));
      this.scratch = grown;
    }
    return this.scratch;
  }

  /** JSON.stringify(v) as UTF-8 */
  json(v: string): void {
    const n = v.length;
    const s = this.room(n + 2);
    let at = this.used;
    s[at++] = 0x22;
    for (let k = 0; k < n; k++) {
      const c = v.charCodeAt(k);
      if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) {
        // anything JSON.stringify escapes, or not ASCII: written as it writes it
        const t = encoder.encode(JSON.stringify(v));
        this.room(t.length).set(t, this.used);
        this.used += t.length;
        return;
      }
      s[at++] = c;
    }
    s[at++] = 0x22;
    this.used = at;
  }

  /** `b[from..to)` with the edits applied (every edit lies inside) */
  write(sink: ByteSink, b: Uint8Array, from: number, to: number): void {
    const n = this.n;
    let d = 0;
    let grows = true;
    for (let k = 0; k < n; k++) {
      d += this.tLen[k]! - (this.to[k]! - this.from[k]!);
      if (d < 0) grows = false;
    }
    const total = to - from + d;
    const buf = sink.reserve(Math.max(total, to - from));
    const at = sink.length - from;
    if (grows) {
      // the whole item in one copy, then from the last edit back: the bytes after each edit moved right
      // by the growth of the edits up to it, its text written before them (nothing not yet moved lies
      // there: every shift is >= 0)
      buf.set(from === 0 && to === b.length ? b : b.subarray(from, to), at + from);
      let end = to;
      for (let k = n - 1; k >= 0; k--) {
        const seg = this.to[k]!;
        if (d !== 0 && end > seg) move(buf, at + seg + d, at + seg, at + end);
        const len = this.tLen[k]!;
        d -= len - (seg - this.from[k]!);
        put(buf, at + this.from[k]! + d, this.text[k]!, this.tFrom[k]!, len);
        end = this.from[k]!;
      }
    } else {
      let w = at + from;
      let r = from;
      for (let k = 0; k < n; k++) {
        w = copy(buf, w, b, r, this.from[k]!);
        const len = this.tLen[k]!;
        put(buf, w, this.text[k]!, this.tFrom[k]!, len);
        w += len;
        r = this.to[k]!;
      }
      copy(buf, w, b, r, to);
    }
    sink.advance(total);
  }
}

/** all of `t` into `s` at `at` (a long one, a composite's head or tail, in one set: no view to make) */
function whole(s: Uint8Array, at: number, t: Uint8Array): number {
  if (t.length > 24) s.set(t, at);
  else for (let k = 0; k < t.length; k++) s[at + k] = t[k]!;
  return at + t.length;
}

/**
 * `buf[from..to)` moved to `dst` (`dst >= from`: copied from its end). A native move makes no view and
 * costs what a dozen bytes moved one by one do (~50 ns against ~4 ns a byte, Node 20, this bench machine)
 */
function move(buf: Uint8Array, dst: number, from: number, to: number): void {
  if (to - from > 12) buf.copyWithin(dst, from, to);
  else for (let k = to - 1, w = dst + (to - from) - 1; k >= from; k--, w--) buf[w] = buf[k]!;
}

/** `t[from..from+len)` into `buf` at `at` (a whole array in one set, no view: a marker, a suffix) */
function put(buf: Uint8Array, at: number, t: Uint8Array, from: number, len: number): void {
  if (len > 8 && from === 0 && len === t.length) buf.set(t, at);
  else for (let k = from, e = from + len; k < e; k++) buf[at++] = t[k]!;
}

/** `b[from..to)` into `buf` at `at`: where it ends there */
function copy(buf: Uint8Array, at: number, b: Uint8Array, from: number, to: number): number {
  if (to - from > 64) buf.set(b.subarray(from, to), at);
  else for (let k = from; k < to; k++) buf[at + k - from] = b[k]!;
  return at + to - from;
}

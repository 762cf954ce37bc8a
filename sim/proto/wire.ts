/**
 * The protobuf wire format, the part Kubernetes' messages use: varints (int32, int64, bool, enum-free
 * proto2), length-delimited fields (strings, bytes, messages, map entries, packed repeated scalars).
 * Kubernetes' messages never use fixed32/fixed64, but a reader must still skip them in unknown fields.
 */

export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

/** A body that is not valid protobuf: the caller turns it into kube's 400 Status. */
export class WireError extends Error {}

export interface Field {
  num: number;
  wire: number;
  /** The varint's value (VARINT), as a 64-bit two's-complement BigInt. */
  varint: bigint;
  /** The payload range (LEN). */
  start: number;
  end: number;
}

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let v = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new WireError('unexpected EOF');
    const b = buf[pos++]!;
    v |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) return [BigInt.asUintN(64, v), pos];
    shift += 7n;
  }
  throw new WireError('proto: integer overflow');
}

/** A varint known to be small (tags, lengths) as a plain number; the hot path, free of BigInt. */
function readLength(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 8; i++) {
    if (pos >= buf.length) throw new WireError('unexpected EOF');
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
  throw new WireError('proto: integer overflow');
}

/** The fields of a message in buf[start, end), in wire order. */
export function* fields(buf: Uint8Array, start = 0, end = buf.length): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const [key, p] = readLength(buf, pos);
    pos = p;
    const num = Math.floor(key / 8);
    const wire = key % 8;
    if (num === 0) throw new WireError('proto: illegal tag 0');
    const f: Field = { num, wire, varint: 0n, start: pos, end: pos };
    if (wire === VARINT) [f.varint, pos] = readVarint(buf, pos);
    else if (wire === LEN) {
      const [len, q] = readLength(buf, pos);
      if (len > end - q) throw new WireError('unexpected EOF');
      f.start = q;
      f.end = q + len;
      pos = f.end;
    } else if (wire === I64) pos += 8;
    else if (wire === I32) pos += 4;
    else throw new WireError(`proto: illegal wireType ${wire}`);
    if (pos > end) throw new WireError('unexpected EOF');
    yield f;
  }
}

/** Varints of a packed repeated scalar field. */
export function packedVarints(buf: Uint8Array, start: number, end: number): bigint[] {
  const out: bigint[] = [];
  let pos = start;
  while (pos < end) {
    const [v, p] = readVarint(buf, pos);
    out.push(v);
    pos = p;
  }
  return out;
}

const te = new TextEncoder();

/** A growable byte buffer that writes fields in the order asked (the codec asks in field-number order). */
export class Writer {
  private buf: Uint8Array<ArrayBuffer> = new Uint8Array(64);
  private len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  varint(v: bigint | number): void {
    this.room(10);
    if (typeof v === 'number' && v >= 0 && v <= 0x7fffffff) {
      // the common case (tags, lengths, small numbers) without BigInt
      let n = v;
      while (n >= 0x80) {
        this.buf[this.len++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      this.buf[this.len++] = n;
      return;
    }
    let x = BigInt.asUintN(64, BigInt(v));
    while (x >= 0x80n) {
      this.buf[this.len++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.buf[this.len++] = Number(x);
  }

  tag(num: number, wire: number): void {
    this.varint((num << 3) | wire);
  }

  bytes(num: number, b: Uint8Array): void {
    this.tag(num, LEN);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  string(num: number, s: string): void {
    // ASCII (names, keys, most values) straight into the buffer; anything else through TextEncoder
    let ascii = s.length < 128;
    for (let i = 0; ascii && i < s.length; i++) if (s.charCodeAt(i) > 0x7f) ascii = false;
    if (!ascii) {
      this.bytes(num, te.encode(s));
      return;
    }
    this.tag(num, LEN);
    this.buf[this.len++] = s.length;
    this.room(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.len++] = s.charCodeAt(i);
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  finish(): Uint8Array<ArrayBuffer> {
    return this.buf.slice(0, this.len);
  }
}

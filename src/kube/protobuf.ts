/**
 * Kubernetes' protobuf framing and just enough of the protobuf wire format to read and rebuild a body
 * without knowing the object's schema (the fleet edits ObjectMeta in src/merge/protobuf.ts; every other
 * byte is copied as it came).
 *
 * A body of `application/vnd.kubernetes.protobuf` is the magic `k8s\0` followed by a runtime.Unknown
 * (k8s.io/apimachinery/pkg/runtime/generated.proto):
 *   typeMeta = 1 (TypeMeta: apiVersion = 1, kind = 2), raw = 2, contentEncoding = 3, contentType = 4.
 * `raw` is the object. Every built-in top-level kind has its ObjectMeta as field 1 (core/v1 and the other
 * generated.proto files), and ObjectMeta (meta/v1/generated.proto) has
 *   name = 1, generateName = 2, namespace = 3, uid = 5, resourceVersion = 6,
 *   labels = 11 and annotations = 12 (map<string,string>: repeated entries {key = 1, value = 2}),
 *   ownerReferences = 13 (OwnerReference: kind = 1, name = 3, uid = 4, apiVersion = 5).
 * Pure; throws {@link ProtobufError} for bytes that are not such a body.
 */
import { concatBytes } from '../util/bytes.ts';

export const K8S_PROTOBUF_MAGIC = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
}

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

export interface Field {
  num: number;
  wire: number;
  /** the whole field (tag included), to copy it unchanged */
  start: number;
  end: number;
  /** the value: payload of a LEN field, the bytes of a VARINT/I64/I32 */
  valueStart: number;
  valueEnd: number;
  /** VARINT fields: the value (exact below 2^53) */
  varint?: number;
}

function readVarint(buf: Uint8Array, pos: number, end: number): [number, number] {
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new ProtobufError('truncated varint');
    const b = buf[pos++]!;
    value += (b & 0x7f) * mul;
    if (b < 0x80) return [value, pos];
    mul *= 128;
  }
  throw new ProtobufError('varint longer than 10 bytes');
}

/** The fields of one message, in order. */
export function readFields(buf: Uint8Array, start = 0, end = buf.length): Field[] {
  const out: Field[] = [];
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const [tag, p1] = readVarint(buf, pos, end);
    pos = p1;
    const num = Math.floor(tag / 8);
    const wire = tag % 8;
    if (num === 0) throw new ProtobufError('field number 0');
    let valueStart = pos;
    let varint: number | undefined;
    switch (wire) {
      case WIRE_VARINT: {
        const [v, p] = readVarint(buf, pos, end);
        varint = v;
        pos = p;
        break;
      }
      case WIRE_I64:
        pos += 8;
        break;
      case WIRE_I32:
        pos += 4;
        break;
      case WIRE_LEN: {
        const [len, p] = readVarint(buf, pos, end);
        valueStart = p;
        pos = p + len;
        break;
      }
      default:
        throw new ProtobufError(`unsupported wire type ${wire}`);
    }
    if (pos > end) throw new ProtobufError('truncated field');
    out.push({ num, wire, start: fieldStart, end: pos, valueStart, valueEnd: pos, varint });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- writing

export function varint(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return new Uint8Array(out);
}

const concat = (parts: readonly Uint8Array[]) => concatBytes(parts);

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A LEN field (string, bytes, embedded message). */
export function lenField(num: number, value: Uint8Array | string): Uint8Array {
  const bytes = typeof value === 'string' ? enc.encode(value) : value;
  return concat([varint(num * 8 + WIRE_LEN), varint(bytes.length), bytes]);
}

export function varintField(num: number, value: number): Uint8Array {
  return concat([varint(num * 8 + WIRE_VARINT), varint(value)]);
}

export function fieldBytes(buf: Uint8Array, f: Field): Uint8Array {
  return buf.subarray(f.valueStart, f.valueEnd);
}

export function fieldString(buf: Uint8Array, f: Field): string {
  return dec.decode(fieldBytes(buf, f));
}

/** A map<string, string|bytes> entry: key = 1, value = 2. */
export function readMapEntry(buf: Uint8Array, f: Field): { key: string; value: Uint8Array } {
  let key = '';
  let value: Uint8Array = new Uint8Array(0);
  for (const e of readFields(buf, f.valueStart, f.valueEnd)) {
    if (e.num === 1 && e.wire === WIRE_LEN) key = fieldString(buf, e);
    else if (e.num === 2 && e.wire === WIRE_LEN) value = fieldBytes(buf, e);
  }
  return { key, value };
}

export function mapEntry(num: number, key: string, value: Uint8Array | string): Uint8Array {
  return lenField(num, concat([lenField(1, key), lenField(2, value)]));
}

/**
 * Rebuilds a message: `edit` returns the replacement bytes of a field (whole field, tag included; an empty
 * array drops it) or undefined to keep it byte for byte.
 */
export function rewriteMessage(
  buf: Uint8Array,
  start: number,
  end: number,
  edit: (f: Field) => Uint8Array | undefined,
): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const f of readFields(buf, start, end)) parts.push(edit(f) ?? buf.subarray(f.start, f.end));
  return concat(parts);
}

// ---------------------------------------------------------------------------------------------- envelope

export interface Envelope {
  apiVersion: string;
  kind: string;
  /** the object's own bytes */
  raw: Uint8Array;
}

export function isProtobufBody(body: Uint8Array): boolean {
  return body.length >= 4 && K8S_PROTOBUF_MAGIC.every((b, i) => body[i] === b);
}

export function decodeEnvelope(body: Uint8Array): Envelope {
  if (!isProtobufBody(body)) throw new ProtobufError('the body does not start with the k8s protobuf magic');
  const out: Envelope = { apiVersion: '', kind: '', raw: new Uint8Array(0) };
  for (const f of readFields(body, 4)) {
    if (f.num === 1 && f.wire === WIRE_LEN) {
      for (const t of readFields(body, f.valueStart, f.valueEnd)) {
        if (t.num === 1 && t.wire === WIRE_LEN) out.apiVersion = fieldString(body, t);
        if (t.num === 2 && t.wire === WIRE_LEN) out.kind = fieldString(body, t);
      }
    } else if (f.num === 2 && f.wire === WIRE_LEN) out.raw = fieldBytes(body, f);
  }
  return out;
}

/** `k8s\0` + Unknown{typeMeta, raw}: what client-go writes. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const typeMeta = concat([lenField(1, apiVersion), lenField(2, kind)]);
  return concat([K8S_PROTOBUF_MAGIC, lenField(1, typeMeta), lenField(2, raw)]);
}

// ObjectMeta (meta/v1/generated.proto)
export const META_NAME = 1;
export const META_GENERATE_NAME = 2;
export const META_NAMESPACE = 3;
export const META_RESOURCE_VERSION = 6;
export const META_LABELS = 11;
export const META_ANNOTATIONS = 12;
export const META_OWNER_REFERENCES = 13;
/** OwnerReference.name */
export const OWNER_NAME = 3;

/** ObjectMeta of a protobuf object (raw bytes), decoded for reading: the fields the fleet cares about. */
export interface ProtobufMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  resourceVersion?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export function readObjectMeta(raw: Uint8Array): ProtobufMeta {
  const out: ProtobufMeta = { labels: {}, annotations: {} };
  for (const f of readFields(raw)) {
    if (f.num !== 1 || f.wire !== WIRE_LEN) continue;
    for (const m of readFields(raw, f.valueStart, f.valueEnd)) {
      if (m.wire !== WIRE_LEN) continue;
      if (m.num === META_NAME) out.name = fieldString(raw, m);
      else if (m.num === META_GENERATE_NAME) out.generateName = fieldString(raw, m);
      else if (m.num === META_NAMESPACE) out.namespace = fieldString(raw, m);
      else if (m.num === META_RESOURCE_VERSION) out.resourceVersion = fieldString(raw, m);
      else if (m.num === META_LABELS || m.num === META_ANNOTATIONS) {
        const { key, value } = readMapEntry(raw, m);
        (m.num === META_LABELS ? out.labels : out.annotations)[key] = dec.decode(value);
      }
    }
  }
  return out;
}

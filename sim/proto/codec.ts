/**
 * JSON (as the simulator stores objects) ↔ protobuf bytes of a Kubernetes message, driven by schema.json
 * (generated from Kubernetes 1.35's generated.proto by gen.mjs).
 *
 * Decoding follows what kube-apiserver's JSON would show after a protobuf write: Go's generated
 * marshaller writes every non-pointer field, even empty, so an empty singular string or bytes field reads
 * as absent (Go's `omitempty`) and an empty Time as unset; zero numbers and false stay (a pointer's 0 or
 * false, `replicas: 0` or `immutable: false`, is meaningful and the .proto cannot say which fields are
 * pointers). Encoding writes the fields the JSON has, in field-number order, repeated scalars unpacked and
 * map entries sorted by key, as Go's generated code does; decoding accepts packed and unpacked both.
 */

import {
  formatDuration,
  formatMicroTime,
  formatTime,
  parseDuration,
  parseTime,
  ValueError,
} from './scalars.ts';
import SCHEMA from './schema.json' with { type: 'json' };
import { fields, LEN, packedVarints, VARINT, WireError, Writer } from './wire.ts';

export { ValueError, WireError };

/** [number, proto name, type, flags ('r' repeated, 'm' map, 'i' inline), JSON name if not the proto name]. */
type FieldDef = [number, string, string, string, string?];

interface Message {
  fields: FieldDef[];
  byNum: Map<number, FieldDef>;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const T_TIME = `${META}Time`;
const T_MICRO = `${META}MicroTime`;
const T_DURATION = `${META}Duration`;
const T_FIELDS = `${META}FieldsV1`;
const T_INTSTR = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const T_RAW = 'k8s.io.apimachinery.pkg.runtime.RawExtension';
const QUANTITIES = new Set([
  'k8s.io.apimachinery.pkg.api.resource.Quantity',
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue',
]);

const defs = (SCHEMA as unknown as { messages: Record<string, FieldDef[]> }).messages;
const cache = new Map<string, Message>();

export function message(type: string): Message | undefined {
  let m = cache.get(type);
  if (!m) {
    const f = defs[type];
    if (!f) return undefined;
    m = { fields: f, byNum: new Map(f.map((d) => [d[0], d])) };
    cache.set(type, m);
  }
  return m;
}

/** Go named slice types (Verbs, ExtraValue: `type ExtraValue []string`): a message of one `repeated items = 1`, a JSON array. */
function isWrapper(type: string, m: Message): boolean {
  const f = m.fields[0];
  return m.fields.length === 1 && f?.[1] === 'items' && f[3] === 'r' && !type.endsWith('List');
}

const jsonName = (f: FieldDef) => f[4] ?? f[1];

/**
 * Go non-pointer `omitempty` numbers and booleans that clients' generated marshallers always write, so a
 * zero on the wire means "unset" (k8s.io/api types.go). Only the common ones clients send on writes; any
 * other zero is kept, since for a pointer (`replicas`, `runAsUser`, `backoffLimit`) 0 and false mean something.
 */
export const OMIT_ZERO = new Set([
  'ObjectMeta.generation',
  'ContainerPort.hostPort',
  'ServicePort.nodePort',
  'ServiceSpec.healthCheckNodePort',
  'ServiceSpec.publishNotReadyAddresses',
  'DeploymentSpec.minReadySeconds',
  'DeploymentSpec.paused',
  'ReplicaSetSpec.minReadySeconds',
  'StatefulSetSpec.minReadySeconds',
  'DaemonSetSpec.minReadySeconds',
  'Container.stdin',
  'Container.stdinOnce',
  'Container.tty',
  'EphemeralContainerCommon.stdin',
  'EphemeralContainerCommon.stdinOnce',
  'EphemeralContainerCommon.tty',
  'PodSpec.hostNetwork',
  'PodSpec.hostPID',
  'PodSpec.hostIPC',
  'VolumeMount.readOnly',
  'PersistentVolumeClaimVolumeSource.readOnly',
]);

const shortName = (type: string) => type.slice(type.lastIndexOf('.') + 1);
const td = new TextDecoder('utf-8', { fatal: false });
const te = new TextEncoder();

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function unbase64(s: unknown, path: string): Uint8Array {
  if (typeof s !== 'string') throw new ValueError(`${path}: expected a base64 string`);
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    throw new ValueError(`${path}: illegal base64 data`);
  }
}

/** The embedded-object decoder for RawExtension (set by envelope.ts: a raw `k8s\0` object inside a watch event). */
let decodeEmbedded: ((raw: Uint8Array) => unknown) | undefined;
export function setEmbeddedDecoder(fn: (raw: Uint8Array) => unknown): void {
  decodeEmbedded = fn;
}

// ------------------------------------------------------------------------------------------ decode

function scalar(
  type: string,
  buf: Uint8Array,
  f: { wire: number; varint: bigint; start: number; end: number },
  num: number,
): unknown {
  const want = type === 'string' || type === 'bytes' ? LEN : VARINT;
  if (f.wire !== want) throw new WireError(`proto: wrong wireType = ${f.wire} for field ${num}`);
  switch (type) {
    case 'string':
      return td.decode(buf.subarray(f.start, f.end));
    case 'bytes':
      return base64(buf.subarray(f.start, f.end));
    case 'bool':
      return f.varint !== 0n;
    case 'int32':
      return Number(BigInt.asIntN(32, f.varint));
    case 'int64':
      return Number(BigInt.asIntN(64, f.varint));
    default:
      throw new WireError(`unsupported scalar type ${type}`);
  }
}

function special(type: string, buf: Uint8Array, start: number, end: number): { value: unknown } | undefined {
  if (type === T_TIME || type === T_MICRO) {
    if (start === end) return { value: undefined };
    let secs = 0n;
    let nanos = 0n;
    for (const f of fields(buf, start, end)) {
      if (f.num === 1 && f.wire === VARINT) secs = BigInt.asIntN(64, f.varint);
      else if (f.num === 2 && f.wire === VARINT) nanos = BigInt.asIntN(32, f.varint);
    }
    return {
      value: type === T_TIME ? formatTime(Number(secs)) : formatMicroTime(Number(secs), Number(nanos)),
    };
  }
  if (type === T_DURATION) {
    let ns = 0n;
    for (const f of fields(buf, start, end))
      if (f.num === 1 && f.wire === VARINT) ns = BigInt.asIntN(64, f.varint);
    return { value: formatDuration(ns) };
  }
  if (QUANTITIES.has(type)) {
    let s = '0';
    for (const f of fields(buf, start, end))
      if (f.num === 1 && f.wire === LEN) s = td.decode(buf.subarray(f.start, f.end));
    return { value: s };
  }
  if (type === T_INTSTR) {
    let kind = 0n;
    let int = 0;
    let str = '';
    for (const f of fields(buf, start, end)) {
      if (f.num === 1 && f.wire === VARINT) kind = f.varint;
      else if (f.num === 2 && f.wire === VARINT) int = Number(BigInt.asIntN(32, f.varint));
      else if (f.num === 3 && f.wire === LEN) str = td.decode(buf.subarray(f.start, f.end));
    }
    return { value: kind === 1n ? str : int };
  }
  if (type === T_RAW || type === T_FIELDS) {
    let raw: Uint8Array | undefined;
    for (const f of fields(buf, start, end))
      if (f.num === 1 && f.wire === LEN) raw = buf.subarray(f.start, f.end);
    if (!raw || raw.length === 0) return { value: undefined };
    if (raw[0] === 0x6b && raw[1] === 0x38 && raw[2] === 0x73 && raw[3] === 0 && decodeEmbedded) {
      return { value: decodeEmbedded(raw) };
    }
    try {
      return { value: JSON.parse(td.decode(raw)) };
    } catch {
      throw new WireError(`${type === T_RAW ? 'RawExtension' : 'FieldsV1'} is not JSON`);
    }
  }
  return undefined;
}

/** The JSON value of a `type` message in buf[start, end). */
export function decodeMessage(type: string, buf: Uint8Array, start = 0, end = buf.length): unknown {
  const s = special(type, buf, start, end);
  if (s) return s.value;
  const m = message(type);
  if (!m) throw new WireError(`no schema for ${type}`);
  const wrapper = isWrapper(type, m);
  const obj: Record<string, unknown> = {};
  for (const f of fields(buf, start, end)) {
    const d = m.byNum.get(f.num);
    if (!d) continue; // unknown field: proto2 readers skip it
    const [num, , ftype, flags] = d;
    const name = jsonName(d);
    if (flags.includes('m')) {
      if (f.wire !== LEN) throw new WireError(`proto: wrong wireType = ${f.wire} for field ${num}`);
      let key = '';
      let value: unknown = mapDefault(ftype);
      for (const e of fields(buf, f.start, f.end)) {
        if (e.num === 1) key = scalar('string', buf, e, 1) as string;
        else if (e.num === 2)
          value = SCALAR_TYPES.has(ftype) ? scalar(ftype, buf, e, 2) : subMessage(ftype, buf, e, 2);
      }
      const map = (obj[name] ?? {}) as Record<string, unknown>;
      // defineProperty: "__proto__" is a valid ConfigMap/Secret key and must stay a plain entry
      Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
      obj[name] = map;
    } else if (flags.includes('r')) {
      const list = (obj[name] ?? []) as unknown[];
      if (SCALAR_TYPES.has(ftype) && ftype !== 'string' && ftype !== 'bytes' && f.wire === LEN) {
        for (const v of packedVarints(buf, f.start, f.end))
          list.push(scalar(ftype, buf, { wire: VARINT, varint: v, start: 0, end: 0 }, num));
      } else list.push(SCALAR_TYPES.has(ftype) ? scalar(ftype, buf, f, num) : subMessage(ftype, buf, f, num));
      obj[name] = list;
    } else if (SCALAR_TYPES.has(ftype)) {
      const v = scalar(ftype, buf, f, num);
      if (v === '' || ((v === 0 || v === false) && OMIT_ZERO.has(`${shortName(type)}.${name}`)))
        delete obj[name];
      else obj[name] = v;
    } else if (flags.includes('i')) {
      Object.assign(obj, subMessage(ftype, buf, f, num));
    } else {
      const v = subMessage(ftype, buf, f, num);
      if (v === undefined) delete obj[name];
      else obj[name] = v;
    }
  }
  return wrapper ? (obj.items ?? []) : obj;
}

const SCALAR_TYPES = new Set(['string', 'bytes', 'bool', 'int32', 'int64']);

function mapDefault(type: string): unknown {
  if (type === 'string' || type === 'bytes') return '';
  if (QUANTITIES.has(type)) return '0';
  const m = message(type);
  return m && isWrapper(type, m) ? [] : {};
}

function subMessage(
  type: string,
  buf: Uint8Array,
  f: { wire: number; start: number; end: number },
  num: number,
): unknown {
  if (f.wire !== LEN) throw new WireError(`proto: wrong wireType = ${f.wire} for field ${num}`);
  return decodeMessage(type, buf, f.start, f.end);
}

// ------------------------------------------------------------------------------------------ encode

function writeScalar(w: Writer, num: number, type: string, v: unknown, path: string): void {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw new ValueError(`${path}: expected a string, got ${JSON.stringify(v)}`);
      w.string(num, v);
      return;
    case 'bytes':
      w.bytes(num, unbase64(v, path));
      return;
    case 'bool':
      if (typeof v !== 'boolean')
        throw new ValueError(`${path}: expected a boolean, got ${JSON.stringify(v)}`);
      w.tag(num, VARINT);
      w.varint(v ? 1 : 0);
      return;
    default: {
      if (typeof v !== 'number' || !Number.isInteger(v))
        throw new ValueError(`${path}: expected an integer, got ${JSON.stringify(v)}`);
      if (type === 'int32' && (v < -(2 ** 31) || v >= 2 ** 31))
        throw new ValueError(`${path}: ${v} overflows int32`);
      w.tag(num, VARINT);
      w.varint(v);
    }
  }
}

function writeSpecial(type: string, v: unknown, w: Writer, path: string): boolean {
  if (type === T_TIME || type === T_MICRO) {
    if (typeof v !== 'string') throw new ValueError(`${path}: expected an RFC 3339 time`);
    const [secs, nanos] = parseTime(v);
    w.tag(1, VARINT);
    w.varint(BigInt(secs));
    w.tag(2, VARINT);
    // metav1.Time's JSON has whole seconds; MicroTime keeps microseconds.
    w.varint(type === T_TIME ? 0 : Math.floor(nanos / 1000) * 1000);
  } else if (type === T_DURATION) {
    if (typeof v !== 'string') throw new ValueError(`${path}: expected a duration string`);
    w.tag(1, VARINT);
    w.varint(parseDuration(v));
  } else if (QUANTITIES.has(type)) {
    if (typeof v !== 'string' && typeof v !== 'number') throw new ValueError(`${path}: expected a quantity`);
    w.string(1, String(v));
  } else if (type === T_INTSTR) {
    if (typeof v === 'number' && Number.isInteger(v)) {
      w.tag(1, VARINT);
      w.varint(0);
      w.tag(2, VARINT);
      w.varint(BigInt(v));
      w.string(3, '');
    } else if (typeof v === 'string') {
      w.tag(1, VARINT);
      w.varint(1);
      w.tag(2, VARINT);
      w.varint(0);
      w.string(3, v);
    } else throw new ValueError(`${path}: expected an integer or a string`);
  } else if (type === T_RAW || type === T_FIELDS) {
    w.bytes(1, te.encode(JSON.stringify(v)));
  } else return false;
  return true;
}

/** Protobuf bytes of the JSON value `v` as a `type` message; throws ValueError where the JSON has the wrong shape. */
export function encodeMessage(type: string, v: unknown, path = ''): Uint8Array<ArrayBuffer> {
  const w = new Writer();
  writeMessage(type, v, w, path);
  return w.finish();
}

function writeMessage(type: string, v: unknown, w: Writer, path: string): void {
  if (writeSpecial(type, v, w, path)) return;
  const m = message(type);
  if (!m) throw new ValueError(`no schema for ${type}`);
  if (isWrapper(type, m)) {
    if (!Array.isArray(v)) throw new ValueError(`${path}: expected an array`);
    writeField(m.fields[0]!, v, w, path);
    return;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ValueError(`${path}: expected an object`);
  for (const d of m.fields) {
    if (d[3].includes('i')) {
      w.bytes(d[0], encodeMessage(d[2], v, path));
      continue;
    }
    const x = (v as Record<string, unknown>)[jsonName(d)];
    if (x === undefined || x === null) continue;
    writeField(d, x, w, `${path}.${jsonName(d)}`);
  }
}

function writeField(d: FieldDef, x: unknown, w: Writer, path: string): void {
  const [num, , type, flags] = d;
  const scalar = SCALAR_TYPES.has(type);
  if (flags.includes('m')) {
    if (typeof x !== 'object' || Array.isArray(x)) throw new ValueError(`${path}: expected an object`);
    const map = x as Record<string, unknown>;
    for (const k of Object.keys(map).sort()) {
      const e = new Writer();
      e.string(1, k);
      const val = map[k];
      if (scalar) writeScalar(e, 2, type, val ?? '', `${path}.${k}`);
      else e.bytes(2, encodeMessage(type, val, `${path}.${k}`));
      w.bytes(num, e.finish());
    }
  } else if (flags.includes('r')) {
    if (!Array.isArray(x)) throw new ValueError(`${path}: expected an array`);
    for (let i = 0; i < x.length; i++) {
      if (scalar) writeScalar(w, num, type, x[i], path);
      else w.bytes(num, encodeMessage(type, x[i], path));
    }
  } else if (scalar) writeScalar(w, num, type, x, path);
  else w.bytes(num, encodeMessage(type, x, path));
}

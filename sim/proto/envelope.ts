/**
 * Kubernetes' protobuf framing around a message: the `k8s\0` magic and runtime.Unknown (typeMeta {apiVersion,
 * kind}, raw, contentEncoding, contentType) of every request and answer body, and the watch stream, whose
 * frames are a 4-byte big-endian length and a bare metav1.WatchEvent (client-go's raw protobuf stream
 * serializer, no magic) carrying the object, with its own magic and Unknown, in `object.raw`.
 */

import { decodeMessage, encodeMessage, message, setEmbeddedDecoder, ValueError } from './codec.ts';
import { fields, LEN, WireError, Writer } from './wire.ts';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const MAGIC = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** API group of each k8s.io/api folder whose group is not `<folder>.k8s.io`. */
const GROUPS: Record<string, string> = {
  core: '',
  apps: 'apps',
  batch: 'batch',
  autoscaling: 'autoscaling',
  policy: 'policy',
  extensions: 'extensions',
  rbac: 'rbac.authorization.k8s.io',
  flowcontrol: 'flowcontrol.apiserver.k8s.io',
  apiserverinternal: 'internal.apiserver.k8s.io',
};

/** The proto package of an apiVersion ("apps/v1" → k8s.io.api.apps.v1); meta.k8s.io's is apimachinery's. */
function packageOf(apiVersion: string): string | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group === 'meta.k8s.io') return `k8s.io.apimachinery.pkg.apis.meta.${version}`;
  const folder =
    Object.entries(GROUPS).find(([, g]) => g === group)?.[0] ??
    (group.endsWith('.k8s.io') ? group.slice(0, -7) : undefined);
  return folder ? `k8s.io.api.${folder}.${version}` : undefined;
}

/** The apiVersion a k8s.io/api proto package serves ("k8s.io.api.rbac.v1" → rbac.authorization.k8s.io/v1). */
export function apiVersionOfPackage(pkg: string): string | undefined {
  const m = /^k8s\.io\.api\.(\w+)\.(\w+)$/.exec(pkg);
  if (!m) return undefined;
  const [, folder = '', version = ''] = m;
  const group = GROUPS[folder] ?? `${folder}.k8s.io`;
  return group ? `${group}/${version}` : version;
}

/**
 * The message of apiVersion/kind, undefined for kinds Kubernetes has no protobuf for (custom resources).
 * Status, WatchEvent, DeleteOptions and the other meta.k8s.io kinds are served under every group version.
 */
export function messageOf(apiVersion: string, kind: string): string | undefined {
  const pkg = packageOf(apiVersion);
  if (pkg && message(`${pkg}.${kind}`)) return `${pkg}.${kind}`;
  if (message(`${META}.${kind}`) && !['ObjectMeta', 'ListMeta', 'Time'].includes(kind))
    return `${META}.${kind}`;
  return undefined;
}

export interface Unknown {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

const td = new TextDecoder();

/** The runtime.Unknown of a protobuf body; WireError if it has no `k8s\0` magic or does not parse. */
export function decodeEnvelope(body: Uint8Array): Unknown {
  // kube's protobuf serializer's own words (apimachinery runtime/serializer/protobuf).
  if (body.length === 0) throw new WireError('empty data');
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) {
    throw new WireError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  }
  if (body.length === 4) throw new WireError('empty body');
  const u: Unknown = {
    apiVersion: '',
    kind: '',
    raw: new Uint8Array(),
    contentEncoding: '',
    contentType: '',
  };
  for (const f of fields(body, 4)) {
    if (f.wire !== LEN) continue;
    if (f.num === 1) {
      for (const t of fields(body, f.start, f.end)) {
        if (t.wire !== LEN) continue;
        if (t.num === 1) u.apiVersion = td.decode(body.subarray(t.start, t.end));
        else if (t.num === 2) u.kind = td.decode(body.subarray(t.start, t.end));
      }
    } else if (f.num === 2) u.raw = body.subarray(f.start, f.end);
    else if (f.num === 3) u.contentEncoding = td.decode(body.subarray(f.start, f.end));
    else if (f.num === 4) u.contentType = td.decode(body.subarray(f.start, f.end));
  }
  return u;
}

export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array<ArrayBuffer> {
  const tm = new Writer();
  tm.string(1, apiVersion);
  tm.string(2, kind);
  const w = new Writer();
  w.raw(MAGIC);
  w.bytes(1, tm.finish());
  w.bytes(2, raw);
  // Go's marshaller writes the empty contentEncoding and contentType too.
  w.string(3, '');
  w.string(4, '');
  return w.finish();
}

/** A kind the simulator's schema has no message for (the caller answers 415, as kube does for a CR). */
export class UnknownKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`no protobuf schema for ${apiVersion}, Kind=${kind}`);
  }
}

/**
 * The JSON object of an enveloped protobuf body: apiVersion and kind from typeMeta (or, where the body
 * leaves them empty, from `defaults`, the route's, as kube's copyKindDefaults does), the rest from raw.
 */
export function decodeObject(
  body: Uint8Array,
  defaults?: { apiVersion: string; kind: string },
): Record<string, unknown> {
  const u = decodeEnvelope(body);
  if (!u.apiVersion && defaults) u.apiVersion = defaults.apiVersion;
  if (!u.kind && defaults) u.kind = defaults.kind;
  return decodeUnknown(u);
}

/** The JSON object of an already unwrapped runtime.Unknown. */
export function decodeUnknown(u: Unknown): Record<string, unknown> {
  const type = messageOf(u.apiVersion, u.kind);
  if (!type) throw new UnknownKindError(u.apiVersion, u.kind);
  const obj = decodeMessage(type, u.raw) as Record<string, unknown>;
  return { apiVersion: u.apiVersion, kind: u.kind, ...obj };
}

setEmbeddedDecoder((raw) => decodeObject(raw));

/** The enveloped protobuf of a JSON object with apiVersion and kind; UnknownKindError/ValueError otherwise. */
export function encodeObject(obj: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    throw new ValueError('object has no apiVersion/kind');
  const type = messageOf(apiVersion, kind);
  if (!type) throw new UnknownKindError(apiVersion, kind);
  return encodeEnvelope(apiVersion, kind, encodeMessage(type, obj));
}

/** One frame of a protobuf watch: length prefix + WatchEvent{type, object: RawExtension{raw: enveloped object}}. */
export function encodeWatchFrame(type: string, obj: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  const ev = new Writer();
  ev.string(1, type);
  const raw = new Writer();
  raw.bytes(1, encodeObject(obj));
  ev.bytes(2, raw.finish());
  const body = ev.finish();
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
}

/** The events of a protobuf watch body (for tests and clients of the simulator). */
export function decodeWatchFrames(buf: Uint8Array): { type: string; object: Record<string, unknown> }[] {
  const out: { type: string; object: Record<string, unknown> }[] = [];
  let pos = 0;
  while (pos + 4 <= buf.length) {
    const len = new DataView(buf.buffer, buf.byteOffset + pos, 4).getUint32(0);
    if (pos + 4 + len > buf.length) break;
    const ev = decodeMessage(`${META}.WatchEvent`, buf, pos + 4, pos + 4 + len) as {
      type: string;
      object: Record<string, unknown>;
    };
    out.push(ev);
    pos += 4 + len;
  }
  return out;
}

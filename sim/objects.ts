/**
 * Object helpers shared by the handlers: wire presentation (kube-apiserver's key order), names, uids,
 * timestamps, managedFields.
 */

import type { KubeObject, ResourceDef } from './catalog/types.ts';
import { fieldsV1 } from './patch.ts';

export interface Gvr {
  group: string;
  version: string;
  resource: string;
}

export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

const META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

export function orderMetadata(meta: KubeObject['metadata']): KubeObject['metadata'] {
  const out: Record<string, unknown> = {};
  for (const k of META_ORDER) if (meta[k] !== undefined) out[k] = meta[k];
  for (const [k, v] of Object.entries(meta)) if (!(k in out) && v !== undefined) out[k] = v;
  return out as KubeObject['metadata'];
}

/**
 * The object as kube-apiserver encodes it: kind, apiVersion, metadata, then the rest in stored order.
 * `withType=false` for items of built-in lists, which the apiserver writes without kind/apiVersion.
 */
export function present(obj: KubeObject, def: ResourceDef, version: string, withType = true): KubeObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
  const body = { metadata: orderMetadata(metadata ?? {}), ...rest };
  if (!withType) return body as KubeObject;
  return { kind: def.kind, apiVersion: groupVersion(def.group, version), ...body } as KubeObject;
}

/** Go's metav1.Time: RFC 3339, seconds precision, UTC. */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime (events' eventTime, log timestamps use RFC3339Nano). */
export function microTimestamp(d: Date): string {
  return d.toISOString().replace(/Z$/, '000Z');
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** utilrand.String: what generateName and ReplicaSet pod names use. */
export function randomSuffix(n = 5): string {
  const bytes = new Uint8Array(n);
  crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += SAFE_ALPHABET[b % SAFE_ALPHABET.length];
  return s;
}

/** rand.SafeEncodeString of a decimal hash: the pod-template-hash alphabet. */
export function safeEncode(s: string): string {
  const alphabet = 'bcdf24hjklmnpqrstvwxz56789g';
  let out = '';
  for (const ch of s) out += alphabet[ch.charCodeAt(0) % alphabet.length];
  return out;
}

/** FNV-1a 32-bit (the Deployment controller hashes pod templates with FNV-32a). */
export function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function stableStringify(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(stableStringify).join(',')}]`;
  if (x && typeof x === 'object') {
    return `{${Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify((x as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(x);
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
export function specOf(obj: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return stableStringify(rest);
}

/** Comparison that ignores bookkeeping the apiserver sets itself, to detect no-op writes. */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { resourceVersion: _r, managedFields: _m, ...meta } = o.metadata;
    const { apiVersion: _a, kind: _k, ...rest } = o;
    return stableStringify({ ...rest, metadata: meta });
  };
  return strip(a) === strip(b);
}

/** managedFields: one entry per (manager, operation, subresource), refreshed on each write. */
export function recordManager(
  obj: KubeObject,
  manager: string,
  operation: 'Apply' | 'Update',
  apiVersion: string,
  now: Date,
  subresource?: string,
  fieldsOf?: unknown,
): void {
  const entries = (obj.metadata.managedFields ?? []).filter(
    (e) =>
      !(
        e['manager'] === manager &&
        e['operation'] === operation &&
        (e['subresource'] ?? '') === (subresource ?? '')
      ),
  );
  const entry: Record<string, unknown> = {
    manager,
    operation,
    apiVersion,
    time: timestamp(now),
    fieldsType: 'FieldsV1',
    fieldsV1: fieldsV1(fieldsOf ?? obj),
  };
  if (subresource) entry['subresource'] = subresource;
  // a manager that set no field is not recorded (kube drops entries with an empty field set)
  if (Object.keys(entry.fieldsV1 as object).length > 0) entries.push(entry);
  if (entries.length > 0) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/** The field manager kube-apiserver derives from a User-Agent when the request names none. */
export function managerFromUserAgent(ua: string | null): string {
  if (!ua) return 'unknown';
  return ua.split('/')[0]!.slice(0, 128) || 'unknown';
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function validName(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name);
}

/**
 * Rewriting the ObjectMeta of a Kubernetes protobuf body (fleet names, resourceVersions, labels), the
 * references of the kinds references.ts lists by field number, and the pod selectors of podselector.ts,
 * without decoding the object's schema: every other byte is copied as it came. The framing and the wire
 * format are Kubernetes vocabulary and live in src/kube/protobuf.ts.
 */

import {
  decodeEnvelope,
  type Field,
  fieldString,
  isProtobufBody,
  K8S_PROTOBUF_MAGIC,
  lenField,
  META_ANNOTATIONS,
  META_GENERATE_NAME,
  META_LABELS,
  META_NAME,
  META_OWNER_REFERENCES,
  META_RESOURCE_VERSION,
  mapEntry,
  OWNER_NAME,
  ProtobufError,
  readFields,
  readMapEntry,
  rewriteMessage,
  WIRE_LEN,
} from '../kube/protobuf.ts';
import { concatBytes } from '../util/bytes.ts';
import { PROTOBUF_POD_SELECTORS } from './objects/podselector.ts';
import { PROTOBUF_REFERENCES, type ProtobufRef } from './objects/references.ts';

const dec = new TextDecoder();

/** Edits of ObjectMeta fields; a map edit returning undefined drops the entry. */
export interface MetaEdit {
  name?(v: string): string;
  generateName?(v: string): string;
  resourceVersion?(v: string): string;
  label?(key: string, value: string): string | undefined;
  annotation?(key: string, value: string): string | undefined;
  ownerName?(v: string): string;
  /** a reference of the object (references.ts PROTOBUF_REFERENCES), `field` naming it for errors */
  reference?(v: string, field: string): string;
  /** an echo of the object's own name (a container's name), given the name ObjectMeta holds as written */
  echo?(v: string, objectName: string): string;
  /** an entry of a workload's or Service's pod selector (podselector.ts); undefined drops it */
  selectorLabel?(key: string, value: string): string | undefined;
}

/** a reference's or echo's string field at the end of `path`, or (`entry`) the entries of a map field there */
type RefPath = ProtobufRef & { entry?: (key: string, value: string) => string | undefined };

/**
 * The message `f` (of `buf`) with the string fields at the end of `paths` (field numbers below it)
 * edited; undefined when nothing changed. Repeated messages come as one field each: every one is walked.
 */
function editPaths(
  buf: Uint8Array,
  f: Field,
  paths: readonly RefPath[],
  depth: number,
  fn: (v: string, at: ProtobufRef) => string,
): Uint8Array | undefined {
  if (f.wire !== WIRE_LEN) return undefined;
  let changed = false;
  const inner = rewriteMessage(buf, f.valueStart, f.valueEnd, (m) => {
    const here = paths.filter((p) => p.path[depth] === m.num);
    if (here.length === 0) return undefined;
    const leaf = here.find((p) => p.path.length === depth + 1);
    const out = !leaf
      ? editPaths(buf, m, here, depth + 1, fn)
      : leaf.entry
        ? editMapEntry(m.num, buf, m, leaf.entry)
        : editString(m.num, buf, m, (v) => (v === '' ? v : fn(v, leaf)));
    if (out) changed = true;
    return out;
  });
  return changed ? lenField(f.num, inner) : undefined;
}

function editString(
  num: number,
  buf: Uint8Array,
  f: Field,
  fn?: (v: string) => string,
): Uint8Array | undefined {
  if (!fn || f.wire !== WIRE_LEN) return undefined;
  const v = fieldString(buf, f);
  const next = fn(v);
  return next === v ? undefined : lenField(num, next);
}

function editMapEntry(
  num: number,
  buf: Uint8Array,
  f: Field,
  fn?: (k: string, v: string) => string | undefined,
): Uint8Array | undefined {
  if (!fn || f.wire !== WIRE_LEN) return undefined;
  const { key, value } = readMapEntry(buf, f);
  const v = dec.decode(value);
  const next = fn(key, v);
  if (next === undefined) return new Uint8Array(0);
  return next === v ? undefined : mapEntry(num, key, next);
}

function editObjectMeta(buf: Uint8Array, f: Field, edit: MetaEdit): Uint8Array {
  return rewriteMessage(buf, f.valueStart, f.valueEnd, (m) => {
    switch (m.num) {
      case META_NAME:
        return editString(META_NAME, buf, m, edit.name);
      case META_GENERATE_NAME:
        return editString(META_GENERATE_NAME, buf, m, edit.generateName);
      case META_RESOURCE_VERSION:
        return editString(META_RESOURCE_VERSION, buf, m, edit.resourceVersion);
      case META_LABELS:
        return editMapEntry(META_LABELS, buf, m, edit.label);
      case META_ANNOTATIONS:
        return editMapEntry(META_ANNOTATIONS, buf, m, edit.annotation);
      case META_OWNER_REFERENCES:
        if (!edit.ownerName || m.wire !== WIRE_LEN) return undefined;
        return lenField(
          META_OWNER_REFERENCES,
          rewriteMessage(buf, m.valueStart, m.valueEnd, (o) =>
            o.num === OWNER_NAME ? editString(OWNER_NAME, buf, o, edit.ownerName) : undefined,
          ),
        );
    }
    return undefined;
  });
}

/**
 * The body with its object's ObjectMeta edited; envelope fields other than `raw`, and every field of the
 * object but its metadata, are copied unchanged.
 */
export function editProtobufObjectMeta(body: Uint8Array, edit: MetaEdit): Uint8Array {
  if (!isProtobufBody(body)) throw new ProtobufError('the body does not start with the k8s protobuf magic');
  const { apiVersion, kind } = decodeEnvelope(body);
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const key = `${group}/${kind}`;
  const refs: RefPath[] = (PROTOBUF_REFERENCES.get(key) ?? []).filter((r) =>
    r.echo ? edit.echo : edit.reference,
  );
  const selector = edit.selectorLabel && PROTOBUF_POD_SELECTORS.get(key);
  if (selector) refs.push({ path: selector, field: 'spec.selector', echo: false, entry: edit.selectorLabel });
  const envelope = rewriteMessage(body, 4, body.length, (f) => {
    if (f.num !== 2 || f.wire !== WIRE_LEN) return undefined;
    // the object's name as written, for echoes (read first: ObjectMeta may in principle follow the spec)
    let name = '';
    if (edit.echo)
      for (const o of readFields(body, f.valueStart, f.valueEnd))
        if (o.num === 1 && o.wire === WIRE_LEN)
          for (const m of readFields(body, o.valueStart, o.valueEnd))
            if (m.num === META_NAME && m.wire === WIRE_LEN) name = fieldString(body, m);
    const each = (v: string, at: ProtobufRef) =>
      at.echo ? edit.echo!(v, name) : edit.reference!(v, at.field);
    const raw = rewriteMessage(body, f.valueStart, f.valueEnd, (o) => {
      if (o.num === 1 && o.wire === WIRE_LEN) return lenField(1, editObjectMeta(body, o, edit));
      const here = refs.filter((r) => r.path[0] === o.num);
      return here.length ? editPaths(body, o, here, 1, each) : undefined;
    });
    return lenField(2, raw);
  });
  return concatBytes([K8S_PROTOBUF_MAGIC, envelope]);
}

/**
 * Protobuf request bodies (`application/vnd.kubernetes.protobuf`, what client-go ≥ 1.32 and kubectl 1.35
 * send for built-in kinds, e.g. `kubectl create configmap`). A real apiserver decodes any built-in kind; the
 * simulator decodes the kinds whose schema it carries (ConfigMap, k8s.io/api core/v1 generated.proto:
 * metadata = 1, data = 2, binaryData = 3, immutable = 4) and answers 415 for the others.
 */

import {
  decodeEnvelope,
  fieldString,
  readFields,
  readMapEntry,
  WIRE_LEN,
  WIRE_VARINT,
} from '../src/kube/protobuf.ts';
import type { KubeObject } from './catalog/types.ts';

const td = new TextDecoder();

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * ObjectMeta (meta/v1 generated.proto), the fields a client sets on writes. Go's generated marshaller
 * writes empty strings too; like the apiserver's JSON (omitempty), they are left out.
 */
function objectMeta(buf: Uint8Array, start: number, end: number): KubeObject['metadata'] {
  const md: Record<string, any> = {};
  for (const f of readFields(buf, start, end)) {
    if (f.wire !== WIRE_LEN && f.num !== 7) continue;
    switch (f.num) {
      case 1:
        if (f.valueEnd > f.valueStart) md.name = fieldString(buf, f);
        break;
      case 2:
        if (f.valueEnd > f.valueStart) md.generateName = fieldString(buf, f);
        break;
      case 3:
        if (f.valueEnd > f.valueStart) md.namespace = fieldString(buf, f);
        break;
      case 5:
        if (f.valueEnd > f.valueStart) md.uid = fieldString(buf, f);
        break;
      case 6:
        if (f.valueEnd > f.valueStart) md.resourceVersion = fieldString(buf, f);
        break;
      case 11:
      case 12: {
        const { key, value } = readMapEntry(buf, f);
        const k = f.num === 11 ? 'labels' : 'annotations';
        md[k] = { ...(md[k] ?? {}), [key]: td.decode(value) };
        break;
      }
      case 13: {
        const ref: Record<string, unknown> = {};
        for (const r of readFields(buf, f.valueStart, f.valueEnd)) {
          if (r.num === 1) ref.kind = fieldString(buf, r);
          else if (r.num === 3) ref.name = fieldString(buf, r);
          else if (r.num === 4) ref.uid = fieldString(buf, r);
          else if (r.num === 5) ref.apiVersion = fieldString(buf, r);
          else if (r.num === 6 && r.wire === WIRE_VARINT) ref.controller = r.varint === 1;
          else if (r.num === 7 && r.wire === WIRE_VARINT) ref.blockOwnerDeletion = r.varint === 1;
        }
        md.ownerReferences = [...(md.ownerReferences ?? []), ref];
        break;
      }
      case 14:
        md.finalizers = [...(md.finalizers ?? []), fieldString(buf, f)];
        break;
    }
  }
  return md;
}

function configMap(raw: Uint8Array): KubeObject {
  const obj: KubeObject & Record<string, any> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} };
  for (const f of readFields(raw)) {
    if (f.num === 1 && f.wire === WIRE_LEN) obj.metadata = objectMeta(raw, f.valueStart, f.valueEnd);
    else if ((f.num === 2 || f.num === 3) && f.wire === WIRE_LEN) {
      const { key, value } = readMapEntry(raw, f);
      const k = f.num === 2 ? 'data' : 'binaryData';
      obj[k] = { ...(obj[k] ?? {}), [key]: f.num === 2 ? td.decode(value) : base64(value) };
    } else if (f.num === 4 && f.wire === WIRE_VARINT) obj.immutable = f.varint === 1;
  }
  return obj;
}

const DECODERS: Record<string, (raw: Uint8Array) => KubeObject> = {
  'v1/ConfigMap': configMap,
};

/** The object of a protobuf body, undefined for a kind the simulator cannot decode; throws ProtobufError. */
export function decodeProtobufObject(body: Uint8Array): KubeObject | undefined {
  const env = decodeEnvelope(body);
  const decode = DECODERS[`${env.apiVersion}/${env.kind}`];
  return decode?.(env.raw);
}

import { describe, expect, it } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  lenField,
  mapEntry,
  ProtobufError,
  readObjectMeta,
  varintField,
} from '../kube/protobuf.ts';
import { concatBytes as concat } from '../util/bytes.ts';
import { editProtobufObjectMeta } from './protobuf.ts';

describe('editProtobufObjectMeta', () => {
  const meta = concat([
    lenField(1, 'cm.clusterspace.m2'),
    lenField(3, 'ns'),
    lenField(6, '17'),
    mapEntry(11, 'keep', 'me'),
    mapEntry(11, 'drop', 'me'),
    lenField(
      13,
      concat([lenField(1, 'Deployment'), lenField(3, 'owner.clusterspace.m2'), lenField(4, 'uid')]),
    ),
  ]);
  const unknownTail = concat([varintField(99, 5), lenField(2, 'data-bytes')]);
  const body = encodeEnvelope('v1', 'ConfigMap', concat([lenField(1, meta), unknownTail]));

  it('edits only what it is asked to and copies every other byte', () => {
    const out = editProtobufObjectMeta(body, {
      name: (v) => v.replace('.clusterspace.m2', ''),
      resourceVersion: () => '5',
      label: (k, v) => (k === 'drop' ? undefined : v),
      ownerName: (v) => v.replace('.clusterspace.m2', ''),
    });
    const env = decodeEnvelope(out);
    expect(env.kind).toBe('ConfigMap');
    expect(readObjectMeta(env.raw)).toEqual({
      name: 'cm',
      namespace: 'ns',
      resourceVersion: '5',
      labels: { keep: 'me' },
      annotations: {},
    });
    expect(
      Buffer.from(env.raw.subarray(env.raw.length - unknownTail.length)).equals(Buffer.from(unknownTail)),
    ).toBe(true);
    // no edit at all: the same bytes
    expect(Buffer.from(editProtobufObjectMeta(body, {})).equals(Buffer.from(body))).toBe(true);
  });

  it('refuses bodies without the k8s magic', () => {
    expect(() => editProtobufObjectMeta(new TextEncoder().encode('{"kind":"x"}'), {})).toThrow(ProtobufError);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  concat,
  decodeEnvelope,
  editProtobufObjectMeta,
  encodeEnvelope,
  lenField,
  mapEntry,
  ProtobufError,
  readFields,
  readObjectMeta,
  varint,
  varintField,
} from './protobuf.ts';

describe('protobuf wire format', () => {
  it('varints round-trip (up to 2^53)', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        const f = readFields(varintField(1, n));
        expect(f).toHaveLength(1);
        expect(f[0]!.varint).toBe(n);
      }),
    );
    expect([...varint(300)]).toEqual([0xac, 0x02]);
  });

  it('reads fields of every wire type and refuses truncated input', () => {
    const msg = concat([
      varintField(1, 150),
      new Uint8Array([(2 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]),
      lenField(3, 'abc'),
      new Uint8Array([(4 << 3) | 5, 1, 2, 3, 4]),
    ]);
    expect(readFields(msg).map((f) => [f.num, f.wire])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 5],
    ]);
    expect(() => readFields(msg.subarray(0, msg.length - 1))).toThrow(ProtobufError);
    expect(() => readFields(new Uint8Array([0x0b]))).toThrow(ProtobufError); // wire type 3 (groups)
  });
});

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

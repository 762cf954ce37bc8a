import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes as concat } from '../util/bytes.ts';
import {
  decodeEnvelope,
  encodeEnvelope,
  isProtobufBody,
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

describe('envelope', () => {
  it('round-trips apiVersion, kind and raw, behind the k8s magic', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.uint8Array({ maxLength: 200 }), (apiVersion, kind, raw) => {
        const body = encodeEnvelope(apiVersion, kind, raw);
        expect(isProtobufBody(body)).toBe(true);
        const env = decodeEnvelope(body);
        expect(env.apiVersion).toBe(apiVersion);
        expect(env.kind).toBe(kind);
        expect([...env.raw]).toEqual([...raw]);
      }),
    );
  });

  it('refuses what lacks the magic or is cut short', () => {
    expect(() => decodeEnvelope(new TextEncoder().encode('{"kind":"Pod"}'))).toThrow(ProtobufError);
    const body = encodeEnvelope('v1', 'ConfigMap', lenField(1, lenField(1, 'cm')));
    expect(() => decodeEnvelope(body.subarray(0, body.length - 1))).toThrow(ProtobufError);
  });

  it('reads the ObjectMeta fields the fleet uses', () => {
    const meta = concat([
      lenField(1, 'cm'),
      lenField(2, 'gen-'),
      lenField(3, 'ns'),
      lenField(6, '42'),
      mapEntry(11, 'app', 'web'),
      mapEntry(12, 'note', 'x'),
    ]);
    expect(readObjectMeta(concat([lenField(1, meta), lenField(2, 'data')]))).toEqual({
      name: 'cm',
      generateName: 'gen-',
      namespace: 'ns',
      resourceVersion: '42',
      labels: { app: 'web' },
      annotations: { note: 'x' },
    });
  });
});

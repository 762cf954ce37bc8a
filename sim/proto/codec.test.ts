import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../catalog/index.ts';
import { decodeMessage, encodeMessage, message, OMIT_ZERO, WireError } from './codec.ts';
import {
  apiVersionOfPackage,
  decodeObject,
  decodeWatchFrames,
  encodeObject,
  encodeWatchFrame,
} from './envelope.ts';
import { formatDuration, formatMicroTime, formatTime, parseDuration, parseTime } from './scalars.ts';
import SCHEMA from './schema.json' with { type: 'json' };

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

type FieldDef = [number, string, string, string, string?];
const defs = (SCHEMA as unknown as { messages: Record<string, FieldDef[]> }).messages;

describe('schema.json', () => {
  const fixtures = join(root, '../shared/fixtures/kube-proto');
  it.skipIf(!existsSync(fixtures))('is what gen.mjs derives from ../shared/fixtures/kube-proto', async () => {
    const gen = (await import(join(here, 'gen.mjs'))) as {
      generate: (dir: string, root: string) => Promise<{ schema: unknown }>;
      render: (s: unknown) => string;
    };
    const { schema } = await gen.generate(fixtures, root);
    expect(gen.render(schema)).toBe(readFileSync(join(here, 'schema.json'), 'utf8'));
  });
  if (!existsSync(fixtures)) {
    it('skips the regeneration check: ../shared/fixtures/kube-proto is not beside the repository', () => {});
  }

  it('carries the JSON names go-to-protobuf does not (inline structs, renamed Go fields)', () => {
    const field = (type: string, name: string) => defs[type]?.find((f) => f[1] === name);
    expect(field('k8s.io.api.core.v1.Volume', 'volumeSource')?.[3]).toBe('i');
    expect(field('k8s.io.api.core.v1.Probe', 'handler')?.[3]).toBe('i');
    expect(field('k8s.io.api.networking.v1beta1.IngressRule', 'ingressRuleValue')?.[3]).toBe('i');
    expect(field('k8s.io.api.authentication.v1.BoundObjectReference', 'uID')?.[4]).toBe('uid');
    expect(field('k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration', 'Webhooks')?.[4]).toBe(
      'webhooks',
    );
  });
});

describe('scalars as apimachinery writes them', () => {
  it('formats and parses Go durations', () => {
    expect(formatDuration(3_600_000_000_000n)).toBe('1h0m0s');
    expect(formatDuration(1_500_000_000n)).toBe('1.5s');
    expect(formatDuration(300_000_000n)).toBe('300ms');
    expect(formatDuration(1500n)).toBe('1.5µs');
    expect(formatDuration(0n)).toBe('0s');
    expect(formatDuration(-90_000_000_000n)).toBe('-1m30s');
    expect(parseDuration('1h30m')).toBe(5_400_000_000_000n);
    expect(parseDuration('2.5s')).toBe(2_500_000_000n);
    expect(() => parseDuration('5 minutes')).toThrow(/invalid duration/);
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }),
        (ns) => parseDuration(formatDuration(ns)) === ns,
      ),
    );
  });

  it('formats Time in whole seconds and MicroTime with six digits, both UTC', () => {
    expect(formatTime(1704164645)).toBe('2024-01-02T03:04:05Z');
    expect(formatMicroTime(1704164645, 123456789)).toBe('2024-01-02T03:04:05.123456Z');
    expect(parseTime('2024-01-02T05:04:05+02:00')).toEqual([1704164645, 0]);
    expect(() => parseTime('yesterday')).toThrow(/cannot parse/);
  });
});

describe('known-good encodings, byte for byte', () => {
  // Built by hand from core/v1 and runtime generated.proto: runtime.Unknown{typeMeta=1{apiVersion=1,
  // kind=2}, raw=2, contentEncoding=3, contentType=4}; ConfigMap{metadata=1, data=2 (map entry key=1,
  // value=2)}; ObjectMeta{name=1, namespace=3}; Secret{metadata=1, data=2 (bytes values), type=3}.
  // Tags are (number << 3 | wire type 2): 0a 12 1a 22; every length is one varint byte here.
  const CONFIGMAP = `6b387300
    0a0f 0a02 7631 1209 436f6e6669674d6170
    1217 0a0d 0a02 636d 1a07 64656661756c74  1206 0a01 61 1201 62
    1a00 2200`;
  const SECRET = `6b387300
    0a0c 0a02 7631 1206 536563726574
    1221 0a0d 0a02 7331 1a07 64656661756c74  1208 0a01 6b 1203 000102  1a06 4f70617175 65
    1a00 2200`;

  it('encodes a ConfigMap and a Secret exactly so, and decodes them back', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default' },
      data: { a: 'b' },
    };
    expect(hex(encodeObject(cm))).toBe(hex(unhex(CONFIGMAP)));
    expect(decodeObject(unhex(CONFIGMAP))).toEqual(cm);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1', namespace: 'default' },
      data: { k: 'AAEC' },
      type: 'Opaque',
    };
    expect(hex(encodeObject(secret))).toBe(hex(unhex(SECRET)));
    expect(decodeObject(unhex(SECRET))).toEqual(secret);
  });

  it("reads a body as Go's marshaller writes it: every non-pointer field, empty ones included, any order of maps", () => {
    // ObjectMeta with name, generateName "", namespace, selfLink "", uid "", resourceVersion "",
    // generation 0 (7, varint), creationTimestamp empty (8); labels z=1 before a=2; Secret.immutable false (5).
    const meta =
      '0a02 7331 1200 1a07 64656661756c74 2200 2a00 3200 3800 4200 5a06 0a017a 120131 5a06 0a0161 120132';
    const raw = `0a29 ${meta} 1206 0a01 6b 1201 ff 2800`;
    const env = `6b387300 0a0c 0a02 7631 1206 536563726574 1235 ${raw} 1a00 2200`;
    expect(decodeObject(unhex(env))).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1', namespace: 'default', labels: { z: '1', a: '2' } },
      data: { k: '/w==' },
      immutable: false,
    });
  });

  it('accepts packed and unpacked repeated scalars (PodSecurityContext.supplementalGroups = 4)', () => {
    const type = 'k8s.io.api.core.v1.PodSecurityContext';
    expect(decodeMessage(type, unhex('2001 2002'))).toEqual({ supplementalGroups: [1, 2] });
    expect(decodeMessage(type, unhex('2202 0102'))).toEqual({ supplementalGroups: [1, 2] });
    expect(hex(encodeMessage(type, { supplementalGroups: [1, 2] }))).toBe('20012002');
  });

  it('encodes IntOrString, Quantity, Time as Go does (all fields of the small messages)', () => {
    const t = 'k8s.io.api.apps.v1.RollingUpdateDeployment';
    expect(hex(encodeMessage(t, { maxUnavailable: 1, maxSurge: '25%' }))).toBe(
      `0a06 0800 1001 1a00 1209 0801 1000 1a03 323525`.replace(/\s/g, ''),
    );
    expect(decodeMessage(t, unhex('0a06080010011a001209080110001a03323525'))).toEqual({
      maxUnavailable: 1,
      maxSurge: '25%',
    });
    const status = 'k8s.io.api.core.v1.ResourceRequirements';
    expect(decodeMessage(status, encodeMessage(status, { limits: { cpu: '500m', memory: '1Gi' } }))).toEqual({
      limits: { cpu: '500m', memory: '1Gi' },
    });
  });

  it('rejects what is not protobuf with the serializer own words', () => {
    expect(() => decodeObject(new Uint8Array())).toThrow('empty data');
    expect(() => decodeObject(new TextEncoder().encode('{"kind":"Secret"}'))).toThrow(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
    expect(() => decodeObject(unhex('6b387300'))).toThrow('empty body');
    expect(() => decodeObject(unhex('6b387300 0aff'))).toThrow(WireError);
  });
});

// ------------------------------------------------------------------------------------------ round trips

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const int64 = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
const text = fc.string({ minLength: 1, maxLength: 8 });
const b64 = (min: number) =>
  fc.uint8Array({ minLength: min, maxLength: 8 }).map((b) => Buffer.from(b).toString('base64'));
const jsonish = fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean()), { maxKeys: 3 });

function special(type: string): fc.Arbitrary<unknown> | undefined {
  switch (type) {
    case `${META}Time`:
      return fc.integer({ min: 0, max: 4_102_444_800 }).map(formatTime);
    case `${META}MicroTime`:
      return fc
        .tuple(fc.integer({ min: 0, max: 4_102_444_800 }), fc.integer({ min: 0, max: 999_999 }))
        .map(([s, us]) => formatMicroTime(s, us * 1000));
    case `${META}Duration`:
      return fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }).map(formatDuration);
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
    case 'k8s.io.apimachinery.pkg.api.resource.QuantityValue':
      return fc.constantFrom('0', '1', '100m', '1Gi', '0.5', '2k');
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return fc.oneof(int32, fc.string({ maxLength: 6 }));
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `${META}FieldsV1`:
      return jsonish;
  }
  return undefined;
}

const arbs = new Map<string, fc.Arbitrary<unknown>>();

/** A random JSON value of a message, fields chosen at random, message fields only down to `depth`. */
function arbitrary(type: string, depth: number): fc.Arbitrary<unknown> {
  const key = `${type}@${depth}`;
  const cached = arbs.get(key);
  if (cached) return cached;
  const sp = special(type);
  if (sp) return sp;
  const m = message(type)!;
  const short = type.slice(type.lastIndexOf('.') + 1);
  const own: Record<string, fc.Arbitrary<unknown>> = {};
  const inlined: fc.Arbitrary<unknown>[] = [];
  for (const [, name, ftype, flags, json] of m.fields) {
    const isMessage = !['string', 'bytes', 'bool', 'int32', 'int64'].includes(ftype);
    if (isMessage && depth <= 0) continue;
    if (flags.includes('i')) {
      inlined.push(arbitrary(ftype, depth - 1));
      continue;
    }
    const elem = (inList: boolean): fc.Arbitrary<unknown> => {
      if (isMessage) return arbitrary(ftype, depth - 1);
      const omit = OMIT_ZERO.has(`${short}.${json ?? name}`);
      switch (ftype) {
        case 'string':
          return inList ? fc.string({ maxLength: 8 }) : text;
        case 'bytes':
          return b64(inList ? 0 : 1);
        case 'bool':
          return omit ? fc.constant(true) : fc.boolean();
        case 'int32':
          return omit ? int32.filter((n) => n !== 0) : int32;
        default:
          return omit ? int64.filter((n) => n !== 0) : int64;
      }
    };
    own[json ?? name] = flags.includes('m')
      ? fc.dictionary(fc.string({ maxLength: 6 }), elem(true), { minKeys: 1, maxKeys: 2 })
      : flags.includes('r')
        ? fc.array(elem(true), { minLength: 1, maxLength: 2 })
        : elem(false);
  }
  const wrapper = m.fields.length === 1 && m.fields[0]![1] === 'items' && !type.endsWith('List');
  const arb = wrapper
    ? fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 })
    : fc
        .tuple(fc.record(own, { requiredKeys: [] }), ...inlined)
        .map(([o, ...subs]) => Object.assign({}, ...subs, o as object));
  arbs.set(key, arb);
  return arb;
}

const KINDS = Object.entries(defs)
  .filter(([t, f]) => t.startsWith('k8s.io.api.') && f[0]?.[1] === 'metadata')
  .map(([t]) => t);

describe('every built-in kind survives JSON → protobuf → JSON', () => {
  it(`covers ${KINDS.length} kinds and lists of every k8s.io/api group version`, () => {
    expect(KINDS.length).toBeGreaterThan(250);
    expect(KINDS).toContain('k8s.io.api.core.v1.Pod');
    expect(KINDS).toContain('k8s.io.api.authorization.v1.SelfSubjectAccessReview');
  });

  for (const type of KINDS) {
    const pkg = type.slice(0, type.lastIndexOf('.'));
    const kind = type.slice(pkg.length + 1);
    it(kind + ' ' + pkg.slice('k8s.io.api.'.length), () => {
      const apiVersion = apiVersionOfPackage(pkg)!;
      fc.assert(
        fc.property(arbitrary(type, 4), (body) => {
          const obj = { apiVersion, kind, ...(body as object) };
          expect(decodeObject(encodeObject(obj))).toEqual(obj);
        }),
        { numRuns: 8 },
      );
    });
  }
});

/**
 * What a protobuf trip cannot carry, by design, walked along the schema: fields the message does not have,
 * nulls, empty singular strings and empty lists read back as absent (map entries keep their "" values).
 */
function normalize(type: string, x: unknown): unknown {
  const m = message(type);
  if (!m || x === null || typeof x !== 'object' || Array.isArray(x)) return x;
  if (m.fields.length === 1 && m.fields[0]![1] === 'items' && !type.endsWith('List')) return x;
  const src = x as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [, name, ftype, flags, json] of m.fields) {
    if (flags.includes('i')) {
      Object.assign(out, normalize(ftype, src));
      continue;
    }
    const k = json ?? name;
    const v = src[k];
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    if (flags.includes('m')) {
      out[k] = Object.fromEntries(Object.entries(v as object).map(([mk, mv]) => [mk, normalize(ftype, mv)]));
    } else if (flags.includes('r')) out[k] = (v as unknown[]).map((e) => normalize(ftype, e));
    else out[k] = normalize(ftype, v);
  }
  return out;
}

describe("the simulator's sample objects survive JSON → protobuf → JSON", () => {
  const catalog = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.35.0' });
  const samples = catalog.sampleObjects('member1');
  it(`all ${samples.length} of them, every kind`, () => {
    let n = 0;
    for (const s of samples) {
      const obj = s.object as Record<string, unknown>;
      const pkg = `k8s.io.api.${s.group === '' ? 'core' : s.group.replace(/\..*$/, '')}.${s.version}`;
      const want = {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        ...(normalize(`${pkg}.${obj.kind}`, obj) as object),
      };
      expect(decodeObject(encodeObject(obj)), `${s.resource} ${s.object.metadata.name}`).toEqual(want);
      n++;
    }
    expect(n).toBeGreaterThan(10);
  });
});

describe('watch frames', () => {
  it('are a 4-byte big-endian length and a WatchEvent whose object carries its own envelope', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default' },
      data: { a: 'b' },
    };
    const frame = encodeWatchFrame('ADDED', cm);
    const len = new DataView(frame.buffer).getUint32(0);
    expect(len).toBe(frame.length - 4);
    // WatchEvent{type=1 "ADDED", object=2 RawExtension{raw=1 <k8s\0 ConfigMap>}}
    expect(hex(frame.subarray(4, 15))).toBe('0a05414444454412340a32');
    expect(hex(frame.subarray(15))).toBe(hex(encodeObject(cm)));
    const two = new Uint8Array([...frame, ...encodeWatchFrame('DELETED', cm)]);
    expect(decodeWatchFrames(two)).toEqual([
      { type: 'ADDED', object: cm },
      { type: 'DELETED', object: cm },
    ]);
  });

  it('encode a Status (ERROR events, error answers) as meta/v1 Status', () => {
    const st = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old',
      reason: 'Expired',
      code: 410,
    };
    expect(decodeObject(encodeObject(st))).toEqual(st);
  });
});

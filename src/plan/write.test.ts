import { describe, expect, it } from 'vitest';
import {
  decodeEnvelope,
  encodeEnvelope,
  lenField,
  META_NAME,
  META_NAMESPACE,
  readObjectMeta,
} from '../kube/protobuf.ts';
import { CLUSTER_LABEL } from '../kube/selectors.ts';
import {
  bodyForCluster,
  encodeBody,
  namesInBody,
  namespaceForCluster,
  parseObjectBody,
  parsePatchBody,
} from './body.ts';
import { MATCHES_NOTHING } from './targets.ts';
import { createTarget, deleteCollectionTarget, selectorsForCluster } from './write.ts';

const targets = ['karmada', 'east', 'west'].map((cluster) => ({ cluster }));
const info = (clusterspace?: string) => ({ resource: 'configmaps', apiGroup: '', clusterspace });
const names = (name: string, generateName = '') => ({ name, generateName });

describe('createTarget', () => {
  it('goes to the cluster the fleet name names', () => {
    expect(createTarget(info(), names('cm.clusterspace.west'), targets, undefined)).toBe(targets[2]);
    expect(createTarget(info(), names('', 'cm-.clusterspace.east'), targets, undefined)).toBe(targets[1]);
  });

  it('goes to the clusterspace, or the plain-name cluster, for a plain name', () => {
    expect(createTarget(info('east'), names('cm'), [targets[1]!], 'east')).toBe(targets[1]);
    expect(createTarget(info(), names('cm'), targets, 'karmada')).toBe(targets[0]);
  });

  it('refuses (400) a plain name with nowhere to go, saying how to name the cluster', () => {
    const s = createTarget(info(), names('', 'cm-'), targets, undefined);
    expect('code' in s && s.code).toBe(400);
    expect('code' in s && s.message).toContain('metadata.generateName to "cm-.clusterspace.<cluster>"');
  });

  it('goes to the cluster a fleet-named metadata.namespace names; a name naming another is a 400', () => {
    const byNs = { name: 'cm', generateName: '', namespace: 'shop.clusterspace.west' };
    expect(createTarget(info(), byNs, targets, 'karmada')).toBe(targets[2]);
    const both = { ...byNs, name: 'cm.clusterspace.east' };
    const s = createTarget(info(), both, targets, 'karmada');
    expect('code' in s && [s.code, s.message]).toEqual([
      400,
      'the name "cm.clusterspace.east" names cluster "east", which contradicts metadata.namespace "shop.clusterspace.west"',
    ]);
    const against = createTarget(info('east'), byNs, [targets[1]!], 'east');
    expect('code' in against && against.code).toBe(400);
  });

  it('refuses (400) a name naming a cluster outside the fleet or against the clusterspace', () => {
    for (const [cs, ts, name] of [
      [undefined, targets, 'cm.clusterspace.north'],
      ['east', [targets[1]!], 'cm.clusterspace.west'],
    ] as const) {
      const s = createTarget(info(cs), names(name), ts, undefined);
      expect('code' in s && s.code).toBe(400);
    }
  });
});

describe('deleteCollectionTarget', () => {
  it('is the one cluster of a one-cluster clusterspace, and a 405 across the fleet', () => {
    expect(deleteCollectionTarget(info('west'), [targets[2]!])).toBe(targets[2]);
    const s = deleteCollectionTarget(info(), targets);
    expect('code' in s && [s.code, s.reason]).toEqual([405, 'MethodNotAllowed']);
    const all = deleteCollectionTarget(info('all'), [targets[0]!]);
    expect('code' in all && all.code).toBe(405);
  });
});

describe('selectorsForCluster', () => {
  const sel = (q: string) => {
    const r = selectorsForCluster(new URLSearchParams(q), 'east');
    if ('code' in r) throw new Error(r.message);
    return { label: r.get('labelSelector'), field: r.get('fieldSelector') };
  };

  it('drops the cluster label when it allows the cluster and rewrites fleet names', () => {
    expect(
      sel(
        `labelSelector=${CLUSTER_LABEL}%3Deast,app%3Dweb&fieldSelector=metadata.name%3Dx.clusterspace.east`,
      ),
    ).toEqual({
      label: 'app=web',
      field: 'metadata.name=x',
    });
    expect(sel(`labelSelector=${CLUSTER_LABEL}%3Deast`)).toEqual({ label: null, field: null });
  });

  it('deletes nothing when the selectors leave the cluster out', () => {
    expect(sel(`labelSelector=${CLUSTER_LABEL}%3Dwest`).label).toBe(MATCHES_NOTHING);
    expect(sel('fieldSelector=metadata.name%3Dx.clusterspace.west').label).toBe(MATCHES_NOTHING);
  });

  it('answers a bad selector with 400', () => {
    const r = selectorsForCluster(new URLSearchParams('labelSelector=a%20in%20('), 'east');
    expect('code' in r && r.code).toBe(400);
  });
});

const bytes = (s: string) => new TextEncoder().encode(s);

/** A protobuf ConfigMap with only metadata.name set (field 1 of the object is its ObjectMeta). */
function encodeProtobufObjectForTest(name: string): Uint8Array {
  return encodeEnvelope('v1', 'ConfigMap', lenField(1, lenField(META_NAME, name)));
}

describe('write bodies', () => {
  it('parses JSON and YAML objects, and refuses what does not parse (400)', () => {
    expect(parseObjectBody(bytes('{"a":1}'), 'application/json')).toEqual({
      kind: 'json',
      value: { a: 1 },
      contentType: 'application/json',
    });
    expect(parseObjectBody(bytes('a: 1\n'), 'application/yaml; charset=utf-8')).toMatchObject({
      value: { a: 1 },
    });
    expect(parseObjectBody(new Uint8Array(0), 'application/json')).toEqual({ kind: 'empty' });
    for (const [b, t] of [
      ['{', 'application/json'],
      ['a: [', 'application/yaml'],
    ])
      expect((parseObjectBody(bytes(b!), t!) as { code?: number }).code).toBe(400);
    expect(parseObjectBody(bytes('x'), 'text/csv')).toMatchObject({
      kind: 'opaque',
      contentType: 'text/csv',
    });
  });

  it('parses the patch types it rewrites and passes others byte for byte', () => {
    expect(parsePatchBody(bytes('[]'), 'application/json-patch+json')).toMatchObject({
      kind: 'json',
      value: [],
    });
    expect((parsePatchBody(bytes('{'), 'application/merge-patch+json') as { code?: number }).code).toBe(400);
    expect(parsePatchBody(bytes('\x00'), 'application/apply-patch+cbor')).toMatchObject({ kind: 'opaque' });
  });

  it('reads the names of a JSON or protobuf object', () => {
    const json = parseObjectBody(bytes('{"metadata":{"generateName":"cm-.clusterspace.east"}}'), null);
    expect(namesInBody(json as never)).toEqual({
      name: '',
      generateName: 'cm-.clusterspace.east',
      namespace: '',
    });
    const pb = parseObjectBody(encodeProtobufObjectForTest('cm.clusterspace.west'), null);
    expect(pb).toMatchObject({ kind: 'protobuf' });
    expect(namesInBody(pb as never)).toEqual({
      name: 'cm.clusterspace.west',
      generateName: '',
      namespace: '',
    });
    const broken = namesInBody({ kind: 'protobuf', bytes: new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0xff]) });
    expect('code' in broken && broken.code).toBe(400);
  });

  it('rewrites an object for its cluster and encodes it with its type', () => {
    const body = parseObjectBody(bytes('{"metadata":{"name":"cm.clusterspace.west"}}'), null);
    const out = bodyForCluster('create', body as never, {
      cluster: 'west',
      membership: ['east', 'karmada', 'west'],
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const headers = new Headers({ 'Content-Type': 'application/yaml' });
    const sent = encodeBody(out.value, headers);
    expect(headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(new TextDecoder().decode(sent))).toEqual({ metadata: { name: 'cm' } });
    const empty = new Headers({ 'Content-Type': 'application/json' });
    expect(encodeBody({ kind: 'empty' }, empty)).toBeUndefined();
    expect(empty.has('content-type')).toBe(false);
  });

  it('refuses a body that names another cluster than the one it goes to', () => {
    const body = parseObjectBody(bytes('{"metadata":{"name":"cm.clusterspace.west"}}'), null);
    const out = bodyForCluster('create', body as never, {
      cluster: 'east',
      membership: ['east', 'karmada', 'west'],
    });
    expect(out.ok).toBe(false);
  });
});

describe('namespaceForCluster', () => {
  const json = (ns: string, contentType = 'application/json') =>
    ({ kind: 'json', value: { metadata: { name: 'cm', namespace: ns } }, contentType }) as const;

  it("makes a fleet-named namespace of the write's cluster plain, in JSON and protobuf bodies", () => {
    const out = namespaceForCluster('create', json('shop.clusterspace.west'), 'west', 'shop');
    expect(out.ok && (out.value as any).value.metadata).toEqual({ name: 'cm', namespace: 'shop' });
    const pb = encodeEnvelope(
      'v1',
      'ConfigMap',
      lenField(
        1,
        new Uint8Array([...lenField(META_NAME, 'cm'), ...lenField(META_NAMESPACE, 'shop.clusterspace.west')]),
      ),
    );
    const r = namespaceForCluster('update', { kind: 'protobuf', bytes: pb }, 'west', 'shop');
    expect(r.ok).toBe(true);
    if (!r.ok || r.value.kind !== 'protobuf') return;
    const env = decodeEnvelope(r.value.bytes);
    expect([env.kind, readObjectMeta(env.raw).name, readObjectMeta(env.raw).namespace]).toEqual([
      'ConfigMap',
      'cm',
      'shop',
    ]);
  });

  it("refuses (400) another cluster's namespace; leaves plain ones, JSON patches and deletes alone", () => {
    const other = namespaceForCluster('create', json('shop.clusterspace.east'), 'west', 'shop');
    expect(!other.ok && other.status.code).toBe(400);
    const plain = namespaceForCluster('create', json('shop'), 'west', 'shop');
    expect(plain.ok && (plain.value as any).value.metadata.namespace).toBe('shop');
    const patch = {
      kind: 'json',
      value: [{ op: 'add', path: '/x', value: 1 }],
      contentType: 'application/json-patch+json',
    } as const;
    expect(namespaceForCluster('patch', patch, 'west', 'shop')).toEqual({ ok: true, value: patch });
    const del = json('shop.clusterspace.east');
    expect(namespaceForCluster('delete', del, 'west', 'shop').ok).toBe(true);
  });
});

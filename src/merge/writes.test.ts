import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, lenField, mapEntry, readObjectMeta } from '../kube/protobuf.ts';
import { concatBytes as concat } from '../util/bytes.ts';
import { encodeComposite } from './rv/index.ts';
import {
  deleteOptionsForCluster,
  jsonPatchForCluster,
  LAST_APPLIED,
  mergePatchForCluster,
  objectForCluster,
  protobufObjectForCluster,
  type WriteContext,
} from './writes.ts';

const M = ['karmada', 'member1', 'member2'];
const MARK = 'fleet.karmada.io/cluster';
const composite = (rv: string) => encodeComposite(M, new Map([['member2', rv]]));
const ctx: WriteContext = { cluster: 'member2', membership: M };
const urlCtx: WriteContext = { ...ctx, url: { fleet: 'web.clusterspace.member2', plain: 'web' } };

function fleetObject(extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web.clusterspace.member2',
      namespace: 'default',
      resourceVersion: composite('1234'),
      labels: { app: 'web', [MARK]: 'member2' },
      annotations: { [MARK]: 'member2' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'owner.clusterspace.member2', uid: 'u' }],
      ...extra,
    },
    spec: { replicas: 1 },
  };
}

describe('objectForCluster', () => {
  it('writes plain names, no markers and the cluster’s own resourceVersion', () => {
    const r = objectForCluster(fleetObject(), urlCtx);
    expect(r.ok).toBe(true);
    const o = (r as { value: any }).value;
    expect(o.metadata.name).toBe('web');
    expect(o.metadata.resourceVersion).toBe('1234');
    expect(o.metadata.labels).toEqual({ app: 'web' });
    expect(o.metadata.annotations).toBeUndefined();
    expect(o.metadata.ownerReferences[0].name).toBe('owner');
  });

  it('accepts the plain spelling of the URL name and refuses another name, like checkName', () => {
    expect(objectForCluster(fleetObject({ name: 'web' }), urlCtx).ok).toBe(true);
    const r = objectForCluster(fleetObject({ name: 'api.clusterspace.member2' }), urlCtx);
    expect(r).toMatchObject({
      ok: false,
      status: {
        code: 400,
        reason: 'BadRequest',
        message:
          'the name of the object (api.clusterspace.member2) does not match the name on the URL (web.clusterspace.member2)',
      },
    });
  });

  it('refuses a name that names another cluster', () => {
    const r = objectForCluster(fleetObject({ name: 'web.clusterspace.member1' }), ctx);
    expect(r).toMatchObject({ ok: false, status: { code: 400 } });
    expect((r as any).status.message).toContain('names cluster "member1"');
  });

  it('refuses a resourceVersion that is not a composite of this fleet (400), maps stale ones (cluster decides)', () => {
    expect(objectForCluster(fleetObject({ resourceVersion: 'garbage' }), ctx)).toMatchObject({
      ok: false,
      status: { code: 400 },
    });
    const other = encodeComposite(['a', 'b'], new Map([['a', '5']]));
    expect(objectForCluster(fleetObject({ resourceVersion: other }), ctx)).toMatchObject({ ok: false });
    const stale = objectForCluster(fleetObject({ resourceVersion: composite('1') }), ctx);
    expect((stale as any).value.metadata.resourceVersion).toBe('1');
  });

  it('rewrites the last-applied-configuration inside the annotation', () => {
    const applied = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm.clusterspace.member2', labels: { [MARK]: 'member2', a: 'b' } },
    });
    const o = fleetObject({ annotations: { [LAST_APPLIED]: `${applied}\n`, [MARK]: 'member2' } });
    const r = objectForCluster(o, ctx) as any;
    const inner = JSON.parse(r.value.metadata.annotations[LAST_APPLIED]);
    expect(inner.metadata).toEqual({ name: 'cm', labels: { a: 'b' } });
    expect(r.value.metadata.annotations[LAST_APPLIED].endsWith('\n')).toBe(true);
  });

  it('generateName loses the suffix; a Binding’s node and an Eviction’s preconditions are mapped', () => {
    const g = objectForCluster({ metadata: { generateName: 'web-.clusterspace.member2' } }, ctx) as any;
    expect(g.value.metadata.generateName).toBe('web-');
    const b = objectForCluster(
      {
        kind: 'Binding',
        metadata: { name: 'p.clusterspace.member2' },
        target: { kind: 'Node', name: 'n.clusterspace.member2' },
      },
      ctx,
    ) as any;
    expect(b.value.target.name).toBe('n');
    const e = objectForCluster(
      {
        kind: 'Eviction',
        metadata: { name: 'p' },
        deleteOptions: { preconditions: { resourceVersion: composite('77') } },
      },
      ctx,
    ) as any;
    expect(e.value.deleteOptions.preconditions.resourceVersion).toBe('77');
  });

  it('never leaves a marker, whatever the labels and annotations (property)', () => {
    const key = fc.oneof(fc.constant(MARK), fc.stringMatching(/^[a-z]{1,8}(\/[a-z]{1,8})?$/));
    const map = fc.dictionary(key, fc.string({ maxLength: 5 }), { maxKeys: 4 });
    fc.assert(
      fc.property(map, map, (labels, annotations) => {
        const r = objectForCluster(
          {
            metadata: {
              name: 'x.clusterspace.member2',
              labels: { ...labels },
              annotations: { ...annotations },
            },
          },
          ctx,
        ) as any;
        expect(r.ok).toBe(true);
        expect(r.value.metadata.labels?.[MARK]).toBeUndefined();
        expect(r.value.metadata.annotations?.[MARK]).toBeUndefined();
        for (const [k, v] of Object.entries(labels))
          if (k !== MARK) expect(r.value.metadata.labels[k]).toBe(v);
      }),
    );
  });
});

describe('mergePatchForCluster (merge and strategic)', () => {
  it('drops marker keys (set or deleted), maps the RV and the name', () => {
    const p = {
      metadata: {
        name: 'web.clusterspace.member2',
        resourceVersion: composite('9'),
        labels: { [MARK]: 'member1', a: 'b' },
        annotations: { [MARK]: null },
      },
      spec: { replicas: 3 },
    };
    const r = mergePatchForCluster(p, urlCtx) as any;
    expect(r.value).toEqual({
      metadata: { name: 'web', resourceVersion: '9', labels: { a: 'b' } },
      spec: { replicas: 3 },
    });
  });

  it('a patch that only touches markers becomes a no-op patch', () => {
    const r = mergePatchForCluster({ metadata: { labels: { [MARK]: 'x' } } }, urlCtx) as any;
    expect(r.value).toEqual({});
  });

  it('refuses a name that is not the URL’s', () => {
    expect(mergePatchForCluster({ metadata: { name: 'other' } }, urlCtx)).toMatchObject({
      ok: false,
      status: { code: 400 },
    });
  });
});

describe('jsonPatchForCluster', () => {
  it('drops operations on markers and rewrites values', () => {
    const ops = [
      { op: 'add', path: '/metadata/labels/fleet.karmada.io~1cluster', value: 'member1' },
      { op: 'remove', path: '/metadata/annotations/fleet.karmada.io~1cluster' },
      { op: 'test', path: '/metadata/resourceVersion', value: composite('5') },
      { op: 'replace', path: '/metadata/labels', value: { [MARK]: 'x', a: '1' } },
      { op: 'replace', path: '/spec/replicas', value: 2 },
      { op: 'copy', from: '/metadata/labels/fleet.karmada.io~1cluster', path: '/metadata/labels/x' },
      { op: 'replace', path: '/metadata/ownerReferences/0/name', value: 'o.clusterspace.member2' },
    ];
    const r = jsonPatchForCluster(ops, urlCtx) as any;
    expect(r.value).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'replace', path: '/metadata/labels', value: { a: '1' } },
      { op: 'replace', path: '/spec/replicas', value: 2 },
      { op: 'replace', path: '/metadata/ownerReferences/0/name', value: 'o' },
    ]);
  });

  it('refuses what is not a JSON patch', () => {
    expect(jsonPatchForCluster({ op: 'add' }, ctx)).toMatchObject({ ok: false, status: { code: 400 } });
    expect(jsonPatchForCluster([{ op: 'add' }], ctx)).toMatchObject({ ok: false, status: { code: 400 } });
    expect(
      jsonPatchForCluster(
        [{ op: 'replace', path: '/metadata/name', value: 'x.clusterspace.member1' }],
        urlCtx,
      ),
    ).toMatchObject({
      ok: false,
    });
  });
});

describe('deleteOptionsForCluster', () => {
  it('maps the precondition RV, keeps the uid', () => {
    const r = deleteOptionsForCluster(
      { preconditions: { uid: 'u1', resourceVersion: composite('42') }, propagationPolicy: 'Background' },
      ctx,
    ) as any;
    expect(r.value).toEqual({
      preconditions: { uid: 'u1', resourceVersion: '42' },
      propagationPolicy: 'Background',
    });
  });
});

describe('protobufObjectForCluster', () => {
  const meta = concat([
    lenField(1, 'cm.clusterspace.member2'),
    lenField(3, 'default'),
    lenField(6, composite('300')),
    mapEntry(11, MARK, 'member2'),
    mapEntry(11, 'app', 'web'),
    mapEntry(12, MARK, 'member2'),
  ]);
  const configMap = concat([
    lenField(1, meta),
    mapEntry(2, 'k', 'v'),
    mapEntry(3, 'bin', new Uint8Array([0, 255])),
  ]);
  const body = encodeEnvelope('v1', 'ConfigMap', configMap);

  it('rewrites the ObjectMeta inside the envelope and copies the rest', () => {
    const r = protobufObjectForCluster(body, ctx) as any;
    expect(r.ok).toBe(true);
    const env = decodeEnvelope(r.value);
    expect(env).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(readObjectMeta(env.raw)).toEqual({
      name: 'cm',
      namespace: 'default',
      resourceVersion: '300',
      labels: { app: 'web' },
      annotations: {},
    });
    // data and binaryData are the same bytes
    const tail = concat([mapEntry(2, 'k', 'v'), mapEntry(3, 'bin', new Uint8Array([0, 255]))]);
    expect(Buffer.from(env.raw.subarray(env.raw.length - tail.length)).equals(Buffer.from(tail))).toBe(true);
  });

  it('refuses a name mismatch and bytes that are not a k8s protobuf body', () => {
    const mismatch = protobufObjectForCluster(body, {
      ...ctx,
      url: { fleet: 'x.clusterspace.member2', plain: 'x' },
    });
    expect(mismatch).toMatchObject({ ok: false, status: { code: 400 } });
    expect(protobufObjectForCluster(new Uint8Array([1, 2, 3]), ctx)).toMatchObject({
      ok: false,
      status: { code: 400 },
    });
    const truncated = body.subarray(0, body.length - 3);
    expect(protobufObjectForCluster(truncated, ctx)).toMatchObject({ ok: false, status: { code: 400 } });
  });
});

describe('bodies nested too deep', () => {
  // what kubectl create -f would send for a 5,000-deep object: parses fine, but would overflow
  // JSON.stringify when the rewritten body is serialised for the cluster
  const deep = (depth: number): unknown => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
  const refusedAs400 = (r: { ok: boolean; status?: { code: number; reason: string; message: string } }) => {
    expect(r.ok).toBe(false);
    expect(r.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(r.status?.message).toMatch(/exceeded max depth/);
  };

  it('are a 400 BadRequest from every JSON rewrite, before anything re-serialises them', () => {
    const body = { metadata: { name: 'cm' }, data: deep(5_000) };
    refusedAs400(objectForCluster(body, ctx) as never);
    refusedAs400(mergePatchForCluster({ spec: deep(5_000) }, ctx) as never);
    refusedAs400(jsonPatchForCluster([{ op: 'add', path: '/spec', value: deep(5_000) }], ctx) as never);
    refusedAs400(deleteOptionsForCluster({ preconditions: deep(5_000) }, ctx) as never);
  });

  it('are refused in last-applied-configuration too, which is parsed and re-serialised', () => {
    const inner = `{"metadata":{"name":"cm"},"data":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`;
    refusedAs400(
      objectForCluster(
        {
          metadata: {
            name: 'cm',
            annotations: { [LAST_APPLIED]: inner },
          },
        },
        ctx,
      ) as never,
    );
  });

  it('pass at depths real objects have', () => {
    const r = objectForCluster({ metadata: { name: 'cm' }, data: deep(200) as Record<string, unknown> }, ctx);
    expect(r.ok).toBe(true);
    if (r.ok) expect(() => JSON.stringify(r.value)).not.toThrow();
  });
});

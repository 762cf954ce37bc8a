import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, fieldString, lenField, readFields } from '../../kube/protobuf.ts';
import { ByteSink, concatBytes } from '../../util/bytes.ts';
import { rewriteFieldSelectorNames } from '../fieldnames.ts';
import { itemView, writeFleetItem } from '../itembytes/index.ts';
import { ListSplitter } from '../jsonsplit/index.ts';
import { mergeColumns, toFleetRow } from '../table/index.ts';
import {
  jsonPatchForCluster,
  mergePatchForCluster,
  objectForCluster,
  protobufObjectForCluster,
} from '../writes.ts';
import { toFleetObject } from './index.ts';
import { mapReferences } from './references.ts';

const fed = { federation: true };
const ctx = (cluster: string) => ({ cluster, membership: ['karmada', 'm1', 'm2'] });
const out = (o: Record<string, any>, cluster = 'm1') => toFleetObject(fed, structuredClone(o), cluster);

const pod = {
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'default' },
  spec: {
    nodeName: 'worker',
    containers: [{ name: 'c', image: 'nginx' }],
    serviceAccountName: 'sa',
    priorityClassName: 'high',
    volumes: [
      { name: 'cfg', configMap: { name: 'cfg' } },
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    ],
  },
  status: { nominatedNodeName: 'other' },
};

describe('references in answers', () => {
  it('a pod shows its node by fleet name; what its spec authors stays as written', () => {
    const p = out(pod);
    expect(p.spec.nodeName).toBe('worker.clusterspace.m1');
    expect(p.status.nominatedNodeName).toBe('other.clusterspace.m1');
    expect(p.spec.serviceAccountName).toBe('sa');
    expect(p.spec.priorityClassName).toBe('high');
    expect(p.spec.volumes).toEqual(pod.spec.volumes);
    // federation on: the control plane keeps plain names
    expect(out(pod, 'karmada').spec.nodeName).toBe('worker');
    expect(toFleetObject({ federation: false }, structuredClone(pod), 'karmada').spec.nodeName).toBe(
      'worker.clusterspace.karmada',
    );
  });

  it('list items (no kind) are recognised by their fields', () => {
    const { kind: _, ...item } = pod;
    expect(out(item).spec.nodeName).toBe('worker.clusterspace.m1');
    const pv = { metadata: { name: 'pv-1' }, spec: { claimRef: { namespace: 'ns', name: 'data' } } };
    expect(out(pv).spec.claimRef).toEqual({ namespace: 'ns', name: 'data.clusterspace.m1' });
    const pvc = { metadata: { name: 'data' }, spec: { volumeName: 'pv-1', accessModes: ['RWO'] } };
    expect(out(pvc).spec.volumeName).toBe('pv-1.clusterspace.m1');
    const ep = {
      metadata: { name: 'web' },
      subsets: [
        {
          addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'web-1' } }],
          notReadyAddresses: [{ ip: '10.0.0.2', targetRef: { kind: 'Pod', name: 'web-2' } }],
        },
      ],
    };
    const e = out(ep);
    expect(e.subsets[0].addresses[0]).toEqual({
      ip: '10.0.0.1',
      nodeName: 'n1.clusterspace.m1',
      targetRef: { kind: 'Pod', name: 'web-1.clusterspace.m1' },
    });
    expect(e.subsets[0].notReadyAddresses[0].targetRef.name).toBe('web-2.clusterspace.m1');
    const slice = {
      metadata: { name: 'web-abc' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'n1', targetRef: { kind: 'Pod', name: 'web-1' } }],
    };
    expect(out(slice).endpoints[0]).toMatchObject({
      nodeName: 'n1.clusterspace.m1',
      targetRef: { name: 'web-1.clusterspace.m1' },
    });
    const ev = {
      metadata: { name: 'e' },
      regarding: { kind: 'Pod', name: 'web-1', namespace: 'default' },
      related: { kind: 'Node', name: 'n1' },
    };
    expect(out(ev)).toMatchObject({
      regarding: { name: 'web-1.clusterspace.m1', namespace: 'default' },
      related: { name: 'n1.clusterspace.m1' },
    });
  });

  it('a kind without references is left alone, whatever its fields look like', () => {
    const d = { kind: 'Deployment', metadata: { name: 'd' }, spec: { containers: [], nodeName: 'x' } };
    expect(out(d).spec.nodeName).toBe('x');
    expect(out({ metadata: { name: 'p' }, spec: { nodeName: 'x' } }).spec.nodeName).toBe('x');
  });

  it('a scheduled pod in a list is spliced, not parsed: spec and status bytes but the node are copied', () => {
    const text =
      '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","x":1.50}],"nodeName":"w"},"status":{"y":1.0}}';
    const got = listItemBytes(text, 'm1');
    expect(got).toBeDefined();
    expect(got).toContain(
      '"spec":{"containers":[{"name":"c","x":1.50}],"nodeName":"w.clusterspace.m1"},"status":{"y":1.0}}',
    );
  });

  it('the byte path gives the same object as the parsing path, pods with nodes included', () => {
    const name = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), fc.string());
    const item = fc.record(
      {
        kind: fc.constantFrom(undefined, 'Pod', 'Deployment', 'PersistentVolume', ''),
        metadata: fc.record({ name, resourceVersion: fc.constant('5') }, { requiredKeys: [] }),
        spec: fc.oneof(
          fc.record(
            {
              nodeName: fc.oneof(name, fc.integer()),
              containers: fc.oneof(fc.constant([{ name: 'c' }]), fc.constant({})),
              claimRef: fc.record({ name }),
              volumeName: name,
              other: fc.jsonValue({ maxDepth: 2 }),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        status: fc.record({ nominatedNodeName: name, phase: fc.string() }, { requiredKeys: [] }),
        subsets: fc.constant([{ addresses: [{ nodeName: 'n' }] }]),
      },
      { requiredKeys: ['metadata'] },
    );
    let spliced = 0;
    fc.assert(
      fc.property(item, fc.boolean(), (o, pretty) => {
        const text = JSON.stringify(o, null, pretty ? 1 : undefined);
        const want = toFleetObject(fed, JSON.parse(text), 'm1');
        const got = listItemBytes(text, 'm1');
        if (got === undefined) return; // left to the parsing path
        spliced++;
        expect(JSON.parse(got)).toEqual(want);
      }),
      { numRuns: 3000 },
    );
    expect(spliced).toBeGreaterThan(300);
  });
});

/** `text` as a list item rewritten from its bytes (itembytes.ts), or undefined when left to parsing */
function listItemBytes(text: string, cluster: string): string | undefined {
  let out: string | undefined;
  new ListSplitter().push(new TextEncoder().encode(`{"items":[${text}]}`), (e) => {
    if (e.type !== 'item' || !e.facts) return;
    const sink = new ByteSink(16);
    if (writeFleetItem(sink, e.bytes, e.facts, itemView(fed, cluster)))
      out = new TextDecoder().decode(sink.take());
  });
  return out;
}

describe('references in writes', () => {
  it('fleet names of the owning cluster become plain; another cluster is a 400 naming the field', () => {
    const body = toFleetObject(fed, structuredClone(pod), 'm1');
    const r = objectForCluster(body, ctx('m1'));
    expect(r.ok).toBe(true);
    expect(body.spec.nodeName).toBe('worker');
    expect(body.status.nominatedNodeName).toBe('other');
    const bad = objectForCluster(
      { kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], nodeName: 'w.clusterspace.m2' } },
      ctx('m1'),
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.status.code).toBe(400);
      expect(bad.status.message).toContain('spec.nodeName');
      expect(bad.status.message).toContain('m2');
    }
    // plain names are written as they are
    const plain = structuredClone(pod);
    expect(objectForCluster(plain, ctx('m1')).ok).toBe(true);
    expect(plain).toEqual(pod);
  });

  it('patches: merge patches by the same fields, JSON patches at the paths that write references', () => {
    const mp = { spec: { claimRef: { name: 'data.clusterspace.m1', namespace: 'ns' } } };
    expect(mergePatchForCluster(mp, ctx('m1'))).toEqual({
      ok: true,
      value: { spec: { claimRef: { name: 'data', namespace: 'ns' } } },
    });
    const jp = jsonPatchForCluster(
      [
        { op: 'replace', path: '/spec/volumeName', value: 'pv.clusterspace.m1' },
        { op: 'add', path: '/spec/claimRef', value: { name: 'c.clusterspace.m1' } },
      ],
      ctx('m1'),
    );
    expect(jp.ok && jp.value.map((o) => o.value)).toEqual(['pv', { name: 'c' }]);
    const bad = jsonPatchForCluster(
      [{ op: 'replace', path: '/spec/nodeName', value: 'n.clusterspace.m2' }],
      ctx('m1'),
    );
    expect(!bad.ok && bad.status.code).toBe(400);
  });

  it('property: out then in gives every reference back as the cluster wrote it', () => {
    const n = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
    fc.assert(
      fc.property(
        n,
        n,
        n,
        fc.constantFrom('m1', 'm2', 'karmada'),
        fc.boolean(),
        (node, claim, podName, cluster, federation) => {
          const objs = [
            { kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], nodeName: node } },
            { kind: 'PersistentVolume', metadata: { name: 'v' }, spec: { claimRef: { name: claim } } },
            { kind: 'PersistentVolumeClaim', metadata: { name: 'c' }, spec: { volumeName: node } },
            {
              kind: 'Endpoints',
              metadata: { name: 'e' },
              subsets: [{ addresses: [{ nodeName: node, targetRef: { name: podName } }] }],
            },
            { kind: 'Event', metadata: { name: 'x' }, involvedObject: { name: podName } },
            { kind: 'Binding', metadata: { name: 'p' }, target: { kind: 'Node', name: node } },
          ];
          for (const o of objs) {
            const shown = toFleetObject({ federation }, structuredClone(o), cluster);
            const back = objectForCluster(shown, { cluster, membership: ['karmada', 'm1', 'm2'] });
            expect(back.ok).toBe(true);
            const { metadata: _a, ...rest } = shown;
            const { metadata: _b, ...want } = o;
            expect(rest).toEqual(want);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('protobuf bodies: a pod’s node, an event’s object, a Binding’s target; other kinds untouched', () => {
    const meta = lenField(1, lenField(1, 'p'));
    const podRaw = concatBytes([
      meta,
      lenField(2, concatBytes([lenField(2, lenField(1, 'c')), lenField(10, 'w.clusterspace.m1')])),
    ]);
    const r = protobufObjectForCluster(encodeEnvelope('v1', 'Pod', podRaw), ctx('m1'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const raw = decodeEnvelope(r.value).raw;
    const spec = readFields(raw).find((f) => f.num === 2)!;
    const node = readFields(raw, spec.valueStart, spec.valueEnd).find((f) => f.num === 10)!;
    expect(fieldString(raw, node)).toBe('w');
    const other = protobufObjectForCluster(encodeEnvelope('v1', 'Pod', podRaw), ctx('m2'));
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.status.message).toContain('spec.nodeName');
    // an events.k8s.io Event: regarding (8) → name (3)
    const ev = concatBytes([
      meta,
      lenField(8, concatBytes([lenField(1, 'Pod'), lenField(3, 'web.clusterspace.m1')])),
    ]);
    const e = protobufObjectForCluster(encodeEnvelope('events.k8s.io/v1', 'Event', ev), ctx('m1'));
    expect(e.ok && new TextDecoder().decode(e.value).includes('web.clusterspace')).toBe(false);
    const b = concatBytes([
      meta,
      lenField(2, concatBytes([lenField(1, 'Node'), lenField(3, 'n.clusterspace.m2')])),
    ]);
    expect(protobufObjectForCluster(encodeEnvelope('v1', 'Binding', b), ctx('m1')).ok).toBe(false);
    // a Deployment's field 2 is its spec, not a reference: bytes as they came but the name
    const dep = concatBytes([meta, lenField(2, lenField(10, 'x.clusterspace.m2'))]);
    const d = protobufObjectForCluster(encodeEnvelope('apps/v1', 'Deployment', dep), ctx('m1'));
    expect(d.ok && decodeEnvelope(d.value).raw).toEqual(dep);
  });

  it('mapReferences names each field it visits', () => {
    const seen: string[] = [];
    mapReferences(structuredClone({ ...pod, kind: undefined }), (n, f) => {
      seen.push(f);
      return n;
    });
    expect(seen).toEqual(['spec.nodeName', 'status.nominatedNodeName']);
  });
});

describe('references in Table cells', () => {
  const col = (name: string) => ({
    name,
    type: 'string',
    format: name === 'Name' ? 'name' : '',
    description: '',
    priority: 0,
  });
  it('Node, Object, Claim and Volume cells show fleet names; <none> and empty cells stay', () => {
    const cols = ['Name', 'Node', 'Nominated Node', 'Object', 'Claim', 'Volume', 'Message'].map(col);
    const m = mergeColumns([cols]);
    const row = toFleetRow(
      fed,
      { cells: ['web-1', 'worker', '<none>', 'pod/web-1', 'default/data', 'pv-1', 'pod/x'] },
      m,
      0,
      'm1',
    );
    expect(row.cells).toEqual([
      'web-1.clusterspace.m1',
      'm1',
      'worker.clusterspace.m1',
      '<none>',
      'pod/web-1.clusterspace.m1',
      'default/data.clusterspace.m1',
      'pv-1.clusterspace.m1',
      'pod/x',
    ]);
    const empty = toFleetRow(fed, { cells: ['a', '', '', '', '', '', ''] }, m, 0, 'karmada');
    expect(empty.cells).toEqual(['a', 'karmada', '', '', '', '', '', '']);
    expect(toFleetRow(fed, { cells: ['a', 'w', '', 'pod/p', '', '', ''] }, m, 0, 'karmada').cells).toEqual([
      'a',
      'karmada',
      'w',
      '',
      'pod/p',
      '',
      '',
      '',
    ]);
  });
});

describe('field selectors on references', () => {
  it('spec.nodeName / regarding.name with a fleet name pin its cluster; an empty value pins nothing', () => {
    const r = rewriteFieldSelectorNames(
      'spec.nodeName=w.clusterspace.m2,status.phase!=Failed,status.phase!=Succeeded',
      { plainNameCluster: 'karmada' },
    );
    expect(!r.matchesNothing && r.cluster).toBe('m2');
    expect(!r.matchesNothing && r.forwardFor('m2')).toBe(
      'spec.nodeName=w,status.phase!=Failed,status.phase!=Succeeded',
    );
    const g = rewriteFieldSelectorNames('regarding.name=p.clusterspace.m1,regarding.kind=Pod');
    expect(!g.matchesNothing && g.forwardFor('m1')).toBe('regarding.kind=Pod,regarding.name=p');
    const unscheduled = rewriteFieldSelectorNames('spec.nodeName=', { plainNameCluster: 'karmada' });
    expect(!unscheduled.matchesNothing && unscheduled.cluster).toBeUndefined();
    expect(!unscheduled.matchesNothing && unscheduled.forwardFor('m1')).toBe('spec.nodeName=');
    // involvedObject.namespace stays plain in objects, so it is not a name to translate
    const ns = rewriteFieldSelectorNames('involvedObject.namespace=default.clusterspace.m1');
    expect(!ns.matchesNothing && ns.cluster).toBeUndefined();
    expect(
      rewriteFieldSelectorNames('spec.nodeName=a.clusterspace.m1,metadata.name=b.clusterspace.m2')
        .matchesNothing,
    ).toBe(true);
  });
});

/**
 * A workload's pod selector at the root gains the cluster term and loses it on the way back
 * (podselector.ts): single objects, kind-less list items, list items and Table rows from their bytes,
 * and every write body form (object, last-applied record, merge patch).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, seeded, shuffled, text } from '../../../test/helpers/loosejson.ts';
import {
  encodeEnvelope,
  lenField,
  mapEntry,
  readFields,
  readMapEntry,
  varintField,
} from '../../kube/protobuf.ts';
import { ByteSink, concatBytes as concat } from '../../util/bytes.ts';
import { itemView, writeFleetItem } from '../itembytes/index.ts';
import { writeFleetRow } from '../itembytes/row.ts';
import { ListSplitter } from '../jsonsplit/index.ts';
import { ItemScanner, ROW } from '../jsonsplit/item.ts';
import { mergeColumns, toFleetRow } from '../table/index.ts';
import {
  jsonPatchForCluster,
  LAST_APPLIED,
  mergePatchForCluster,
  objectForCluster,
  protobufObjectForCluster,
} from '../writes.ts';
import { type FleetView, toFleetObject } from './index.ts';

/** one scanner for the file's scans, as a splitter keeps one for its items */
const scanner = new ItemScanner();
const scanItem = (b: Uint8Array, i: number, n: number, ctx: number, depth: number) =>
  scanner.scan(b, i, n, ctx, depth);
const lastFacts = () => scanner.facts;

const K = 'fleet.karmada.io/cluster';
const ROOT: FleetView = { federation: false };
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } };
const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: structuredClone(template) },
});
const service = () => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
});
const kindless = <T extends { kind?: string; apiVersion?: string }>(o: T) => {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest as Record<string, any>;
};
const enc = new TextEncoder();
const dec = new TextDecoder();

describe('pod selectors shown at the root', () => {
  it('gain fleet.karmada.io/cluster=<cluster>: LabelSelector kinds in matchLabels, Services and RCs in the map', () => {
    expect(toFleetObject(ROOT, deployment(), 'member2').spec.selector).toEqual({
      matchLabels: { app: 'web', [K]: 'member2' },
    });
    expect(toFleetObject(ROOT, service(), 'member2').spec.selector).toEqual({ app: 'web', [K]: 'member2' });
    for (const kind of ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job']) {
      const o = { ...deployment(), kind };
      o.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] } as never;
      expect(toFleetObject(ROOT, o, 'member3').spec.selector, kind).toEqual({
        matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }],
        matchLabels: { [K]: 'member3' },
      });
    }
    const rc = {
      kind: 'ReplicationController',
      metadata: { name: 'r' },
      spec: { selector: { app: 'web' }, template },
    };
    expect(toFleetObject(ROOT, rc, 'member1').spec.selector).toEqual({ app: 'web', [K]: 'member1' });
  });

  it('list items without a kind, recognised by their shape', () => {
    expect(toFleetObject(ROOT, kindless(deployment()), 'member2').spec.selector.matchLabels[K]).toBe(
      'member2',
    );
    expect(toFleetObject(ROOT, kindless(service()), 'member2').spec.selector[K]).toBe('member2');
    // a PodDisruptionBudget's selector has no template beside it: kubectl never lists pods by it
    const pdb = {
      metadata: { name: 'p' },
      spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 1 },
    };
    expect(toFleetObject(ROOT, pdb, 'member2').spec.selector).toEqual({ matchLabels: { app: 'web' } });
  });

  it('stay as they are where names stay plain, and where there is nothing to scope', () => {
    for (const view of [
      { federation: false, scope: 'member2' },
      { federation: true }, // the control plane's own objects, with federation on
      { federation: false }, // and with it off: templates, whose pods run in the members
    ]) {
      const cluster = view.scope ?? 'karmada';
      expect(toFleetObject(view, deployment(), cluster).spec.selector).toEqual({
        matchLabels: { app: 'web' },
      });
    }
    // a Service without a selector selects no pods, and must not start selecting some
    const headless = { ...service(), spec: { ports: [{ port: 80 }] } } as Record<string, any>;
    expect(toFleetObject(ROOT, headless, 'member2').spec.selector).toBeUndefined();
    const empty = { ...service(), spec: { selector: {}, ports: [] } };
    expect(toFleetObject(ROOT, empty, 'member2').spec.selector).toEqual({});
    const cm = { kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } };
    expect(toFleetObject(ROOT, structuredClone(cm), 'member2')).not.toHaveProperty('spec');
  });

  it('lose the term again on every write body: object, last-applied record, merge patch', () => {
    const ctx = { cluster: 'member2', membership: ['member1', 'member2'] };
    for (const original of [deployment(), service(), kindless(deployment())]) {
      const shown = toFleetObject(ROOT, structuredClone(original), 'member2');
      const record = JSON.stringify(shown);
      shown.metadata.annotations[LAST_APPLIED] = record;
      const r = objectForCluster(shown, ctx);
      expect(r.ok).toBe(true);
      const written = r.ok ? (r.value as Record<string, any>) : {};
      expect(written.spec).toEqual(original.spec);
      expect(JSON.parse(written.metadata.annotations[LAST_APPLIED]).spec).toEqual(original.spec);
    }
    // matchLabels the term was all of goes with it
    const onlyTerm = { ...deployment(), spec: { selector: { matchExpressions: [] }, template } };
    const shown = toFleetObject(ROOT, onlyTerm, 'member2');
    const back = objectForCluster(shown, { cluster: 'member2', membership: ['member2'] });
    expect(back.ok && back.value.spec.selector).toEqual({ matchExpressions: [] });
    const patch = mergePatchForCluster(
      { spec: { selector: { matchLabels: { app: 'web', [K]: 'member2' } }, replicas: 2 } },
      {
        cluster: 'member2',
        membership: ['member2'],
        url: { fleet: 'web.clusterspace.member2', plain: 'web' },
      },
    );
    expect(patch.ok && patch.value).toEqual({
      spec: { selector: { matchLabels: { app: 'web' } }, replicas: 2 },
    });
    const svcPatch = mergePatchForCluster(
      { spec: { selector: { [K]: 'member2', app: 'web' } } },
      { cluster: 'member2', membership: ['member2'] },
    );
    expect(svcPatch.ok && svcPatch.value).toEqual({ spec: { selector: { app: 'web' } } });
    // JSON patches: an operation on the term is dropped, values holding it lose it
    const ops = jsonPatchForCluster(
      [
        { op: 'add', path: '/spec/selector/matchLabels/fleet.karmada.io~1cluster', value: 'member2' },
        { op: 'replace', path: '/spec/selector/fleet.karmada.io~1cluster', value: 'member2' },
        { op: 'replace', path: '/spec/selector', value: { matchLabels: { app: 'web', [K]: 'member2' } } },
        { op: 'replace', path: '/spec/selector/matchLabels', value: { app: 'web', [K]: 'member2' } },
        { op: 'replace', path: '/spec', value: { selector: { app: 'web', [K]: 'member2' } } },
      ],
      { cluster: 'member2', membership: ['member2'] },
    );
    expect(ops.ok && ops.value).toEqual([
      { op: 'replace', path: '/spec/selector', value: { matchLabels: { app: 'web' } } },
      { op: 'replace', path: '/spec/selector/matchLabels', value: { app: 'web' } },
      { op: 'replace', path: '/spec', value: { selector: { app: 'web' } } },
    ]);
  });

  it('list items and Table rows written from their bytes carry the term as toFleetObject gives it', () => {
    const items = [kindless(deployment()), kindless(service()), { metadata: { name: 'cm' }, data: {} }];
    for (const view of [ROOT, { federation: false, scope: 'member2' }]) {
      const body = enc.encode(`{"kind":"List","items":[${items.map((o) => JSON.stringify(o)).join(',')}]}`);
      const got: string[] = [];
      const s = new ListSplitter();
      const iv = itemView(view, 'member2');
      s.push(body, (e) => {
        if (e.type !== 'item') return;
        const sink = new ByteSink(16);
        got.push(
          e.facts && writeFleetItem(sink, e.bytes, e.facts, iv)
            ? dec.decode(sink.take())
            : JSON.stringify(toFleetObject(view, JSON.parse(dec.decode(e.bytes)), 'member2')),
        );
      });
      s.end();
      const want = items.map((o) => JSON.stringify(toFleetObject(view, structuredClone(o), 'member2')));
      expect(got).toEqual(want);
      expect(JSON.parse(got[0]!).spec.selector.matchLabels[K]).toBe(view === ROOT ? 'member2' : undefined);
      expect(JSON.parse(got[1]!).spec.selector[K]).toBe(view === ROOT ? 'member2' : undefined);
    }
    // a Table row's object (includeObject=Object)
    const merged = mergeColumns([[{ name: 'Name', type: 'string', format: 'name' }]] as never);
    const row = { cells: ['web'], object: deployment() };
    const t = enc.encode(JSON.stringify(row));
    expect(scanItem(t, 0, t.length, ROW, 100)).toBe(t.length);
    const sink = new ByteSink(16);
    const want = toFleetRow(ROOT, structuredClone(row) as never, merged, 0, 'member2');
    expect((want.object as Record<string, any>).spec.selector.matchLabels[K]).toBe('member2');
    // as the list route answers it: from the bytes when the writer takes it, else parsed (toFleetRow)
    const got = writeFleetRow(sink, t, lastFacts(), itemView(ROOT, 'member2'), merged, 0)
      ? dec.decode(sink.take())
      : JSON.stringify(toFleetRow(ROOT, JSON.parse(dec.decode(t)), merged, 0, 'member2'));
    expect(JSON.parse(got)).toEqual(JSON.parse(JSON.stringify(want)));
  });

  it('protobuf write bodies lose the term too, beside the template references edited in the same spec', () => {
    const ctx = { cluster: 'member2', membership: ['member1', 'member2'] };
    const meta = lenField(1, concat([lenField(1, 'web.clusterspace.member2'), lenField(3, 'shop')]));
    /** the entries of the map field at `path` below the object (`raw` of the envelope) */
    const mapAt = (body: Uint8Array, path: number[]): Array<[string, string]> => {
      const env = readFields(body, 4).find((f) => f.num === 2)!;
      let fields = readFields(body, env.valueStart, env.valueEnd);
      for (const n of path.slice(0, -1)) {
        const f = fields.find((x) => x.num === n)!;
        fields = readFields(body, f.valueStart, f.valueEnd);
      }
      return fields
        .filter((f) => f.num === path.at(-1))
        .map((f) => {
          const e = readMapEntry(body, f);
          return [e.key, dec.decode(e.value)];
        });
    };
    const selector = lenField(2, concat([mapEntry(1, 'app', 'web'), mapEntry(1, K, 'member2')]));
    // template (3) → spec (2) → serviceAccountName (8): a reference written plain (references.ts)
    const tmpl = lenField(3, lenField(2, lenField(8, 'sa.clusterspace.member2')));
    const deploy = encodeEnvelope(
      'apps/v1',
      'Deployment',
      concat([meta, lenField(2, concat([varintField(1, 1), selector, tmpl]))]),
    );
    expect(mapAt(deploy, [2, 2, 1])).toEqual([
      ['app', 'web'],
      [K, 'member2'],
    ]);
    const d = protobufObjectForCluster(deploy, ctx);
    expect(d.ok).toBe(true);
    const out = d.ok ? d.value : new Uint8Array();
    expect(mapAt(out, [2, 2, 1])).toEqual([['app', 'web']]);
    expect(dec.decode(out)).not.toContain('sa.clusterspace');
    expect(dec.decode(out)).toContain('sa');

    const svc = encodeEnvelope(
      'v1',
      'Service',
      concat([
        meta,
        lenField(
          2,
          concat([lenField(1, varintField(3, 80)), mapEntry(2, K, 'member2'), mapEntry(2, 'app', 'web')]),
        ),
      ]),
    );
    const s2 = protobufObjectForCluster(svc, ctx);
    expect(s2.ok && mapAt(s2.value, [2, 2])).toEqual([['app', 'web']]);
  });

  it('random workloads, Services and look-alikes from list bodies: the byte path gives what toFleetObject gives', () => {
    const key = fc.oneof(fc.constantFrom(K, 'app', 'matchLabels', '__proto__'), text);
    const labels = fc.dictionary(key, text, { maxKeys: 3 });
    const selector = fc.oneof(
      labels,
      shuffled(
        fc.record(
          {
            matchLabels: fc.oneof(
              { arbitrary: labels, weight: 6 },
              { arbitrary: fc.constantFrom(null, 'x'), weight: 1 },
            ),
            matchExpressions: fc.constant([{ key: 'app', operator: 'Exists' }]),
          },
          { requiredKeys: [] },
        ),
      ),
      fc.constantFrom(null, 'app=web', {}),
    );
    const item = shuffled(
      fc.record(
        {
          kind: fc.constantFrom('Deployment', 'ReplicaSet', 'Job', 'Service', 'PodDisruptionBudget', ''),
          metadata: shuffled(
            fc.record({ name: fc.stringMatching(/^[a-z]{1,8}$/), labels }, { requiredKeys: [] }),
          ),
          spec: shuffled(
            fc.record(
              {
                selector,
                template: fc.oneof(fc.constant(template), fc.constant(null)),
                ports: fc.constant([{ port: 80 }]),
                replicas: fc.nat(3),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: ['metadata'] },
      ),
    ).chain((o) =>
      fc.tuple(fc.constant(o), fc.boolean()).map(([x, keepKind]) => (keepKind ? x : kindless(x))),
    );
    let bytePath = 0;
    let parsed = 0;
    let scoped = 0;
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 4 }),
        fc.integer(),
        fc.constantFrom<FleetView>(ROOT, { federation: false, scope: 'member2' }, { federation: true }),
        fc.constantFrom('member2', 'karmada'),
        (items, seed, view, cluster) => {
          const rnd = seeded(seed);
          const body = enc.encode(
            `{"kind":"List","items":[${items.map((o) => looseJson(o, rnd, { duplicateKeys: 0.03 })).join(',')}]}`,
          );
          const want = (JSON.parse(dec.decode(body)).items as Record<string, any>[]).map((o) =>
            JSON.stringify(toFleetObject(view, o, cluster)),
          );
          const got: string[] = [];
          const s = new ListSplitter();
          const iv = itemView(view, cluster);
          s.push(body, (e) => {
            if (e.type !== 'item') return;
            const sink = new ByteSink(16);
            if (e.facts && writeFleetItem(sink, e.bytes, e.facts, iv)) {
              bytePath++;
              const out = dec.decode(sink.take());
              if (JSON.parse(out).spec?.selector?.matchLabels?.[K] === cluster) scoped++;
              got.push(out);
            } else {
              parsed++;
              got.push(JSON.stringify(toFleetObject(view, JSON.parse(dec.decode(e.bytes)), cluster)));
            }
          });
          s.end();
          expect(got.length).toBe(want.length);
          for (const [i, g] of got.entries())
            expect(JSON.stringify(JSON.parse(g))).toBe(JSON.stringify(JSON.parse(want[i]!)));
        },
      ),
      { numRuns: 1500 },
    );
    expect(bytePath).toBeGreaterThan(800);
    expect(parsed).toBeGreaterThan(100);
    // the byte path itself added the term to some workloads' matchLabels
    expect(scoped).toBeGreaterThan(20);
  });
});

/**
 * The way in for every reference of the table (references-table.ts), authored ones included: bodies encoded
 * by k8s.io/api itself (test/fixtures/references: protobuf as client-go sends it, and JSON), every
 * reference named `<name>.clusterspace.m1`, come out naming no cluster when written to m1, and are refused
 * (400, naming a field) when written to m2. Answers still leave authored references as the cluster has them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyForCluster, parseObjectBody } from '../../plan/body.ts';
import {
  jsonPatchForCluster,
  mergePatchForCluster,
  objectForCluster,
  protobufObjectForCluster,
} from '../writes.ts';
import { toFleetObject } from './index.ts';

const ctx = (cluster: string) => ({ cluster, membership: ['karmada', 'm1', 'm2'] });
const FIXTURES = readFileSync(resolve('test/fixtures/references/bodies.txt'), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => {
    const [name, pb, ...json] = l.split(' ');
    return { name: name!, pb: new Uint8Array(Buffer.from(pb!, 'base64')), json: json.join(' ') };
  });
const latin1 = (b: Uint8Array) => Buffer.from(b).toString('latin1');

describe('references on the way in', () => {
  it('the fixtures name clusters in every reference (so the checks below can fail)', () => {
    expect(FIXTURES.map((f) => f.name)).toContain('pod');
    expect(FIXTURES.length).toBeGreaterThanOrEqual(15);
    for (const f of FIXTURES) {
      expect(latin1(f.pb).split('.clusterspace.m1').length, f.name).toBeGreaterThan(2);
      expect(f.json.split('.clusterspace.m1').length, f.name).toBeGreaterThan(2);
    }
  });

  it.each(FIXTURES)('protobuf $name: plain for its own cluster, a 400 naming a field for another', (f) => {
    const r = protobufObjectForCluster(f.pb, ctx('m1'));
    expect(r.ok).toBe(true);
    if (r.ok) expect(latin1(r.value)).not.toContain('.clusterspace.');
    const other = protobufObjectForCluster(f.pb, ctx('m2'));
    expect(!other.ok && other.status.code).toBe(400);
    if (!other.ok) expect(other.status.message).toContain('names cluster "m1"');
  });

  it.each(FIXTURES)('JSON $name, as an object and as a kind-less merge patch', (f) => {
    const obj = JSON.parse(f.json);
    const r = objectForCluster(obj, ctx('m1'));
    expect(r.ok && JSON.stringify(r.value)).not.toContain('.clusterspace.');
    const { kind: _, apiVersion: __, ...patch } = JSON.parse(f.json);
    const p = mergePatchForCluster(patch, ctx('m1'));
    expect(p.ok && JSON.stringify(p.value)).not.toContain('.clusterspace.');
    const bad = objectForCluster(JSON.parse(f.json), ctx('m2'));
    expect(!bad.ok && bad.status.code).toBe(400);
  });

  it('YAML bodies go the same way (what kubectl create -f sends as YAML)', () => {
    const yaml = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {name: web.clusterspace.m1}',
      'spec:',
      '  serviceAccountName: x.clusterspace.m1',
      '  containers: [{name: c, image: i, envFrom: [{secretRef: {name: x.clusterspace.m1}}]}]',
      '',
    ].join('\n');
    const body = parseObjectBody(new TextEncoder().encode(yaml), 'application/yaml');
    expect('kind' in body && body.kind).toBe('json');
    const r = bodyForCluster('create', body as never, ctx('m1'));
    expect(r.ok && r.value.kind === 'json' && r.value.value).toMatchObject({
      metadata: { name: 'web' },
      spec: { serviceAccountName: 'x', containers: [{ envFrom: [{ secretRef: { name: 'x' } }] }] },
    });
  });

  it('a naming cluster error says which field, with its index', () => {
    const bad = objectForCluster(
      {
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'a' },
                { name: 'b', envFrom: [{ configMapRef: { name: 'c.clusterspace.m2' } }] },
              ],
            },
          },
        },
      },
      ctx('m1'),
    );
    expect(!bad.ok && bad.status.message).toContain(
      'spec.template.spec.containers[1].envFrom[0].configMapRef.name',
    );
  });

  it('JSON patches: at a reference, at a value holding references, and only ServiceAccount subjects', () => {
    const jp = jsonPatchForCluster(
      [
        { op: 'replace', path: '/spec/template/spec/serviceAccountName', value: 'sa.clusterspace.m1' },
        {
          op: 'add',
          path: '/spec/template/spec/volumes/-',
          value: { name: 'v', secret: { secretName: 's.clusterspace.m1' } },
        },
        {
          op: 'replace',
          path: '/spec/template',
          value: { spec: { imagePullSecrets: [{ name: 'p.clusterspace.m1' }] } },
        },
        { op: 'add', path: '/subjects/-', value: { kind: 'ServiceAccount', name: 'sa.clusterspace.m1' } },
        { op: 'add', path: '/subjects/-', value: { kind: 'User', name: 'bob.clusterspace.m2' } },
        { op: 'replace', path: '/roleRef/name', value: 'r.clusterspace.m1' },
      ],
      ctx('m1'),
    );
    expect(jp.ok && jp.value.map((o) => o.value)).toEqual([
      'sa',
      { name: 'v', secret: { secretName: 's' } },
      { spec: { imagePullSecrets: [{ name: 'p' }] } },
      { kind: 'ServiceAccount', name: 'sa' },
      { kind: 'User', name: 'bob.clusterspace.m2' },
      'r',
    ]);
    const bad = jsonPatchForCluster(
      [{ op: 'add', path: '/spec/serviceAccountName', value: 'x.clusterspace.m2' }],
      ctx('m1'),
    );
    expect(!bad.ok && bad.status.message).toContain('spec.serviceAccountName');
  });

  it('answers leave authored references as stored; writing them back unchanged is a no-op', () => {
    const dep = JSON.parse(
      FIXTURES.find((f) => f.name === 'deployment')!.json.replaceAll('.clusterspace.m1', ''),
    );
    const shown = toFleetObject({ federation: true }, structuredClone(dep), 'm1');
    expect(shown.spec.template.spec.serviceAccountName).toBe('sa');
    expect(shown.spec.template.spec.nodeName).toBe('node');
    const back = objectForCluster(structuredClone(shown), ctx('m1'));
    expect(back.ok && back.value.spec).toEqual(dep.spec);
  });
});

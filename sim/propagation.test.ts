import { afterEach, describe, expect, it } from 'vitest';
import type { SimCluster } from './cluster.ts';
import { createSimFleet, type SimKarmada } from './karmada.ts';
import { propagate } from './propagation.ts';
import { propagateClusterRole } from './testing.ts';

const D = { group: 'apps', version: 'v1', resource: 'deployments' };
const PP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'propagationpolicies' };
const OP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'overridepolicies' };
const RB = { group: 'work.karmada.io', version: 'v1alpha2', resource: 'resourcebindings' };
const WORK = { group: 'work.karmada.io', version: 'v1alpha1', resource: 'works' };
const CR = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const CRB = { group: 'work.karmada.io', version: 'v1alpha2', resource: 'clusterresourcebindings' };

/** A ClusterRole `reader` at the control plane, selected by a ClusterPropagationPolicy to member1 and member3. */
function clusterRoleFleet() {
  fleet = createSimFleet();
  propagateClusterRole(fleet.karmada, ['member1', 'member3']);
  return fleet;
}

let fleet: { karmada: SimKarmada; members: Map<string, SimCluster> } | undefined;
afterEach(() => {
  fleet?.karmada.close();
  for (const m of fleet?.members.values() ?? []) m.close();
  fleet = undefined;
});

/** The demo's seeds: web (5 replicas) to member1 and member2 by static weights 3:2, api to member3. */
function seeded() {
  fleet = createSimFleet();
  propagate(fleet.karmada);
  return fleet;
}

describe('simulated propagation', () => {
  it('binds each selected template: clusters with divided replicas, the aggregated status', () => {
    const { karmada } = seeded();
    const rb = karmada.get(RB, 'shop', 'web-deployment') as any;
    expect(rb.spec.resource).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    // 5 × 3/5 = 3, 5 × 2/5 = 2: as the seeded copies hold them
    expect(rb.spec.clusters).toEqual([
      { name: 'member1', replicas: 3 },
      { name: 'member2', replicas: 2 },
    ]);
    expect(rb.status.aggregatedStatus.map((s: any) => [s.clusterName, s.applied])).toEqual([
      ['member1', true],
      ['member2', true],
    ]);
    expect(rb.metadata.labels['resourcebinding.karmada.io/permanent-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes a Work per cluster and the copy with Karmada’s labels and annotations', () => {
    const { karmada, members } = seeded();
    const rb = karmada.get(RB, 'shop', 'web-deployment') as any;
    const id = rb.metadata.labels['resourcebinding.karmada.io/permanent-id'];
    const works = (karmada.list(WORK) as any[]).filter(
      (w) => w.metadata.labels['resourcebinding.karmada.io/permanent-id'] === id,
    );
    expect(works.map((w) => w.metadata.namespace).sort()).toEqual([
      'karmada-es-member1',
      'karmada-es-member2',
    ]);
    const copy = members.get('member2')!.get(D, 'shop', 'web') as any;
    expect(copy.spec.replicas).toBe(2);
    expect(copy.metadata.labels['resourcebinding.karmada.io/permanent-id']).toBe(id);
    const w2 = works.find((w) => w.metadata.namespace === 'karmada-es-member2');
    expect(copy.metadata.annotations).toMatchObject({
      'resourcebinding.karmada.io/name': 'web-deployment',
      'resourcebinding.karmada.io/namespace': 'shop',
      'work.karmada.io/name': w2.metadata.name,
      'work.karmada.io/namespace': 'karmada-es-member2',
    });
  });

  it('applies OverridePolicies per cluster, and records them', () => {
    fleet = createSimFleet();
    fleet.karmada.create(OP, {
      apiVersion: 'policy.karmada.io/v1alpha1',
      kind: 'OverridePolicy',
      metadata: { name: 'web-m2', namespace: 'shop' },
      spec: {
        resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
        overrideRules: [
          {
            targetCluster: { clusterNames: ['member2'] },
            overriders: {
              imageOverrider: [{ component: 'Tag', operator: 'replace', value: '1.26' }],
              plaintext: [{ path: '/metadata/labels/tier', operator: 'add', value: 'edge' }],
            },
          },
        ],
      },
    } as never);
    propagate(fleet.karmada);
    const m2 = fleet.members.get('member2')!.get(D, 'shop', 'web') as any;
    const m1 = fleet.members.get('member1')!.get(D, 'shop', 'web') as any;
    expect(m2.spec.template.spec.containers[0].image).toBe('nginx:1.26');
    expect(m2.metadata.labels.tier).toBe('edge');
    expect(m2.metadata.annotations['policy.karmada.io/applied-overrides']).toContain('web-m2');
    expect(m1.spec.template.spec.containers[0].image).toBe('nginx:1.27');
  });

  it('puts a changed copy back, unless the policy suspends dispatching', () => {
    const { karmada, members } = seeded();
    const m1 = members.get('member1')!;
    const change = (image: string) => {
      const c = m1.get(D, 'shop', 'web') as any;
      c.spec.template.spec.containers[0].image = image;
      m1.update(D, c);
    };
    change('nginx:1.25');
    propagate(karmada);
    expect((m1.get(D, 'shop', 'web') as any).spec.template.spec.containers[0].image).toBe('nginx:1.27');

    const pp = karmada.get(PP, 'shop', 'web-propagation') as any;
    karmada.update(PP, { ...pp, spec: { ...pp.spec, suspension: { dispatching: true } } });
    change('nginx:1.25');
    propagate(karmada);
    expect((m1.get(D, 'shop', 'web') as any).spec.template.spec.containers[0].image).toBe('nginx:1.25');
    const works = (karmada.list(WORK) as any[]).filter((w) => w.metadata.name.startsWith('web-'));
    expect(works.every((w) => w.spec.suspendDispatching === true)).toBe(true);
  });

  it('removes a deleted template’s binding, Works and copies, as Karmada’s garbage collection does', () => {
    const { karmada, members } = seeded();
    karmada.remove(D, 'shop', 'web');
    propagate(karmada);
    expect(karmada.get(RB, 'shop', 'web-deployment')).toBeUndefined();
    expect(
      (karmada.list(WORK) as any[]).filter(
        (w) => w.metadata.annotations['resourcebinding.karmada.io/name'] === 'web-deployment',
      ),
    ).toEqual([]);
    expect(members.get('member1')!.get(D, 'shop', 'web')).toBeUndefined();
    expect(members.get('member2')!.get(D, 'shop', 'web')).toBeUndefined();
    // another template's copies stay
    expect(members.get('member3')!.get(D, 'shop', 'api')).toBeDefined();
  });

  it('binds a cluster-scoped template of a ClusterPropagationPolicy with a ClusterResourceBinding', () => {
    const { karmada, members } = clusterRoleFleet();
    const crb = karmada.get(CRB, undefined, 'reader-clusterrole') as any;
    expect(crb.metadata.namespace).toBeUndefined();
    expect(crb.spec.resource).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'reader',
      uid: expect.any(String),
      resourceVersion: expect.any(String),
    });
    expect(crb.spec.clusters).toEqual([{ name: 'member1' }, { name: 'member3' }]);
    expect(crb.status.aggregatedStatus.map((s: any) => [s.clusterName, s.applied])).toEqual([
      ['member1', true],
      ['member3', true],
    ]);
    const id = crb.metadata.labels['clusterresourcebinding.karmada.io/permanent-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(crb.metadata.labels['clusterpropagationpolicy.karmada.io/permanent-id']).toMatch(
      /^[0-9a-f-]{36}$/,
    );
    expect(crb.metadata.annotations).toEqual({ 'clusterpropagationpolicy.karmada.io/name': 'reader' });
    // no ResourceBinding for it
    expect((karmada.list(RB) as any[]).filter((rb) => rb.spec.resource.kind === 'ClusterRole')).toEqual([]);
    // the template is claimed by the cluster policy
    expect((karmada.get(CR, undefined, 'reader') as any).metadata).toMatchObject({
      labels: { 'clusterpropagationpolicy.karmada.io/permanent-id': expect.any(String) },
      annotations: { 'clusterpropagationpolicy.karmada.io/name': 'reader' },
    });

    const works = (karmada.list(WORK) as any[]).filter(
      (w) => w.metadata.labels['clusterresourcebinding.karmada.io/permanent-id'] === id,
    );
    expect(works.map((w) => w.metadata.namespace).sort()).toEqual([
      'karmada-es-member1',
      'karmada-es-member3',
    ]);
    expect(works[0].metadata.annotations).toEqual({
      'clusterresourcebinding.karmada.io/name': 'reader-clusterrole',
    });
    const copy = members.get('member3')!.get(CR, undefined, 'reader') as any;
    expect(copy.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);
    expect(copy.metadata.labels['clusterresourcebinding.karmada.io/permanent-id']).toBe(id);
    expect(copy.metadata.annotations).toMatchObject({
      'clusterresourcebinding.karmada.io/name': 'reader-clusterrole',
      'work.karmada.io/namespace': 'karmada-es-member3',
    });
    expect(copy.metadata.annotations).not.toHaveProperty(['resourcebinding.karmada.io/name']);
    expect(members.get('member2')!.get(CR, undefined, 'reader')).toBeUndefined();

    // gone with its template, copies and all
    karmada.remove(CR, undefined, 'reader');
    propagate(karmada);
    expect(karmada.get(CRB, undefined, 'reader-clusterrole')).toBeUndefined();
    expect(members.get('member1')!.get(CR, undefined, 'reader')).toBeUndefined();
  });
});

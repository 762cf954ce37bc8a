import { describe, expect, it } from 'vitest';
import {
  addWorks,
  bindingsPath,
  copyFacts,
  enrichRow,
  guessResource,
  indexBindings,
  isCopy,
  mayBePropagated,
  placementsCell,
  worksPath,
} from './propagation.ts';

const rb = {
  metadata: {
    name: 'web-deployment',
    namespace: 'shop',
    labels: { 'resourcebinding.karmada.io/permanent-id': '11111111-2222-3333-4444-555555555555' },
  },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
    clusters: [
      { name: 'member1', replicas: 2 },
      { name: 'member2', replicas: 1 },
    ],
  },
  status: {
    aggregatedStatus: [
      { clusterName: 'member1', applied: true, health: 'Healthy' },
      { clusterName: 'member2', applied: true, health: 'Unhealthy' },
    ],
  },
};
const other = {
  metadata: { name: 'cfg-configmap', namespace: 'shop' },
  spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg' }, clusters: [] },
};
const manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { replicas: 2 },
};
const work = {
  metadata: { name: 'web-abc', namespace: 'karmada-es-member1' },
  spec: { workload: { manifests: [manifest] } },
};
const copyMeta = {
  name: 'web',
  namespace: 'shop',
  annotations: {
    'resourcebinding.karmada.io/name': 'web-deployment',
    'resourcebinding.karmada.io/namespace': 'shop',
    'work.karmada.io/name': 'web-abc',
    'work.karmada.io/namespace': 'karmada-es-member1',
  },
};

function index() {
  const i = indexBindings({ items: [rb, other] }, 'apps', 'deployments');
  addWorks(i, { items: [work] });
  return i;
}

describe('which lists read the bindings', () => {
  it('lists of kinds members make themselves, and Karmada’s own, never do', () => {
    const at = (apiGroup: string, resource: string) =>
      mayBePropagated({ apiGroup, resource, subresource: '' });
    expect(at('apps', 'deployments')).toBe(true);
    expect(at('', 'configmaps')).toBe(true);
    expect(at('', 'pods')).toBe(false);
    expect(at('', 'events')).toBe(false);
    expect(at('work.karmada.io', 'resourcebindings')).toBe(false);
  });

  it('reads the namespace asked, or every namespace; Works by the bindings’ ids', () => {
    expect(bindingsPath('shop')).toBe('/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings');
    expect(bindingsPath('')).toBe('/apis/work.karmada.io/v1alpha2/resourcebindings');
    expect(decodeURIComponent(worksPath(['a', 'b']))).toBe(
      '/apis/work.karmada.io/v1alpha1/works?labelSelector=resourcebinding.karmada.io/permanent-id+in+(a,b)',
    );
  });

  it('kinds meet resources by kube’s guess', () => {
    expect(['Deployment', 'Ingress', 'NetworkPolicy', 'Endpoints'].map(guessResource)).toEqual([
      'deployments',
      'ingresses',
      'networkpolicies',
      'endpoints',
    ]);
  });
});

describe('templates and copies', () => {
  it('indexes only the bindings of the list’s kind', () => {
    const i = index();
    expect([...i.byTemplate.keys()]).toEqual(['shop/web']);
    expect(placementsCell(i.byTemplate.get('shop/web')!)).toBe('member1(2),member2(1)');
  });

  it('a copy is InSync, Drifted, or Unknown when only its metadata is at hand', () => {
    const i = index();
    const copy = { ...manifest, metadata: copyMeta, status: { replicas: 2 } };
    expect(copyFacts(i, copy, 'member1', true)).toMatchObject({ template: 'web', drift: 'InSync' });
    const drifted = { ...copy, spec: { replicas: 4 } };
    expect(copyFacts(i, drifted, 'member1', true)).toMatchObject({
      drift: 'Drifted',
      differences: [{ path: 'spec.replicas', template: 2, member: 4 }],
    });
    expect(copyFacts(i, copy, 'member1', false)?.drift).toBe('Unknown');
    expect(copyFacts(i, { metadata: { name: 'web' } }, 'member1', true)).toBeUndefined();
  });

  it('rows gain four cells and give back the object the client asked for', () => {
    const i = index();
    const tmpl = enrichRow(
      i,
      { cells: ['web'], object: { kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } } },
      'karmada',
      'Metadata',
    );
    expect(tmpl.cells).toEqual(['web', 'member1(2),member2(1)', '', '', 'applied 2/2, healthy 1/2']);
    expect(tmpl.object.kind).toBe('PartialObjectMetadata');
    expect(tmpl.object.metadata.annotations).toEqual({
      'fleet.karmada.io/propagated-to': 'member1(2),member2(1)',
      'fleet.karmada.io/propagation-status': 'applied 2/2, healthy 1/2',
      'fleet.karmada.io/copies-selector':
        'resourcebinding.karmada.io/permanent-id=11111111-2222-3333-4444-555555555555',
    });
    const copy = enrichRow(
      i,
      { cells: ['web'], object: { ...manifest, metadata: copyMeta } },
      'member1',
      'None',
    );
    expect(copy.cells).toEqual(['web', '', 'web', 'InSync', 'applied, healthy']);
    expect(copy.object).toBeUndefined();
    // the same name in a member that is no copy is left alone
    const plain = enrichRow(
      i,
      { cells: ['web'], object: { kind: 'Deployment', metadata: { name: 'web' } } },
      'member3',
      'Object',
    );
    expect(plain.cells).toEqual(['web', '', '', '', '']);
    expect(plain.object.kind).toBe('Deployment');
  });

  it('a cluster-scoped template and its copies, through its ClusterResourceBinding', () => {
    const crb = {
      metadata: {
        name: 'reader-clusterrole',
        labels: { 'clusterresourcebinding.karmada.io/permanent-id': 'crb-id' },
      },
      spec: {
        resource: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' },
        clusters: [{ name: 'member1' }, { name: 'member3' }],
      },
      status: { aggregatedStatus: [{ clusterName: 'member1', applied: true, health: 'Healthy' }] },
    };
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', rules: [] };
    const i = indexBindings([{ items: [rb] }, { items: [crb] }], 'rbac.authorization.k8s.io', 'clusterroles');
    addWorks(i, {
      items: [
        {
          metadata: { name: 'reader-1', namespace: 'karmada-es-member1' },
          spec: { workload: { manifests: [{ ...role, metadata: { name: 'reader' } }] } },
        },
      ],
    });
    const tmpl = enrichRow(
      i,
      { cells: ['reader'], object: { ...role, metadata: { name: 'reader' } } },
      'karmada',
      'Object',
    );
    expect(tmpl.cells).toEqual(['reader', 'member1,member3', '', '', 'applied 1/2, healthy 1/2']);
    expect(tmpl.object.metadata.annotations['fleet.karmada.io/copies-selector']).toBe(
      'clusterresourcebinding.karmada.io/permanent-id=crb-id',
    );
    const copyMd = {
      name: 'reader',
      annotations: {
        'clusterresourcebinding.karmada.io/name': 'reader-clusterrole',
        'work.karmada.io/name': 'reader-1',
        'work.karmada.io/namespace': 'karmada-es-member1',
      },
    };
    expect(isCopy({ metadata: copyMd })).toBe(true);
    const copy = enrichRow(
      i,
      { cells: ['reader'], object: { ...role, metadata: copyMd } },
      'member1',
      'None',
    );
    expect(copy.cells).toEqual(['reader', '', 'reader', 'InSync', 'applied, healthy']);
    const drifted = { ...role, rules: [{ verbs: ['*'] }], metadata: copyMd };
    expect(copyFacts(i, drifted, 'member1', true)?.drift).toBe('Drifted');
  });
});

import { describe, expect, it } from 'vitest';
import {
  addWorks,
  bindingsPaths,
  CLUSTER_BINDINGS_PATH,
  copyBindingKey,
  indexBindings,
  readBinding,
  worksPaths,
} from './bindings.ts';

const rb = {
  metadata: {
    name: 'web-deployment',
    namespace: 'shop',
    labels: { 'resourcebinding.karmada.io/permanent-id': 'rb-id' },
  },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
    clusters: [{ name: 'member1', replicas: 2 }],
  },
};
// Karmada names it `<name>-<kind>`; the fleet goes by spec.resource, so this one is named otherwise
const crb = {
  kind: 'ClusterResourceBinding',
  metadata: {
    name: 'not-derived-from-the-template',
    labels: { 'clusterresourcebinding.karmada.io/permanent-id': 'crb-id' },
  },
  spec: {
    resource: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' },
    clusters: [{ name: 'member1' }, { name: 'member3' }],
  },
  status: { aggregatedStatus: [{ clusterName: 'member3', applied: true, health: 'Healthy' }] },
};

describe('Karmada bindings', () => {
  it('reads a ClusterResourceBinding: no namespace, its own id label, keyed by its template', () => {
    expect(readBinding(crb)).toEqual({
      binding: '/not-derived-from-the-template',
      bindingId: 'crb-id',
      idLabel: 'clusterresourcebinding.karmada.io/permanent-id',
      template: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        namespace: '',
        name: 'reader',
      },
      placements: [{ cluster: 'member1' }, { cluster: 'member3', applied: true, health: 'Healthy' }],
    });
    expect(readBinding(rb)?.idLabel).toBe('resourcebinding.karmada.io/permanent-id');
  });

  it('reads ResourceBindings in a namespace, both kinds without one, ClusterResourceBindings alone when asked', () => {
    expect(bindingsPaths({ namespace: 'shop' })).toEqual([
      '/apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings',
    ]);
    expect(bindingsPaths({ namespace: '' })).toEqual([
      '/apis/work.karmada.io/v1alpha2/resourcebindings',
      CLUSTER_BINDINGS_PATH,
    ]);
    expect(bindingsPaths({ namespace: '', cluster: true })).toEqual([
      '/apis/work.karmada.io/v1alpha2/clusterresourcebindings',
    ]);
  });

  it('indexes both lists by the kind asked, and reads each kind’s Works under its own label', () => {
    const roles = indexBindings(
      [{ items: [rb] }, { items: [crb] }],
      'rbac.authorization.k8s.io',
      'clusterroles',
    );
    expect([...roles.byTemplate.keys()]).toEqual(['/reader']);
    expect([...roles.byBinding.keys()]).toEqual(['/not-derived-from-the-template']);
    expect(worksPaths(roles).map((p) => decodeURIComponent(p))).toEqual([
      '/apis/work.karmada.io/v1alpha1/works?labelSelector=clusterresourcebinding.karmada.io/permanent-id+in+(crb-id)',
    ]);
    const crb2 = {
      ...crb,
      kind: undefined,
      metadata: { name: 'x', labels: { 'clusterresourcebinding.karmada.io/permanent-id': 'd' } },
      spec: { ...crb.spec, resource: { ...crb.spec.resource, kind: 'Deployment', apiVersion: 'apps/v1' } },
    };
    const both = indexBindings([{ items: [rb] }, { items: [crb2] }], 'apps', 'deployments');
    expect([...both.byTemplate.keys()].sort()).toEqual(['/reader', 'shop/web']);
    expect(worksPaths(both).map((p) => decodeURIComponent(p).split('=')[1])).toEqual([
      'resourcebinding.karmada.io/permanent-id+in+(rb-id)',
      'clusterresourcebinding.karmada.io/permanent-id+in+(d)',
    ]);
    // a binding without its id: every Work is read
    const noId = indexBindings(
      { items: [{ ...rb, metadata: { name: 'n', namespace: 'shop' } }] },
      'apps',
      'deployments',
    );
    expect(worksPaths(noId)).toEqual(['/apis/work.karmada.io/v1alpha1/works']);
    addWorks(noId, {
      items: [
        { metadata: { name: 'w', namespace: 'karmada-es-m' }, spec: { workload: { manifests: [{ a: 1 }] } } },
      ],
    });
    expect(noId.manifests.get('karmada-es-m/w')).toEqual({ a: 1 });
  });

  it('knows a copy’s binding by either kind’s annotations', () => {
    expect(
      copyBindingKey({
        'resourcebinding.karmada.io/name': 'web-deployment',
        'resourcebinding.karmada.io/namespace': 'shop',
      }),
    ).toBe('shop/web-deployment');
    expect(copyBindingKey({ 'clusterresourcebinding.karmada.io/name': 'reader-clusterrole' })).toBe(
      '/reader-clusterrole',
    );
    expect(copyBindingKey({ 'work.karmada.io/name': 'w' })).toBeUndefined();
  });
});

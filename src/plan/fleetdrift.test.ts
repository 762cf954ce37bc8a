import { describe, expect, it } from 'vitest';
import { copyPath, manifestFor, readDriftAsk } from './fleetdrift.ts';

describe('drift asks', () => {
  it('a namespaced template’s copies are read in its namespace, a cluster-scoped one’s without', () => {
    const q = new URLSearchParams({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    const ns = readDriftAsk('shop', q);
    expect(ns).toEqual({ namespace: 'shop', apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    expect(copyPath(ns as never)).toBe('/apis/apps/v1/namespaces/shop/deployments/web');
    const role = readDriftAsk(
      '',
      new URLSearchParams({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        name: 'reader',
      }),
    );
    expect(copyPath(role as never)).toBe('/apis/rbac.authorization.k8s.io/v1/clusterroles/reader');
    expect(copyPath({ namespace: '', apiVersion: 'v1', kind: 'Namespace', name: 'team' })).toBe(
      '/api/v1/namespaces/team',
    );
    expect(readDriftAsk('', new URLSearchParams({ apiVersion: 'v1', kind: 'Namespace' }))).toMatchObject({
      code: 400,
    });
  });

  it('a cluster’s manifest is the one of its execution namespace naming the template', () => {
    const ask = {
      namespace: '',
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'reader',
    };
    const m1 = { kind: 'ClusterRole', metadata: { name: 'reader' }, rules: [] };
    const manifests = new Map<string, unknown>([
      ['karmada-es-member1/reader-1', m1],
      ['karmada-es-member2/other', { kind: 'ClusterRole', metadata: { name: 'other' } }],
    ]);
    expect(manifestFor(manifests, 'member1', ask)).toBe(m1);
    expect(manifestFor(manifests, 'member2', ask)).toBeUndefined();
    expect(manifestFor(manifests, 'member1', { ...ask, namespace: 'shop' })).toBeUndefined();
  });
});

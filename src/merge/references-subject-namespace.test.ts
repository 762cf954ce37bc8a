/**
 * A RoleBinding's ServiceAccount subject names its namespace: a chart installed with
 * `-n <ns>.clusterspace.<cluster>` writes `.Release.Namespace` there, so the cluster must get `<ns>`
 * (as metadata.namespace does), or the binding grants an account in a namespace that does not exist.
 */
import { describe, expect, it } from 'vitest';
import { objectForCluster } from './writes.ts';

const ctx = (cluster: string) => ({ cluster, membership: ['karmada', 'm1', 'm2'] });
const binding = (namespace: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'rb', namespace: 'app' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
  subjects: [
    { kind: 'ServiceAccount', name: 'sa', namespace },
    { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' },
  ],
});

describe("a ServiceAccount subject's namespace written by fleet name", () => {
  it('is the plain namespace in its own cluster', () => {
    const r = objectForCluster(binding('app.clusterspace.m1'), ctx('m1'));
    expect(r.ok && (r.value as ReturnType<typeof binding>).subjects[0]).toEqual({
      kind: 'ServiceAccount',
      name: 'sa',
      namespace: 'app',
    });
  });

  it('a plain namespace stays as written', () => {
    const r = objectForCluster(binding('other'), ctx('m1'));
    expect(r.ok && (r.value as ReturnType<typeof binding>).subjects[0]!.namespace).toBe('other');
  });

  it("another cluster's namespace is a 400 naming the field", () => {
    const r = objectForCluster(binding('app.clusterspace.m2'), ctx('m1'));
    expect(!r.ok && r.status.code).toBe(400);
    if (!r.ok) expect(r.status.message).toContain('subjects');
  });
});

import { describe, expect, it } from 'vitest';
import { buildCatalog } from './index.ts';
import { karmadaClusterObject, type SampleObject } from './samples.ts';

const setups = [
  { role: 'member' as const, crds: false, clusters: ['member1', 'member2', 'member3', 'edge-eu'] },
  { role: 'member' as const, crds: true, clusters: ['member1', 'member2'] },
  { role: 'karmada' as const, crds: false, clusters: ['karmada'] },
];

function find(objs: SampleObject[], resource: string, ns: string | undefined, name: string) {
  return objs.find(
    (o) => o.resource === resource && o.object.metadata.namespace === ns && o.object.metadata.name === name,
  );
}

describe('sample objects are consistent with the catalog', () => {
  for (const { role, crds, clusters } of setups) {
    const catalog = buildCatalog({ role, crds, kubernetesVersion: 'v1.35.0' });
    for (const cluster of clusters) {
      const objs = catalog.sampleObjects(cluster);
      it(`${role}${crds ? '+crds' : ''} ${cluster}: resources exist, kinds and scopes match`, () => {
        expect(objs.length).toBeGreaterThan(10);
        const namespaces = new Set(
          objs.filter((o) => o.resource === 'namespaces').map((o) => o.object.metadata.name),
        );
        for (const o of objs) {
          const def = catalog.find(o.group, o.version, o.resource);
          expect(def, `${o.group}/${o.version}/${o.resource}`).toBeDefined();
          expect(o.object.kind).toBe(def!.kind);
          expect(o.object.apiVersion).toBe(o.group ? `${o.group}/${o.version}` : o.version);
          expect(o.object.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
          expect(Number.isNaN(Date.parse(o.object.metadata.creationTimestamp!))).toBe(false);
          if (def!.namespaced)
            expect(namespaces.has(o.object.metadata.namespace!), o.object.metadata.name).toBe(true);
          else expect(o.object.metadata.namespace).toBeUndefined();
        }
      });
      it(`${role}${crds ? '+crds' : ''} ${cluster}: names and uids are unique, owners exist`, () => {
        const keys = new Set<string>();
        const uids = new Set<string>();
        for (const o of objs) {
          const key = `${o.group}/${o.resource}/${o.object.metadata.namespace ?? ''}/${o.object.metadata.name}`;
          expect(keys.has(key), key).toBe(false);
          keys.add(key);
          expect(uids.has(o.object.metadata.uid!)).toBe(false);
          uids.add(o.object.metadata.uid!);
        }
        for (const o of objs) {
          for (const ref of o.object.metadata.ownerReferences ?? [])
            expect(uids.has(ref.uid as string)).toBe(true);
        }
      });
      it(`${role}${crds ? '+crds' : ''} ${cluster}: deterministic`, () => {
        expect(catalog.sampleObjects(cluster)).toEqual(objs);
      });
    }
  }
});

describe('the sample fleet', () => {
  const catalog = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.35.0' });
  const m1 = catalog.sampleObjects('member1');
  const m2 = catalog.sampleObjects('member2');
  const m3 = catalog.sampleObjects('member3');

  it('has the usual namespaces and kube-root-ca.crt in each', () => {
    for (const objs of [m1, m2, m3]) {
      const ns = objs.filter((o) => o.resource === 'namespaces').map((o) => o.object.metadata.name);
      expect(ns).toEqual(['default', 'kube-system', 'kube-public', 'kube-node-lease', 'shop', 'monitoring']);
      for (const n of ns) expect(find(objs, 'configmaps', n, 'kube-root-ca.crt')).toBeDefined();
    }
  });

  it('names its two nodes after the cluster, Ready, with the kubelet version', () => {
    const nodes = m2.filter((o) => o.resource === 'nodes');
    expect(nodes.map((n) => n.object.metadata.name)).toEqual(['member2-control-plane', 'member2-worker']);
    for (const n of nodes) {
      const s = n.object.status as any;
      expect(s.conditions.find((c: any) => c.type === 'Ready').status).toBe('True');
      expect(s.nodeInfo.kubeletVersion).toBe('v1.35.0');
      expect(s.addresses[0].type).toBe('InternalIP');
    }
  });

  it('has web on member1 and member2 with different replicas, api only on member3', () => {
    const web1 = find(m1, 'deployments', 'shop', 'web')!.object.spec as any;
    const web2 = find(m2, 'deployments', 'shop', 'web')!.object.spec as any;
    expect(web1.replicas).not.toBe(web2.replicas);
    expect(find(m3, 'deployments', 'shop', 'web')).toBeUndefined();
    expect(find(m3, 'deployments', 'shop', 'api')).toBeDefined();
    expect(find(m1, 'deployments', 'shop', 'api')).toBeUndefined();
    for (const objs of [m1, m2, m3]) expect(find(objs, 'configmaps', 'default', 'app-config')).toBeDefined();
  });

  it('runs pods for deployments through replicasets, on the cluster nodes, in a per-cluster IP range', () => {
    for (const [cluster, objs] of [
      ['member1', m1],
      ['member2', m2],
    ] as const) {
      const dep = find(objs, 'deployments', 'shop', 'web')!;
      const rs = objs.find(
        (o) =>
          o.resource === 'replicasets' &&
          o.object.metadata.ownerReferences?.[0]?.uid === dep.object.metadata.uid,
      )!;
      const hash = rs.object.metadata.labels!['pod-template-hash']!;
      expect(rs.object.metadata.name).toBe(`web-${hash}`);
      const pods = objs.filter(
        (o) =>
          o.resource === 'pods' && o.object.metadata.ownerReferences?.[0]?.uid === rs.object.metadata.uid,
      );
      expect(pods).toHaveLength((dep.object.spec as any).replicas);
      for (const p of pods) {
        const st = p.object.status as any;
        expect(st.phase).toBe('Running');
        expect(p.object.metadata.labels!['pod-template-hash']).toBe(hash);
        expect((p.object.spec as any).nodeName).toMatch(new RegExp(`^${cluster}-`));
        expect(st.podIP.startsWith(cluster === 'member1' ? '10.11.' : '10.12.')).toBe(true);
      }
    }
  });

  it('has a kube-proxy daemonset, a job and events', () => {
    expect(find(m1, 'daemonsets', 'kube-system', 'kube-proxy')).toBeDefined();
    expect(find(m1, 'jobs', 'shop', 'db-migrate')).toBeDefined();
    expect(m1.filter((o) => o.resource === 'events').length).toBeGreaterThan(3);
    expect(m1.filter((o) => o.resource === 'secrets').length).toBeGreaterThan(0);
    expect(find(m1, 'services', 'default', 'kubernetes')).toBeDefined();
  });

  it('karmada holds templates and policies, no pods or nodes', () => {
    const k = buildCatalog({ role: 'karmada', crds: false, kubernetesVersion: 'v1.35.0' }).sampleObjects(
      'karmada',
    );
    expect(k.some((o) => o.resource === 'pods' || o.resource === 'nodes')).toBe(false);
    expect(find(k, 'deployments', 'shop', 'web')).toBeDefined();
    expect(find(k, 'deployments', 'shop', 'api')).toBeDefined();
    expect(k.some((o) => o.resource === 'propagationpolicies')).toBe(true);
  });

  it('widgets only on crd clusters', () => {
    expect(m1.some((o) => o.resource === 'widgets')).toBe(false);
    const crd = buildCatalog({ role: 'member', crds: true, kubernetesVersion: 'v1.35.0' });
    expect(crd.sampleObjects('member1').some((o) => o.resource === 'widgets')).toBe(true);
  });

  it('karmadaClusterObject makes a Cluster the karmada catalog serves', () => {
    const k = buildCatalog({ role: 'karmada', crds: false, kubernetesVersion: 'v1.35.0' });
    const c = karmadaClusterObject('member1', 'v1.34.2');
    expect(
      k
        .find('cluster.karmada.io', 'v1alpha1', 'clusters')!
        .printer!.cells(c, new Date('2025-07-01T00:00:00Z'))
        .slice(0, 4),
    ).toEqual(['member1', 'v1.34.2', 'Push', 'True']);
  });
});

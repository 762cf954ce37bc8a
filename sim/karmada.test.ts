import { afterEach, describe, expect, it } from 'vitest';
import type { SimCluster } from './cluster.ts';
import { createSimFleet, type SimKarmada } from './karmada.ts';
import { call, openStream } from './testing.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const PROXY = '/apis/cluster.karmada.io/v1alpha1/clusters';

let fleet: { karmada: SimKarmada; members: Map<string, SimCluster> } | undefined;
afterEach(() => {
  fleet?.karmada.close();
  for (const m of fleet?.members.values() ?? []) m.close();
  fleet = undefined;
});

describe('SimKarmada', () => {
  it('lists one Cluster per member with endpoint, version and Ready', async () => {
    fleet = createSimFleet();
    const r = await call(fleet.karmada, '/apis/cluster.karmada.io/v1alpha1/clusters');
    expect(r.status).toBe(200);
    expect(r.body.items.map((c: any) => c.metadata.name)).toEqual(['member1', 'member2', 'member3']);
    const c = r.body.items[0];
    expect(c.kind).toBeUndefined(); // served by karmada-aggregated-apiserver (typed), so no kind in list items
    expect(c.spec.apiEndpoint).toBe('https://member1.local:6443');
    expect(c.status.kubernetesVersion).toBe('v1.35.0');
    expect(c.status.conditions.find((x: any) => x.type === 'Ready').status).toBe('True');

    fleet.members.get('member3')!.faults.down = true;
    const after = await call(fleet.karmada, '/apis/cluster.karmada.io/v1alpha1/clusters/member3');
    expect(after.body.status.conditions.find((x: any) => x.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ClusterNotReachable',
    });
  });

  it('proxies requests to the member with path, query, method and body kept', async () => {
    fleet = createSimFleet({ seed: true });
    const m1 = fleet.members.get('member1')!;
    const created = await call(
      fleet.karmada,
      `${PROXY}/member1/proxy/api/v1/namespaces/default/configmaps?fieldManager=t`,
      {
        method: 'POST',
        json: { metadata: { name: 'via-proxy' }, data: { a: 'b' } },
        headers: { 'Impersonate-User': 'alice' },
      },
    );
    expect(created.status).toBe(201);
    expect(m1.get(CM, 'default', 'via-proxy')).toBeTruthy();
    const last = m1.requests.at(-1)!;
    expect(new URL(last.url).pathname).toBe('/api/v1/namespaces/default/configmaps');
    expect(new URL(last.url).search).toBe('?fieldManager=t');
    expect(last.headers['impersonate-user']).toBe('alice');
    const v = await call(fleet.karmada, `${PROXY}/member2/proxy/version`);
    expect(v.body.gitVersion).toBe('v1.35.0');
    const missing = await call(
      fleet.karmada,
      `${PROXY}/member1/proxy/api/v1/namespaces/default/configmaps/nope`,
    );
    expect(missing.body.message).toBe('configmaps "nope" not found');
  });

  it('streams a watch through the proxy', async () => {
    fleet = createSimFleet({ seed: false, members: ['member1'] });
    const m1 = fleet.members.get('member1')!;
    m1.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'default' } });
    const rv = m1.resourceVersion;
    const { res, lines } = await openStream(
      fleet.karmada,
      `${PROXY}/member1/proxy/api/v1/configmaps?watch=true&resourceVersion=${rv}`,
    );
    expect(res.status).toBe(200);
    expect(m1.openWatches()).toBe(1);
    m1.create(CM, { metadata: { name: 'live', namespace: 'default' } });
    const e = await lines.json();
    expect([e.type, e.object.metadata.name]).toEqual(['ADDED', 'live']);
    await lines.cancel();
    expect(m1.openWatches()).toBe(0);
  });

  it('answers a down member like the real proxy and an unknown cluster with NotFound', async () => {
    fleet = createSimFleet({ seed: false });
    fleet.members.get('member2')!.faults.down = true;
    const down = await call(fleet.karmada, `${PROXY}/member2/proxy/api/v1/pods`);
    expect(down.status).toBe(500);
    expect(down.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    expect(down.body.message).toMatch(/^dial tcp [\d.]+:6443: connect: connection refused$/);
    const unknown = await call(fleet.karmada, `${PROXY}/nope/proxy/api/v1/pods`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('clusters.cluster.karmada.io "nope" not found');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { SimCluster } from './cluster.ts';
import { SimProfileHub } from './clusterprofiles.ts';
import { call } from './testing.ts';

const LIST = '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles';
const closing: SimCluster[] = [];
afterEach(() => {
  for (const c of closing.splice(0)) c.close();
});

describe('SimProfileHub', () => {
  it('serves a ClusterProfile per member with its access provider, and the secretreader token Secret', async () => {
    const m1 = new SimCluster({ name: 'member1', seed: false });
    const hub = new SimProfileHub({ name: 'hub' });
    closing.push(m1, hub);
    hub.addProfile('member1', m1, 'http://127.0.0.1:1234', { token: 'tok-1' });
    const r = await call(hub, LIST);
    expect(r.status).toBe(200);
    const [p] = r.body.items;
    expect(p.metadata).toMatchObject({
      name: 'member1',
      namespace: 'fleet',
      labels: { 'x-k8s.io/cluster-manager': 'sim-manager' },
    });
    expect(p.spec.clusterManager).toEqual({ name: 'sim-manager' });
    expect(p.status.accessProviders).toEqual([
      {
        name: 'secretreader',
        cluster: {
          server: 'http://127.0.0.1:1234',
          extensions: [
            { name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'member1-spoke' } },
          ],
        },
      },
    ]);
    const s = await call(hub, '/api/v1/namespaces/fleet-system/secrets/member1-spoke');
    expect(atob(s.body.data.token)).toBe('tok-1');
    const disc = await call(hub, '/apis/multicluster.x-k8s.io/v1alpha1');
    expect(disc.body.resources.map((x: any) => x.name)).toContain('clusterprofiles');
  });

  it('ControlPlaneHealthy follows the member going down and coming back', async () => {
    const m1 = new SimCluster({ name: 'member1', seed: false });
    const hub = new SimProfileHub({ name: 'hub' });
    closing.push(m1, hub);
    hub.addProfile('member1', m1, 'http://127.0.0.1:1234');
    const healthy = async () =>
      (await call(hub, `${LIST}/member1`)).body.status.conditions.find(
        (c: any) => c.type === 'ControlPlaneHealthy',
      ).status;
    expect(await healthy()).toBe('True');
    m1.faults.down = true;
    expect(await healthy()).toBe('False');
    m1.faults.down = false;
    expect(await healthy()).toBe('True');
    hub.removeProfile('member1');
    expect((await call(hub, LIST)).body.items).toEqual([]);
  });
});

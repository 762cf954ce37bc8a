/**
 * The one binding reader against the simulated Karmada (its detector's ClusterResourceBindings, its Works):
 * which lists it reads for a scope, what it indexes, and that an unreadable list is "cannot say".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimFleet } from '../../sim/index.ts';
import { propagateClusterRole } from '../../sim/testing.ts';
import { type Cluster, fakeFleet } from '../routes/testing.ts';
import { readBindings } from './bindings.ts';

let close: (() => void) | undefined;
afterEach(() => close?.());

function fleetWithClusterRole(broken?: string) {
  const sim = createSimFleet();
  close = () => {
    sim.karmada.close();
    for (const m of sim.members.values()) m.close();
  };
  propagateClusterRole(sim.karmada, ['member1', 'member2']);
  const karmada: Cluster = (r) =>
    broken && r.path.startsWith(broken)
      ? new Response('{}', { status: 503 })
      : sim.karmada.fetch(new Request(`http://karmada${r.path}`, { headers: r.headers }));
  return fakeFleet({ karmada });
}

describe('readBindings', () => {
  it('finds a cluster-scoped template through its ClusterResourceBinding, with its Works', async () => {
    const f = fleetWithClusterRole();
    const ask = { namespace: '', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', works: true };
    const read = await readBindings(f.deps, f.targets[0]!, ask, AbortSignal.timeout(10_000));
    await read!.works;
    const p = read!.index.byTemplate.get('/reader');
    expect(p).toMatchObject({
      binding: '/reader-clusterrole',
      idLabel: 'clusterresourcebinding.karmada.io/permanent-id',
      placements: [
        { cluster: 'member1', applied: true },
        { cluster: 'member2', applied: true },
      ],
    });
    expect([...read!.index.manifests.keys()].map((k) => k.split('/')[0]).sort()).toEqual([
      'karmada-es-member1',
      'karmada-es-member2',
    ]);
    // both binding lists, then the Works of the one binding by its id
    expect(f.sent.map((s) => decodeURIComponent(s).replace(/\(.*\)/, '(…)'))).toEqual([
      'karmada GET /apis/work.karmada.io/v1alpha2/resourcebindings',
      'karmada GET /apis/work.karmada.io/v1alpha2/clusterresourcebindings',
      'karmada GET /apis/work.karmada.io/v1alpha1/works?labelSelector=clusterresourcebinding.karmada.io/permanent-id+in+(…)',
    ]);
  });

  it('reads only a namespace’s ResourceBindings for a namespaced ask, and nothing more without Works', async () => {
    const f = fleetWithClusterRole();
    const ask = { namespace: 'shop', group: 'apps', resource: 'deployments', works: false };
    const read = await readBindings(f.deps, f.targets[0]!, ask, AbortSignal.timeout(10_000));
    expect([...read!.index.byTemplate.keys()].sort()).toEqual(['shop/api', 'shop/web']);
    expect(f.sent).toEqual(['karmada GET /apis/work.karmada.io/v1alpha2/namespaces/shop/resourcebindings']);
  });

  it('narrows to one template when asked (a drift report)', async () => {
    const f = fleetWithClusterRole();
    const ask = {
      namespace: '',
      cluster: true,
      group: 'rbac.authorization.k8s.io',
      resource: 'clusterroles',
      template: '/nope',
      works: true,
    };
    const read = await readBindings(f.deps, f.targets[0]!, ask, AbortSignal.timeout(10_000));
    expect(read!.index.byBinding.size).toBe(0);
    expect(f.sent).toEqual(['karmada GET /apis/work.karmada.io/v1alpha2/clusterresourcebindings']);
  });

  it('cannot say when the binding list of a scope cannot be read', async () => {
    const f = fleetWithClusterRole('/apis/work.karmada.io/v1alpha2/clusterresourcebindings');
    const ask = {
      namespace: '',
      cluster: true,
      group: 'rbac.authorization.k8s.io',
      resource: 'clusterroles',
      works: true,
    };
    expect(await readBindings(f.deps, f.targets[0]!, ask, AbortSignal.timeout(10_000))).toBeUndefined();
  });

  it('without a namespace, one unreadable binding list leaves the other kind’s propagation, marked incomplete', async () => {
    // a caller who may list ResourceBindings everywhere but not ClusterResourceBindings: `get deploy -A`
    const f = fleetWithClusterRole('/apis/work.karmada.io/v1alpha2/clusterresourcebindings');
    const deploys = { namespace: '', group: 'apps', resource: 'deployments', works: false };
    const read = await readBindings(f.deps, f.targets[0]!, deploys, AbortSignal.timeout(10_000));
    expect(read?.complete).toBe(false);
    expect([...read!.index.byTemplate.keys()].sort()).toEqual(['shop/api', 'shop/web']);
    // the kind of the unreadable list: nothing indexed, as when nothing of it is propagated
    const roles = {
      namespace: '',
      group: 'rbac.authorization.k8s.io',
      resource: 'clusterroles',
      works: false,
    };
    const none = await readBindings(f.deps, f.targets[0]!, roles, AbortSignal.timeout(10_000));
    expect(none?.complete).toBe(false);
    expect(none!.index.byBinding.size).toBe(0);
    // both readable: complete
    close?.();
    const g = fleetWithClusterRole();
    expect((await readBindings(g.deps, g.targets[0]!, deploys, AbortSignal.timeout(10_000)))?.complete).toBe(
      true,
    );
  });

  it('cannot say when no binding list can be read', async () => {
    const f = fleetWithClusterRole('/apis/work.karmada.io/v1alpha2/');
    const ask = { namespace: '', group: 'apps', resource: 'deployments', works: false };
    expect(await readBindings(f.deps, f.targets[0]!, ask, AbortSignal.timeout(10_000))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { UpstreamClient } from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { Membership, MembershipError } from './membership.ts';
import type { Transport, UpstreamRequest } from './transport.ts';

const controlPlane: ResolvedEndpoint = {
  name: 'karmada',
  server: 'https://karmada.example',
  insecureSkipTLSVerify: false,
  timeoutMs: 1_000,
  poolKey: 'cp',
  token: () => 'fleet',
};

const cluster = (name: string, ready: 'True' | 'False' | undefined, message?: string) => ({
  metadata: { name },
  status: { conditions: ready ? [{ type: 'Ready', status: ready, ...(message ? { message } : {}) }] : [] },
});

/** A control plane whose answers the test sets; counts the Cluster lists it serves. */
function karmada() {
  const state = {
    items: [] as unknown[],
    fail: false as false | number,
    asked: [] as UpstreamRequest[],
  };
  const transport: Transport = {
    send: async (_e, r) => {
      state.asked.push(r);
      if (state.fail)
        return new Response('{"kind":"Status","message":"etcd is sad"}', { status: state.fail });
      return Response.json({ kind: 'ClusterList', items: state.items });
    },
  };
  return { state, client: new UpstreamClient(transport) };
}

describe('Membership (karmada)', () => {
  it('lists Clusters, sorted by name, each reached through the cluster proxy with the control plane pool', async () => {
    const k = karmada();
    k.state.items = [cluster('m2', 'False', 'lease expired'), cluster('m1', 'True')];
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 1_000 }, k.client);
    const members = await m.members();
    expect(members.map((x) => [x.name, x.ready, x.reason])).toEqual([
      ['m1', true, undefined],
      ['m2', false, 'lease expired'],
    ]);
    expect(members[0]!.endpoint).toMatchObject({
      server: 'https://karmada.example/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy',
      poolKey: 'cp',
    });
    expect(k.state.asked[0]!.url).toBe('https://karmada.example/apis/cluster.karmada.io/v1alpha1/clusters');
    // the not-Ready one is marked on its endpoint (the client answers as for an unreachable member)
    expect([members[0]!.endpoint.notReady, members[1]!.endpoint.notReady]).toEqual([
      undefined,
      'not Ready in Karmada: lease expired',
    ]);
  });

  it('trusts the list for refreshMs, then asks again', async () => {
    let now = 0;
    const k = karmada();
    k.state.items = [cluster('m1', 'True')];
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 1_000 }, k.client, () => now);
    await m.members();
    now = 999;
    await m.members();
    expect(k.state.asked).toHaveLength(1);
    k.state.items = [cluster('m1', 'True'), cluster('m3', 'True')];
    now = 1_000;
    expect((await m.members()).map((x) => x.name)).toEqual(['m1', 'm3']);
    expect(k.state.asked).toHaveLength(2);
  });

  it('serves the last known list when the control plane fails, and fails only without one', async () => {
    let now = 0;
    const k = karmada();
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 10 }, k.client, () => now);
    k.state.fail = 500;
    await expect(m.members()).rejects.toThrow(MembershipError);
    await expect(m.members()).rejects.toThrow(/500 etcd is sad/);
    k.state.fail = false;
    k.state.items = [cluster('m1', 'True')];
    await m.members();
    k.state.fail = 503;
    now = 100;
    expect((await m.members()).map((x) => x.name)).toEqual(['m1']);
  });

  it('leaves out Clusters named like a reserved clusterspace or without a name', async () => {
    const k = karmada();
    k.state.items = [
      cluster('all', 'True'),
      cluster('karmada', 'True'),
      { metadata: {} },
      cluster('m1', undefined),
    ];
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 1_000 }, k.client);
    expect((await m.members()).map((x) => [x.name, x.reason])).toEqual([['m1', 'no Ready condition']]);
  });

  it('finds the endpoint of a clusterspace: karmada, a member, or none for reserved and unknown names', async () => {
    const k = karmada();
    k.state.items = [cluster('m1', 'True')];
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 1_000 }, k.client);
    expect(await m.endpointFor('karmada')).toBe(controlPlane);
    expect((await m.endpointFor('m1'))?.name).toBe('m1');
    expect(await m.endpointFor('all')).toBeUndefined();
    expect(await m.endpointFor('m9')).toBeUndefined();
  });

  it('knows an endpoint without asking only while the list is fresh (null: no such cluster)', async () => {
    let now = 0;
    const k = karmada();
    k.state.items = [cluster('m1', 'True')];
    const m = new Membership(controlPlane, { mode: 'karmada', refreshMs: 1_000 }, k.client, () => now);
    // reserved names need no list; members do, until it is listed
    expect([m.knownEndpoint('karmada'), m.knownEndpoint('all'), m.knownEndpoint('m1')]).toEqual([
      controlPlane,
      null,
      undefined,
    ]);
    await m.members();
    expect([m.knownEndpoint('m1')?.name, m.knownEndpoint('m9')]).toEqual(['m1', null]);
    now = 1_000;
    expect(m.knownEndpoint('m1')).toBeUndefined();
    expect(k.state.asked).toHaveLength(1);
  });
});

describe('Membership (static)', () => {
  it('is the configured list, always ready, never asking the control plane', async () => {
    const k = karmada();
    const m1 = { ...controlPlane, name: 'm1', server: 'https://m1.example' };
    const m = new Membership(controlPlane, { mode: 'static', members: [m1] }, k.client);
    expect(await m.members()).toEqual([{ name: 'm1', ready: true, endpoint: m1 }]);
    expect([m.knownEndpoint('m1'), m.knownEndpoint('m9'), m.knownEndpoint('karmada')]).toEqual([
      m1,
      null,
      controlPlane,
    ]);
    expect(await m.endpointFor('m1')).toBe(m1);
    expect(k.state.asked).toHaveLength(0);
  });
});

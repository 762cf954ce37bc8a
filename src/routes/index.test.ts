import { describe, expect, it } from 'vitest';
import { fleetRoute } from './index.ts';
import { type Cluster, fakeFleet, json, serve } from './testing.ts';

const pod = (name: string) => ({ metadata: { name, namespace: 'shop', resourceVersion: '5' } });

/** every cluster answers what it was asked, so the test sees where each request went */
function fleet() {
  const bodies: Record<string, unknown[]> = {};
  const cluster =
    (name: string): Cluster =>
    (r) => {
      if (r.method === 'POST') {
        bodies[name] = [...(bodies[name] ?? []), JSON.parse(new TextDecoder().decode(r.body as Uint8Array))];
        return json(JSON.parse(new TextDecoder().decode(r.body as Uint8Array)), 201);
      }
      if (r.path.includes('/pods/')) return json(pod('web'));
      return json({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '5' },
        items: [pod('web')],
      });
    };
  const f = fakeFleet({
    karmada: cluster('karmada'),
    member1: cluster('member1'),
    member2: cluster('member2'),
  });
  const ask = async (path: string, init?: RequestInit) => {
    const res = await serve((c, info) => fleetRoute(c, f.deps, info), `http://fleet${path}`, init);
    return { res, body: await res.json() };
  };
  return { f, ask, bodies };
}

describe('fleetRoute: namespaces by fleet name', () => {
  it("lists member2's namespace alone, plainly, the objects under their plain names and that namespace", async () => {
    const { f, ask } = fleet();
    const { res, body } = await ask('/api/v1/namespaces/shop.clusterspace.member2/pods');
    expect(res.status).toBe(200);
    expect(f.sent).toEqual(['member2 GET /api/v1/namespaces/shop/pods']);
    expect(body.items.map((i: any) => [i.metadata.name, i.metadata.namespace])).toEqual([
      ['web', 'shop.clusterspace.member2'],
    ]);
  });

  it('gets a plain name there from member2, and creates there with the namespace made plain', async () => {
    const { f, ask, bodies } = fleet();
    // each object answers under the name it was asked by (docs/names.md)
    for (const name of ['web', 'web.clusterspace.member2']) {
      const got = await ask(`/api/v1/namespaces/shop.clusterspace.member2/pods/${name}`);
      expect([got.res.status, got.body.metadata.name, got.body.metadata.namespace]).toEqual([
        200,
        name,
        'shop.clusterspace.member2',
      ]);
    }
    expect(f.sent).toEqual([
      'member2 GET /api/v1/namespaces/shop/pods/web',
      'member2 GET /api/v1/namespaces/shop/pods/web',
    ]);
    const made = await ask('/api/v1/namespaces/shop.clusterspace.member2/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'new', namespace: 'shop.clusterspace.member2' } }),
    });
    expect(made.res.status).toBe(201);
    expect(f.sent.at(-1)).toBe('member2 POST /api/v1/namespaces/shop/pods');
    expect((bodies.member2 as any[])[0].metadata).toEqual({ name: 'new', namespace: 'shop' });
  });

  it('deletes a collection there: one cluster, so no 405 across the fleet', async () => {
    const { f, ask } = fleet();
    const { res, body } = await ask(
      '/api/v1/namespaces/shop.clusterspace.member2/pods?labelSelector=app%3Dweb',
      {
        method: 'DELETE',
      },
    );
    expect(res.status).toBe(200);
    expect(f.sent).toEqual(['member2 DELETE /api/v1/namespaces/shop/pods?labelSelector=app%3Dweb']);
    expect(body.items[0].metadata.namespace).toBe('shop.clusterspace.member2');
  });

  it('refuses a contradiction (400) and a cluster the fleet does not have (404), asking nobody', async () => {
    const { f, ask } = fleet();
    const against = await ask('/api/v1/namespaces/shop.clusterspace.member2/clusterspaces/member1/pods');
    expect([against.res.status, against.body.reason]).toEqual([400, 'BadRequest']);
    const nowhere = await ask('/api/v1/namespaces/shop.clusterspace.member9/pods');
    expect([nowhere.res.status, nowhere.body.message]).toEqual([
      404,
      'namespaces "shop.clusterspace.member9" not found',
    ]);
    const body = { metadata: { name: 'x', namespace: 'shop.clusterspace.member1' } };
    const mixed = await ask('/api/v1/namespaces/shop.clusterspace.member2/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(mixed.res.status).toBe(400);
    expect(f.sent).toEqual([]);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeComposite } from '../merge/rv/index.ts';
import { getRoute } from './get.ts';
import { type Cluster, fakeFleet, json, serve, status } from './testing.ts';

const cm = (name: string) =>
  json({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name, namespace: 'default', resourceVersion: '7' },
  });
const missing = (name: string) =>
  status(404, 'NotFound', `configmaps "${name}" not found`, { name, kind: 'configmaps' });

async function get(clusters: Record<string, Cluster>, path: string, plainNameCluster?: string) {
  const fleet = fakeFleet(clusters);
  const res = await serve(
    (c, info) => getRoute(c, fleet.deps, info, fleet.targets, plainNameCluster),
    `http://fleet/api/v1/namespaces/default/configmaps/${path}`,
  );
  return { fleet, res, body: JSON.parse(await res.text()) };
}

describe('getRoute', () => {
  it('asks only the cluster a fleet name names, with the plain name, and answers in the fleet view', async () => {
    const { fleet, res, body } = await get(
      { east: () => missing('x'), west: () => cm('web') },
      'web.clusterspace.west',
    );
    expect(fleet.sent).toEqual(['west GET /api/v1/namespaces/default/configmaps/web']);
    expect(res.status).toBe(200);
    expect(body.metadata.name).toBe('web.clusterspace.west');
  });

  it('looks a plain name up everywhere: one hit is the answer', async () => {
    const { fleet, body } = await get({ east: () => missing('web'), west: () => cm('web') }, 'web');
    expect(fleet.sent).toHaveLength(2);
    expect(body.metadata.name).toBe('web.clusterspace.west');
  });

  it('a plain name nowhere is a 404 (naming unreachable clusters), in two clusters a 409', async () => {
    const none = await get({ east: () => missing('web'), west: () => 'unreachable' }, 'web');
    expect([none.res.status, none.body.reason]).toEqual([404, 'NotFound']);
    expect(none.body.message).toContain('clusters not reachable: west');
    const two = await get({ east: () => cm('web'), west: () => cm('web') }, 'web');
    expect([two.res.status, two.body.reason]).toEqual([409, 'Conflict']);
    expect(two.body.message).toContain('web.clusterspace.east, web.clusterspace.west');
  });

  it("sends a composite resourceVersion as the owner's own, and refuses one without it", async () => {
    const rv = encodeComposite(['east', 'west'], new Map([['west', '42']]));
    const ok = await get(
      { east: () => cm('x'), west: () => cm('web') },
      `web.clusterspace.west?resourceVersion=${rv}`,
    );
    expect(ok.fleet.sent).toEqual(['west GET /api/v1/namespaces/default/configmaps/web?resourceVersion=42']);
    const bad = await get(
      { east: () => cm('x'), west: () => cm('web') },
      `web.clusterspace.east?resourceVersion=${rv}`,
    );
    expect(bad.res.status).toBe(400);
    expect(bad.fleet.sent).toEqual([]);
  });

  it('searching a plain name, a cluster the composite holds nothing for is asked as it is now, the rest as sent', async () => {
    const rv = encodeComposite(['east', 'west'], new Map([['west', '42']]));
    const { fleet, body } = await get(
      { east: () => missing('web'), west: () => cm('web') },
      `web?resourceVersion=${rv}&pretty=true`,
    );
    expect(fleet.sent.sort()).toEqual([
      'east GET /api/v1/namespaces/default/configmaps/web?pretty=true',
      'west GET /api/v1/namespaces/default/configmaps/web?resourceVersion=42&pretty=true',
    ]);
    expect(body.metadata.name).toBe('web.clusterspace.west');
    const garbage = await get({ east: () => cm('web'), west: () => cm('web') }, 'web?resourceVersion=x.y');
    expect([garbage.res.status, garbage.fleet.sent]).toEqual([400, []]);
  });

  it("shows the cluster's Status under the fleet name", async () => {
    const { res, body } = await get({ west: () => missing('web') }, 'web.clusterspace.west', 'west');
    expect(res.status).toBe(404);
    expect(body.message).toBe('configmaps "web.clusterspace.west" not found');
  });
});

describe('getRoute: bodies byte for byte as kube writes them', () => {
  // a GET of a missing Deployment as a real kube-apiserver answered it (shared/fixtures/kube-wire)
  const fixture = readFileSync('/work/shared/fixtures/kube-wire/status_404_notfound.json', 'utf8');

  it('a Status the fleet rewrites keeps every byte but the name, trailing newline included', async () => {
    const fleet = fakeFleet({
      east: () => new Response(fixture, { status: 404, headers: { 'Content-Type': 'application/json' } }),
    });
    const res = await serve(
      (c, info) => getRoute(c, fleet.deps, info, fleet.targets, undefined),
      'http://fleet/apis/apps/v1/namespaces/default/deployments/web.clusterspace.east',
    );
    expect(res.status).toBe(404);
    expect(await res.text()).toBe(
      fixture
        .replace('\\"web\\"', '\\"web.clusterspace.east\\"')
        .replace('"name":"web"', '"name":"web.clusterspace.east"'),
    );
  });

  it('an object the fleet rewrites ends with the newline kube ends it with', async () => {
    const fleet = fakeFleet({ east: () => cm('web') });
    const res = await serve(
      (c, info) => getRoute(c, fleet.deps, info, fleet.targets, undefined),
      'http://fleet/api/v1/namespaces/default/configmaps/web.clusterspace.east',
    );
    const text = await res.text();
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text).metadata.name).toBe('web.clusterspace.east');
  });
});

import { describe, expect, it } from 'vitest';
import { classifyDiscovery, type DocumentPath } from '../plan/discovery.ts';
import { discoveryRoute } from './discovery.ts';
import { type Cluster, fakeFleet, json, serve, status } from './testing.ts';

const groups = (...names: string[]) =>
  json({
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: names.map((n) => ({
      name: n,
      versions: [{ groupVersion: `${n}/v1`, version: 'v1' }],
      preferredVersion: { groupVersion: `${n}/v1`, version: 'v1' },
    })),
  });

function fleetOf(clusters: Record<string, Cluster>, strict = false) {
  const fleet = fakeFleet(clusters, { strict });
  const ask = async (path: string, init?: RequestInit) => {
    const res = await serve(
      (c, info) =>
        discoveryRoute(c, fleet.deps, info, fleet.targets, classifyDiscovery(info.kubePath) as DocumentPath),
      `http://fleet${path}`,
      init,
    );
    const text = await res.text();
    return { res, body: text ? JSON.parse(text) : undefined };
  };
  return { fleet, ask };
}

describe('discoveryRoute', () => {
  it('merges /apis from every cluster, and serves the merged document from the cache after', async () => {
    const { fleet, ask } = fleetOf({ east: () => groups('apps'), west: () => groups('apps', 'batch') });
    const first = await ask('/apis');
    expect(first.res.status).toBe(200);
    expect(first.body.groups.map((g: any) => g.name)).toEqual(['apps', 'batch']);
    expect(first.res.headers.get('etag')).toBeTruthy();
    const again = await ask('/apis', { headers: { 'If-None-Match': first.res.headers.get('etag')! } });
    expect(again.res.status).toBe(304);
    expect(fleet.sent).toHaveLength(2);
  });

  it('leaves a failed cluster out with a Warning, uncached and not cacheable', async () => {
    const { fleet, ask } = fleetOf({ east: () => groups('apps'), west: () => 'unreachable' });
    const r = await ask('/apis');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('warning')).toContain('cluster west');
    expect(r.res.headers.get('cache-control')).toBe('no-cache, private');
    await ask('/apis');
    expect(fleet.sent).toHaveLength(4);
  });

  it('a partial answer has no ETag and is never a 304, so no client keeps its Warnings once the cluster is back', async () => {
    // west serves nothing east does not: the fleet's document is the same with or without it
    const whole = await fleetOf({ east: () => groups('apps'), west: () => groups('apps') }).ask('/apis');
    const etag = whole.res.headers.get('etag')!;
    expect([whole.res.status, whole.res.headers.get('warning')]).toEqual([200, null]);
    const { ask } = fleetOf({ east: () => groups('apps'), west: () => 'unreachable' });
    for (const init of [undefined, { headers: { 'If-None-Match': etag } }]) {
      const partial = await ask('/apis', init);
      expect(partial.res.status).toBe(200);
      expect(partial.body.groups.map((g: any) => g.name)).toEqual(['apps']);
      expect(partial.res.headers.get('warning')).toContain('cluster west');
      expect(partial.res.headers.get('etag')).toBeNull();
    }
  });

  it('answers with the reachable clusters in strict mode too (kubectl must stay usable), relays a shared refusal', async () => {
    const strict = fleetOf({ east: () => groups('apps'), west: () => 'unreachable' }, true);
    const partial = await strict.ask('/apis');
    expect(partial.res.status).toBe(200);
    expect(partial.body.groups.map((g: any) => g.name)).toEqual(['apps']);
    expect(partial.res.headers.get('warning')).toContain('cluster west');
    const version = fleetOf(
      { karmada: () => 'unreachable', east: () => json({ gitVersion: 'v1.31.0' }) },
      true,
    );
    const v = await version.ask('/version');
    expect([v.res.status, v.body.gitVersion]).toEqual([200, 'v1.31.0']);
    expect(v.res.headers.get('warning')).toContain('cluster karmada');
    const none = fleetOf({ east: () => 'unreachable' }, true);
    expect((await none.ask('/apis')).res.status).toBe(503);
    const denied = fleetOf({
      east: () => status(403, 'Forbidden', 'forbidden'),
      west: () => status(403, 'Forbidden', 'forbidden'),
    });
    const r = await denied.ask('/apis');
    expect([r.res.status, r.body.reason]).toEqual([403, 'Forbidden']);
  });

  it('a cluster that cannot be asked keeps its APIs as last seen: Stale in aggregated, listed in legacy', async () => {
    const AGG = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const aggregated = (...names: string[]) =>
      new Response(
        JSON.stringify({
          kind: 'APIGroupDiscoveryList',
          apiVersion: 'apidiscovery.k8s.io/v2',
          metadata: {},
          items: names.map((n) => ({
            metadata: { name: n },
            versions: [
              {
                version: 'v1',
                resources: [
                  {
                    resource: `${n.split('.')[0]}s`,
                    responseKind: { group: '', version: '', kind: 'Thing' },
                    scope: 'Namespaced',
                    singularResource: n.split('.')[0],
                    verbs: ['get', 'list'],
                  },
                ],
                freshness: 'Current',
              },
            ],
          })),
        }),
        { headers: { 'Content-Type': AGG } },
      );
    let westDown = false;
    const notServed = () => status(404, 'NotFound', 'the server could not find the requested resource');
    const { ask } = fleetOf({
      east: (r) => (r.path === '/apis' ? aggregated('apps') : notServed()),
      west: (r) =>
        westDown ? 'unreachable' : r.path === '/apis' ? aggregated('apps', 'widget.example.io') : notServed(),
    });
    const before = await ask('/apis', { headers: { Accept: AGG } });
    expect(before.res.headers.get('warning')).toBeNull();
    westDown = true;
    // another form of the document (not in the merged-answer cache): west as last seen
    const v2beta1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
    const after = await ask('/apis', { headers: { Accept: v2beta1 } });
    expect(after.res.status).toBe(200);
    expect(after.res.headers.get('warning')).toMatch(
      /^299 - "cluster west: connection refused; its APIs as last seen \d+s ago \(marked Stale in aggregated discovery\)"$/,
    );
    expect(after.body.apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    const fresh = Object.fromEntries(
      after.body.items.map((g: any) => [g.metadata.name, g.versions.map((v: any) => v.freshness)]),
    );
    // apps: east answered it now; widget.example.io: only west's kept copy
    expect(fresh).toEqual({ apps: ['Current'], 'widget.example.io': ['Stale'] });
    const legacy = await ask('/apis/widget.example.io/v1');
    expect(legacy.res.status).toBe(200);
    expect(legacy.body.resources.map((r: any) => r.name)).toEqual(['widgets']);
    expect(legacy.res.headers.get('warning')).toContain(
      'cluster west: connection refused; its APIs as last seen',
    );
    // a group west was not seen serving, and east does not serve: kube's 404, as last seen
    const nope = await ask('/apis/nope.example.io/v1');
    expect(nope.res.status).toBe(404);
    expect(nope.res.headers.get('warning')).toContain('cluster west');
  });

  it('leaves out a cluster whose document goes silent past the body-idle timeout', async () => {
    const silent: Cluster = () =>
      new Response(
        new ReadableStream({
          start: (c) => c.enqueue(new TextEncoder().encode('{"kind":"APIGroupList",')),
          pull: () => new Promise(() => {}),
        }),
        { headers: { 'Content-Type': 'application/json' } },
      );
    const { fleet, ask } = fleetOf({ east: () => groups('apps'), west: silent });
    (fleet.deps.config as any).timeouts = { bodyIdleSeconds: 0.2 };
    const r = await ask('/apis');
    expect(r.res.status).toBe(200);
    expect(r.body.groups.map((g: any) => g.name)).toEqual(['apps']);
    expect(r.res.headers.get('warning')).toContain(
      'cluster west: reading the response: its body sent nothing',
    );
  });

  it('answers /version from the control plane first, and refuses other methods (405)', async () => {
    const version =
      (v: string): Cluster =>
      () =>
        json({ gitVersion: v });
    const { fleet, ask } = fleetOf({ karmada: version('v1.14.0'), east: version('v1.31.0') });
    expect((await ask('/version')).body.gitVersion).toBe('v1.14.0');
    expect(fleet.sent).toEqual(['karmada GET /version']);
    expect((await ask('/apis', { method: 'POST' })).res.status).toBe(405);
  });
});

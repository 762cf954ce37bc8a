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

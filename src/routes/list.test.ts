import { describe, expect, it } from 'vitest';
import { decodeComposite } from '../merge/rv.ts';
import { listRoute } from './list.ts';
import { type Cluster, fakeFleet, json, serve, status } from './testing.ts';

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const podList = (rv: string, ...items: unknown[]) =>
  json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items });

async function list(clusters: Record<string, Cluster>, query = '', opts: { strict?: boolean } = {}) {
  const fleet = fakeFleet(clusters, opts);
  const res = await serve(
    (c, info) => listRoute(c, fleet.deps, info, fleet.targets, undefined),
    `http://fleet/api/v1/pods${query}`,
  );
  return { fleet, res, text: await res.text() };
}

describe('listRoute', () => {
  it('merges the clusters in fleet order under fleet names and one composite RV', async () => {
    const { res, text } = await list({
      east: () => podList('10', pod('a', '9')),
      west: () => podList('20', pod('b', '19')),
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(text);
    expect(body.items.map((i: any) => i.metadata.name)).toEqual([
      'a.clusterspace.east',
      'b.clusterspace.west',
    ]);
    const rv = decodeComposite(body.metadata.resourceVersion, ['east', 'west']);
    expect(rv.ok && Object.fromEntries(rv.rvs)).toEqual({ east: '10', west: '20' });
  });

  it('sends each cluster its planned query and no fleet selector terms', async () => {
    const { fleet } = await list(
      { east: () => podList('1'), west: () => podList('2') },
      '?labelSelector=fleet.karmada.io%2Fcluster%3Dwest%2Capp%3Dweb&limit=5',
    );
    expect(fleet.sent).toEqual(['west GET /api/v1/pods?labelSelector=app%3Dweb&limit=5']);
  });

  it('skips a cluster that does not serve the resource and warns about one that fails', async () => {
    const { res, text } = await list({
      east: () => podList('1', pod('a', '1')),
      west: () => new Response('404 page not found', { status: 404 }),
      north: () => 'unreachable',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(text).items).toHaveLength(1);
    expect(res.headers.get('warning')).toBe('299 - "cluster north: connection refused"');
  });

  it('fails the list in strict mode when a cluster fails, and when nobody answers', async () => {
    const strict = await list({ east: () => podList('1'), north: () => 'unreachable' }, '', { strict: true });
    expect(strict.res.status).toBe(503);
    expect(JSON.parse(strict.text).message).toContain('strict mode');
    const none = await list({ east: () => 'unreachable' });
    expect(none.res.status).toBe(503);
  });

  it("answers a cluster's 410 (its RV compacted away) as the list's, and a caller's 403 as is", async () => {
    const gone = await list({ east: () => podList('1'), west: () => status(410, 'Expired', 'too old') });
    expect(gone.res.status).toBe(410);
    const denied = await list({ east: () => status(403, 'Forbidden', 'pods is forbidden') });
    expect(denied.res.status).toBe(403);
    expect(JSON.parse(denied.text).reason).toBe('Forbidden');
  });

  it('refuses a bad selector or continue token before asking anyone', async () => {
    for (const q of ['?labelSelector=a%20in%20(', '?continue=garbage']) {
      const { res, fleet } = await list({ east: () => podList('1') }, q);
      expect(res.status).toBe(400);
      expect(fleet.sent).toEqual([]);
    }
  });

  it('pages across clusters: a token from one page resumes where it stopped', async () => {
    const clusters: Record<string, Cluster> = {
      east: (r) =>
        r.path.includes('continue=E2')
          ? podList('10', pod('c', '8'))
          : json({
              kind: 'PodList',
              apiVersion: 'v1',
              metadata: { resourceVersion: '10', continue: 'E2' },
              items: [pod('a', '5'), pod('b', '6')],
            }),
      west: () => podList('20', pod('d', '19')),
    };
    const first = JSON.parse((await list(clusters, '?limit=2')).text);
    expect(first.items.map((i: any) => i.metadata.name)).toEqual([
      'a.clusterspace.east',
      'b.clusterspace.east',
    ]);
    const next = await list(clusters, `?limit=2&continue=${first.metadata.continue}`);
    // east resumes from its own token; west starts at the RV the first page saw there
    expect(next.fleet.sent).toEqual([
      'east GET /api/v1/pods?continue=E2&limit=2',
      'west GET /api/v1/pods?resourceVersion=20&resourceVersionMatch=Exact&limit=2',
    ]);
    const page = JSON.parse(next.text);
    expect(page.items.map((i: any) => i.metadata.name)).toEqual([
      'c.clusterspace.east',
      'd.clusterspace.west',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { decodeName, encodeName } from '../merge/names/index.ts';
import { forgetShortened } from '../merge/names/memo.ts';
import { parseRequestInfo } from '../request/info.ts';
import { forgetMisses, resolveShortenedNames } from './locate.ts';
import { type Cluster, fakeFleet, json, serve, status } from './testing.ts';
import { writeRoute } from './write.ts';

/** as a client sends it for a create (no resourceVersion) */
const newCm = (name: string) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name, namespace: 'default' },
});
/** as a cluster answers it (its own RV) */
const cm = (name: string) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name, namespace: 'default', resourceVersion: '3' },
});
const echo: Cluster = async (r) => json(JSON.parse(new TextDecoder().decode(r.body as Uint8Array)), 201);
const missing = () =>
  status(404, 'NotFound', 'configmaps "web" not found', { name: 'web', kind: 'configmaps' });

async function write(
  clusters: Record<string, Cluster>,
  path: string,
  init: RequestInit,
  plainNameCluster?: string,
  prefix = '',
) {
  const fleet = fakeFleet(clusters);
  const res = await serve(
    (c, info) =>
      writeRoute(
        c,
        fleet.deps,
        info,
        fleet.targets.filter((t) => !prefix || prefix.endsWith(`/${t.cluster}`)),
        plainNameCluster,
      ),
    `http://fleet${prefix}/api/v1/namespaces/default/configmaps${path}`,
    init,
  );
  const text = await res.text();
  return { fleet, res, body: text ? JSON.parse(text) : undefined };
}

const post = (body: unknown, type = 'application/json'): RequestInit => ({
  method: 'POST',
  body: typeof body === 'string' ? body : JSON.stringify(body),
  headers: { 'Content-Type': type },
});

describe('writeRoute: create', () => {
  it('creates in the cluster the fleet name names, with the plain name, answering the fleet name', async () => {
    const { fleet, res, body } = await write(
      { east: echo, west: echo },
      '',
      post(newCm('web.clusterspace.west')),
    );
    expect(fleet.sent).toEqual(['west POST /api/v1/namespaces/default/configmaps']);
    expect(res.status).toBe(201);
    expect(body.metadata.name).toBe('web.clusterspace.west');
  });

  it('refuses a plain name with federation off (400), and an unreadable body (415), asking no one', async () => {
    const plain = await write({ east: echo, west: echo }, '', post(newCm('web')));
    expect(plain.res.status).toBe(400);
    const csv = await write({ east: echo }, '', post('a,b', 'text/csv'), 'east');
    expect(csv.res.status).toBe(415);
    expect([...plain.fleet.sent, ...csv.fleet.sent]).toEqual([]);
  });

  it('refuses a body over the limit with 413 and closes the connection', async () => {
    const big = JSON.stringify({
      ...newCm('web.clusterspace.east'),
      data: { x: 'y'.repeat(3 * 1024 * 1024) },
    });
    const { res, fleet } = await write({ east: echo }, '', post(big));
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(fleet.sent).toEqual([]);
  });
});

describe('writeRoute: named writes', () => {
  it('finds the owner of a plain name first, then writes there only', async () => {
    const owner: Cluster = () => json(cm('web'));
    const { fleet, res } = await write({ east: missing, west: owner }, '/web', {
      method: 'DELETE',
    });
    expect(res.status).toBe(200);
    expect(fleet.sent).toEqual([
      'east GET /api/v1/namespaces/default/configmaps/web',
      'west GET /api/v1/namespaces/default/configmaps/web',
      'west DELETE /api/v1/namespaces/default/configmaps/web',
    ]);
  });

  it('is a 409 when the plain name is in several clusters, and writes nowhere', async () => {
    const { fleet, res, body } = await write(
      { east: () => json(cm('web')), west: () => json(cm('web')) },
      '/web',
      {
        method: 'DELETE',
      },
    );
    expect([res.status, body.reason]).toEqual([409, 'Conflict']);
    expect(fleet.sent.filter((s) => s.includes('DELETE'))).toEqual([]);
  });

  it('refuses a patch that does not parse before asking anyone', async () => {
    const { fleet, res } = await write({ west: echo }, '/web.clusterspace.west', {
      method: 'PATCH',
      body: '{',
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(400);
    expect(fleet.sent).toEqual([]);
  });
});

describe('writeRoute: deletecollection', () => {
  it('is a 405 across the fleet', async () => {
    const { res, fleet } = await write({ east: echo, west: echo }, '', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(fleet.sent).toEqual([]);
  });

  it("goes to the clusterspace's one cluster with the fleet's selectors resolved", async () => {
    const list = () =>
      json({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: [cm('a')] });
    const { res, fleet, body } = await write(
      { east: list, west: list },
      '?labelSelector=fleet.karmada.io%2Fcluster%3Deast%2Capp%3Dweb',
      { method: 'DELETE' },
      'east',
      '/clusterspaces/east',
    );
    expect(res.status).toBe(200);
    expect(fleet.sent).toEqual(['east DELETE /api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb']);
    // a scope that names its cluster answers with plain names, as that cluster itself would (docs/names.md)
    expect(body.items[0].metadata.name).toBe('a');
  });
});

describe('a create through the fleet forgets that its shortened name was found nowhere', () => {
  it('found nowhere, then created: the next lookup asks the cluster again', async () => {
    forgetMisses();
    const long = `cfg-${'z'.repeat(240)}`;
    const short = encodeName(long, 'member1');
    let objects: string[] = [];
    const member1: Cluster = async (r) => {
      if (r.method === 'POST') {
        const o = JSON.parse(new TextDecoder().decode(r.body as Uint8Array));
        objects.push(o.metadata.name);
        return json({ ...o, metadata: { ...o.metadata, resourceVersion: '4' } }, 201);
      }
      return json({
        kind: 'PartialObjectMetadataList',
        metadata: {},
        items: objects.map((name) => ({ metadata: { name } })),
      });
    };
    const fleet = fakeFleet({ member1 });
    const lookUp = async () => {
      const path = `/api/v1/namespaces/default/configmaps/${short}`;
      const info = parseRequestInfo('GET', path, new URLSearchParams());
      return resolveShortenedNames(fleet.deps, info, new Request(`http://fleet${path}`), fleet.targets);
    };
    const lists = () => fleet.sent.filter((l) => l.startsWith('member1 GET')).length;
    forgetShortened();
    await lookUp();
    await lookUp();
    expect(lists(), 'the miss is kept').toBe(1);

    const created = await serve(
      (c, info) => writeRoute(c, fleet.deps, info, fleet.targets, undefined),
      'http://fleet/api/v1/namespaces/default/configmaps',
      post(newCm(`${long}.clusterspace.member1`)),
    );
    expect(created.status).toBe(201);
    // this instance may have forgotten the name itself meanwhile (its memo is bounded): asked, and found
    forgetShortened();
    await lookUp();
    expect(lists()).toBe(2);
    expect(decodeName(short)).toEqual({ name: long, cluster: 'member1' });
    objects = [];
  });
});

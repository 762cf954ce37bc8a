/**
 * Shared reads through the whole fleet, in-process (no sockets): simulated clusters enforcing RBAC on the
 * impersonated caller, the fleet's app in front, the upstream transport behind shared reads. What may come
 * from the cache (resourceVersion=0) does, per caller; what may not (consistent reads, exact RVs, writes,
 * watches) always reaches the clusters, which count every request they get.
 */
import { describe, expect, it } from 'vitest';
import { createSimFleet, type SimCluster } from '../../sim/index.ts';
import type { SimRule } from '../../sim/rbac.ts';
import { createApp } from '../../src/app.ts';
import { type FleetConfigInput, parseConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import type { Platform } from '../../src/platform/types.ts';
import { type ReadResult, sharedReadsOver } from '../../src/upstreams/cache/shared.ts';
import { fetchTransport } from '../../src/upstreams/transport.ts';

const READ_PODS: SimRule[] = [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }];
const ALL: SimRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

function fleet(cache: FleetConfigInput['cache'] = { ttlSeconds: 30 }) {
  const { karmada, members } = createSimFleet({ members: ['member1', 'member2'] });
  // alice may read pods in member1 only, bob in member2 only; carol may do anything anywhere
  for (const [name, sim] of members)
    sim.rbac = {
      users: {
        alice: name === 'member1' ? READ_PODS : [],
        bob: name === 'member2' ? READ_PODS : [],
        carol: ALL,
      },
    };
  const byHost = new Map<string, SimCluster>([['karmada.sim', karmada]]);
  for (const [n, s] of members) byHost.set(`${n}.sim`, s);
  const config = parseConfig({
    controlPlane: { server: 'http://karmada.sim' },
    federation: false,
    authentication: {
      staticTokens: { csv: 'tok-alice,alice,1,"dev"\ntok-bob,bob,2,"qa"\ntok-carol,carol,3,"ops"\n' },
    },
    members: {
      mode: 'static',
      clusters: [...members.keys()].map((n) => ({ name: n, server: `http://${n}.sim` })),
    },
    cache,
  });
  const results: ReadResult[] = [];
  const inner = fetchTransport(async (input, init) =>
    byHost.get(new URL(input).host)!.fetch(new Request(input, init)),
  );
  const platform: Platform = {
    name: 'worker',
    files: {
      readText() {
        throw new Error('no files in-process');
      },
    },
    transport: sharedReadsOver(inner, config.cache, {
      observer: { read: (_c, r) => results.push(r), detached: () => {} },
    }),
    gzipResponses: false,
    maxConnectionsPerRequest: Number.POSITIVE_INFINITY,
    checkEndpoint() {},
  };
  const app = createApp(buildFleet(config, platform));
  const as =
    (who: string) =>
    async (path: string, init: RequestInit = {}): Promise<Response> =>
      app.fetch(
        new Request(`http://fleet.test${path}`, {
          ...init,
          headers: { Authorization: `Bearer tok-${who}`, ...(init.headers as Record<string, string>) },
        }),
      );
  /** list requests a member saw for pods with this RV parameter (and, if given, as this user) */
  const lists = (member: string, rv: string | null, user?: string) =>
    members.get(member)!.requests.filter((r) => {
      const u = new URL(r.url);
      if (user !== undefined && r.headers['impersonate-user'] !== user) return false;
      return (
        r.method === 'GET' && u.pathname === '/api/v1/pods' && u.searchParams.get('resourceVersion') === rv
      );
    }).length;
  return { members, as, lists, results };
}

const names = async (res: Response) => {
  expect(res.status).toBe(200);
  const list = (await res.json()) as {
    items: Array<{ metadata: { name: string } }>;
    metadata: { resourceVersion: string };
  };
  return { names: list.items.map((i) => i.metadata.name).sort(), rv: list.metadata.resourceVersion };
};

describe('shared reads through the fleet', () => {
  it('identities never mix: two callers with different RBAC each get their own cached answer', async () => {
    const f = fleet();
    const alice = f.as('alice');
    const bob = f.as('bob');
    const a1 = await names(await alice('/api/v1/pods?resourceVersion=0'));
    const b1 = await names(await bob('/api/v1/pods?resourceVersion=0'));
    expect(a1.names.length).toBeGreaterThan(0);
    expect(a1.names.every((n) => n.endsWith('.clusterspace.member1'))).toBe(true);
    expect(b1.names.every((n) => n.endsWith('.clusterspace.member2'))).toBe(true);
    const served = () => ({ alice: f.lists('member1', '0', 'alice'), bob: f.lists('member2', '0', 'bob') });
    const refused = () => ({ alice: f.lists('member2', '0', 'alice'), bob: f.lists('member1', '0', 'bob') });
    expect(served()).toEqual({ alice: 1, bob: 1 });
    // again: from the cache, each caller's own, with the RV each was served with
    const a2 = await names(await alice('/api/v1/pods?resourceVersion=0'));
    const b2 = await names(await bob('/api/v1/pods?resourceVersion=0'));
    expect(a2).toEqual(a1);
    expect(b2).toEqual(b1);
    expect(served()).toEqual({ alice: 1, bob: 1 });
    // a refusal (403) is never kept: asked again each time, for each caller
    expect(refused()).toEqual({ alice: 2, bob: 2 });
    expect(f.results.filter((r) => r === 'hit').length).toBe(2);
    const w = (await alice('/api/v1/pods?resourceVersion=0')).headers.get('warning') ?? '';
    expect(w).toContain('member2');
  });

  it('consistent reads (RV "") and exact RVs always reach every cluster', async () => {
    const f = fleet();
    const carol = f.as('carol');
    const { rv } = await names(await carol('/api/v1/pods'));
    for (let i = 0; i < 3; i++) await names(await carol('/api/v1/pods'));
    expect(f.lists('member1', null)).toBe(4);
    expect(f.lists('member2', null)).toBe(4);
    for (let i = 0; i < 3; i++)
      await names(await carol(`/api/v1/pods?resourceVersion=${encodeURIComponent(rv)}`));
    for (const m of ['member1', 'member2']) {
      const own = f.members.get(m)!.requests.filter((r) => {
        const q = new URL(r.url).searchParams.get('resourceVersion');
        return r.method === 'GET' && q !== null && q !== '0';
      });
      expect(own.length).toBe(3);
    }
    expect(f.results).toEqual([]); // none of them was even considered for sharing
  });

  it('a write is visible to the next consistent read at once, though an RV=0 read was kept before it', async () => {
    const f = fleet();
    const carol = f.as('carol');
    const before = await names(await carol('/api/v1/pods?resourceVersion=0'));
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'fresh' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const created = await carol('/clusterspaces/member1/api/v1/namespaces/default/pods', {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(created.status).toBe(201);
    const consistent = await names(await carol('/api/v1/pods'));
    expect(consistent.names).toContain('fresh.clusterspace.member1');
    // any version is fine at RV=0: the kept answer is one the clusters gave, from before the write
    const kept = await names(await carol('/api/v1/pods?resourceVersion=0'));
    expect(kept).toEqual(before);
    // and a watch from its RV resumes where it was served: the write arrives as an event
    const watch = await carol(`/api/v1/pods?watch=true&resourceVersion=${encodeURIComponent(kept.rv)}`);
    const reader = watch.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    while (!text.includes('"fresh.clusterspace.member1"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    await reader.cancel();
    expect(text).toContain('"ADDED"');
    expect(text).toContain('fresh.clusterspace.member1');
  });

  it('300 concurrent RV=0 lists cost each cluster one upstream list', async () => {
    const f = fleet();
    const carol = f.as('carol');
    const all = await Promise.all(
      [...Array(300)].map(() => carol('/api/v1/pods?resourceVersion=0').then(names)),
    );
    // every caller got the one answer, with the composite RV it was served at
    expect(new Set(all.map((a) => a.rv)).size).toBe(1);
    expect(new Set(all.map((a) => a.names.join())).size).toBe(1);
    // the first asked; the others joined its call in flight, or found its answer kept
    expect(f.lists('member1', '0')).toBe(1);
    expect(f.lists('member2', '0')).toBe(1);
    expect(f.results.filter((r) => r === 'miss').length).toBe(2);
  });
});

/**
 * Shortened fleet names looked up in their cluster (locate.ts `resolveShortenedNames`): only when a
 * request carries one this instance does not know, as the caller, a page at a time until found.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rewriteFieldSelectorNames } from '../merge/fieldnames.ts';
import { decodeName, encodeName } from '../merge/names/index.ts';
import { forgetShortened, rememberShortened } from '../merge/names/memo.ts';
import { parseRequestInfo } from '../request/info.ts';
import type { Target } from '../upstreams/fanout.ts';
import {
  forgetMissedName,
  forgetMisses,
  LOOKUP_MAX_PAGES,
  MISS_TTL_MS,
  resolveShortenedNames,
  undialed,
} from './locate.ts';
import { type Cluster, fakeFleet, json, status } from './testing.ts';

const LONG = `cfg-${'a'.repeat(240)}`;
const OTHERS = Array.from({ length: 1200 }, (_, i) => `other-${i}-${'b'.repeat(230)}`);

/** member1's ConfigMaps in default, in pages of the asked limit, LONG last */
const pages: Cluster = ({ path }) => {
  const u = new URL(path, 'http://x');
  if (u.pathname !== '/api/v1/namespaces/default/configmaps') return status(404, 'NotFound', 'no');
  const all = [...OTHERS, LONG];
  const at = Number(u.searchParams.get('continue') || '0');
  const limit = Number(u.searchParams.get('limit'));
  const next = at + limit < all.length ? String(at + limit) : '';
  return json({
    kind: 'PartialObjectMetadataList',
    metadata: next ? { continue: next } : {},
    items: all.slice(at, at + limit).map((name) => ({ metadata: { name, namespace: 'default' } })),
  });
};

function request(path: string, query = '', method = 'GET') {
  const info = parseRequestInfo(method, path, new URLSearchParams(query));
  return { info, req: new Request(`http://fleet${path}${query ? `?${query}` : ''}`, { method }) };
}

beforeEach(() => {
  forgetShortened();
  forgetMisses();
});

describe('resolveShortenedNames', () => {
  it('asks no one for a request without a shortened name, or one already known', async () => {
    const f = fakeFleet({ member1: pages });
    for (const [p, q] of [
      ['/api/v1/namespaces/default/configmaps/web.clusterspace.member1', ''],
      ['/api/v1/namespaces/default/configmaps', 'fieldSelector=metadata.name%3Dweb.clusterspace.member1'],
    ] as const) {
      const { info, req } = request(p, q);
      expect(await resolveShortenedNames(f.deps, info, req, f.targets)).toBeUndefined();
    }
    const short = encodeName(LONG, 'member1'); // shown once: known
    const { info, req } = request(`/api/v1/namespaces/default/configmaps/${short}`);
    expect(await resolveShortenedNames(f.deps, info, req, f.targets)).toBeUndefined();
    expect(f.sent).toEqual([]);
  });

  it('a URL name: lists metadata a page at a time until found', async () => {
    const short = encodeName(LONG, 'member1');
    forgetShortened();
    const f = fakeFleet({ member1: pages });
    const { info, req } = request(`/api/v1/namespaces/default/configmaps/${short}`);
    expect(await resolveShortenedNames(f.deps, info, req, f.targets)).toBeUndefined();
    expect(f.sent).toEqual([
      'member1 GET /api/v1/namespaces/default/configmaps?limit=500',
      'member1 GET /api/v1/namespaces/default/configmaps?limit=500&continue=500',
      'member1 GET /api/v1/namespaces/default/configmaps?limit=500&continue=1000',
    ]);
    expect(decodeName(short)).toEqual({ name: LONG, cluster: 'member1' });
  });

  it('a name nothing has stays unresolved; the pages asked are bounded', async () => {
    let asked = 0;
    const endless: Cluster = () => {
      asked++;
      return json({ metadata: { continue: 'more' }, items: [{ metadata: { name: `x${asked}` } }] });
    };
    const f = fakeFleet({ member1: endless });
    const missing = encodeName(`${LONG}-gone`, 'member1');
    forgetShortened();
    const { info, req } = request(`/api/v1/namespaces/default/configmaps/${missing}`);
    expect(await resolveShortenedNames(f.deps, info, req, f.targets)).toBeUndefined();
    expect(asked).toBe(LOOKUP_MAX_PAGES);
    expect(decodeName(missing).unresolved).toBe(true);
  });

  it('the cluster’s refusal of the lookup is the answer for a URL name', async () => {
    const f = fakeFleet({ member1: () => status(403, 'Forbidden', 'configmaps is forbidden: cannot list') });
    const short = encodeName(LONG, 'member1');
    forgetShortened();
    const { info, req } = request(`/api/v1/namespaces/default/configmaps/${short}`);
    const s = await resolveShortenedNames(f.deps, info, req, f.targets);
    expect([s?.code, s?.message]).toEqual([403, 'configmaps is forbidden: cannot list']);
  });

  it('field selectors: metadata.name in the listed collection, a pod’s node among nodes', async () => {
    const node = `node-${'n'.repeat(240)}`;
    const f = fakeFleet({
      member1: ({ path }) =>
        path.startsWith('/api/v1/nodes')
          ? json({ items: [{ metadata: { name: node } }] })
          : pages({ path, method: 'GET', headers: new Headers() }),
    });
    const cm = encodeName(LONG, 'member1');
    const n = encodeName(node, 'member1');
    forgetShortened();
    const a = request(
      '/api/v1/namespaces/default/configmaps',
      `fieldSelector=${encodeURIComponent(`metadata.name=${cm}`)}`,
    );
    expect(await resolveShortenedNames(f.deps, a.info, a.req, f.targets)).toBeUndefined();
    const b = request('/api/v1/pods', `fieldSelector=${encodeURIComponent(`spec.nodeName=${n}`)}&watch=true`);
    expect(await resolveShortenedNames(f.deps, b.info, b.req, f.targets)).toBeUndefined();
    expect(f.sent.at(-1)).toBe('member1 GET /api/v1/nodes?limit=500');
    // the plan then sends the cluster the names themselves
    const sent = (sel: string) => {
      const r = rewriteFieldSelectorNames(sel);
      return r.matchesNothing ? undefined : [r.cluster, r.forwardFor('member1')];
    };
    expect(sent(`metadata.name=${cm}`)).toEqual(['member1', `metadata.name=${LONG}`]);
    expect(sent(`spec.nodeName=${n}`)).toEqual(['member1', `spec.nodeName=${node}`]);
  });

  it('events: the object a shortened involvedObject.name stands for is found in the events', async () => {
    const f = fakeFleet({
      member1: () => json({ items: [{ metadata: { name: 'e1' }, involvedObject: { name: LONG } }] }),
    });
    const short = encodeName(LONG, 'member1');
    forgetShortened();
    const q = `fieldSelector=${encodeURIComponent(`involvedObject.name=${short},involvedObject.namespace=default`)}`;
    const { info, req } = request('/api/v1/namespaces/default/events', q);
    expect(await resolveShortenedNames(f.deps, info, req, f.targets)).toBeUndefined();
    expect(f.sent).toEqual(['member1 GET /api/v1/namespaces/default/events?limit=500']);
    expect(decodeName(short)).toEqual({ name: LONG, cluster: 'member1' });
  });

  it('two names with one shortened name: 409, never a guess', async () => {
    const f = fakeFleet({ member1: pages });
    const short = encodeName(LONG, 'member1');
    rememberShortened(short, `${LONG}-twin`);
    const { info, req } = request(`/api/v1/namespaces/default/configmaps/${short}`);
    const s = await resolveShortenedNames(f.deps, info, req, f.targets);
    expect(s?.code).toBe(409);
    expect(s?.message).toContain('stands for several objects');
  });
});

describe('made-up shortened names: a miss is remembered briefly', () => {
  afterEach(() => vi.useRealTimers());
  const endless = (): { cluster: Cluster; asked: () => number } => {
    let n = 0;
    return {
      cluster: () => {
        n++;
        return json({ metadata: { continue: 'more' }, items: [{ metadata: { name: `x${n}` } }] });
      },
      asked: () => n,
    };
  };
  const ask = async (f: ReturnType<typeof fakeFleet>, name: string, query = '') => {
    const { info, req } = query
      ? request('/api/v1/namespaces/default/configmaps', query)
      : request(`/api/v1/namespaces/default/configmaps/${name}`);
    return resolveShortenedNames(f.deps, info, req, f.targets);
  };

  it('the same made-up name again: no upstream call until the miss expires', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const up = endless();
    const f = fakeFleet({ member1: up.cluster });
    const madeUp = encodeName(`${LONG}-made-up`, 'member1');
    forgetShortened();
    expect(await ask(f, madeUp)).toBeUndefined();
    expect(up.asked()).toBe(LOOKUP_MAX_PAGES);
    for (let i = 0; i < 5; i++) expect(await ask(f, madeUp)).toBeUndefined();
    expect(up.asked(), 'repeated gets cost no pages').toBe(LOOKUP_MAX_PAGES);
    expect(decodeName(madeUp).unresolved).toBe(true);
    // the same question from a list's field selector (metadata.name in the same collection): kept too
    const q = `fieldSelector=${encodeURIComponent(`metadata.name=${madeUp}`)}`;
    await ask(f, '', q);
    expect(up.asked()).toBe(LOOKUP_MAX_PAGES);
    // another question about the name (events naming it): asked
    const { info, req } = request(
      '/api/v1/namespaces/default/events',
      `fieldSelector=${encodeURIComponent(`involvedObject.name=${madeUp}`)}`,
    );
    await resolveShortenedNames(f.deps, info, req, f.targets);
    expect(up.asked()).toBe(2 * LOOKUP_MAX_PAGES);
    // past the TTL: asked again
    vi.advanceTimersByTime(MISS_TTL_MS - 10);
    await ask(f, madeUp);
    expect(up.asked()).toBe(2 * LOOKUP_MAX_PAGES);
    vi.advanceTimersByTime(20);
    await ask(f, madeUp);
    expect(up.asked()).toBe(3 * LOOKUP_MAX_PAGES);
  });

  it('forgotten when the name is created through the fleet; a refusal or a found name is never kept', async () => {
    const up = endless();
    const f = fakeFleet({ member1: up.cluster });
    const madeUp = encodeName(`${LONG}-later`, 'member1');
    forgetShortened();
    await ask(f, madeUp);
    await ask(f, madeUp);
    expect(up.asked()).toBe(LOOKUP_MAX_PAGES);
    forgetMissedName(madeUp);
    await ask(f, madeUp);
    expect(up.asked()).toBe(2 * LOOKUP_MAX_PAGES);

    // refused: asked every time (the refusal is the answer, and may change with RBAC)
    const refusing = fakeFleet({ member1: () => status(403, 'Forbidden', 'cannot list') });
    const other = encodeName(`${LONG}-refused`, 'member1');
    forgetShortened();
    expect((await ask(refusing, other))?.code).toBe(403);
    expect((await ask(refusing, other))?.code).toBe(403);
    expect(refusing.sent.length).toBe(2);
  });
});

describe("undialed: Karmada's cluster proxy could not dial the member", () => {
  const proxied: Target = {
    cluster: 'member2',
    controlPlane: false,
    endpoint: {
      name: 'member2',
      server: 'https://karmada.example:5443/apis/cluster.karmada.io/v1alpha1/clusters/member2/proxy',
    } as Target['endpoint'],
  };
  const direct: Target = {
    ...proxied,
    endpoint: { ...proxied.endpoint, server: 'https://member2.example:6443' },
  };
  const proxy500 = () =>
    json(
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'dial tcp 172.18.0.3:6443: connect: connection refused',
        code: 500,
      },
      500,
    );

  it("the proxy's answer for an undialable member: a 503 naming the cluster", async () => {
    const res = await undialed(proxied, proxy500());
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: 503,
      reason: 'ServiceUnavailable',
      message:
        "cluster member2: unreachable through Karmada's cluster proxy: dial tcp 172.18.0.3:6443: connect: connection refused",
    });
  });

  it('the same answer from a member reached directly, a 500 with a reason, or a success: as they came', async () => {
    const same = await undialed(direct, proxy500());
    expect(same.status).toBe(500);
    expect(((await same.json()) as { message: string }).message).toMatch(/^dial tcp/);
    const own = await undialed(proxied, status(500, 'InternalError', 'dial tcp 10.0.0.1:2379: i/o timeout'));
    expect(own.status).toBe(500);
    expect(((await own.json()) as { reason: string }).reason).toBe('InternalError');
    const ok = json({ kind: 'ConfigMap' });
    expect(await undialed(proxied, ok)).toBe(ok);
  });
});

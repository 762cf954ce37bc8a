import { describe, expect, it } from 'vitest';
import { cacheSchema } from '../../config/schema.ts';
import type { ResolvedEndpoint } from '../endpoint.ts';
import type { Transport, UpstreamRequest } from '../transport.ts';
import { normalizedPath, readKind } from './policy.ts';
import { type ReadResult, SharedReads, servedFromCache } from './shared.ts';
import { type EdgeStore, MemoryStore, type StoredAnswer } from './store.ts';

const EP: ResolvedEndpoint = {
  name: 'member1',
  server: 'https://m1.example/prefix',
  insecureSkipTLSVerify: false,
  timeoutMs: 1000,
  poolKey: 'm1',
};

/** A cluster that answers every request with a new number, and remembers what it was asked. */
function counting() {
  const asked: UpstreamRequest[] = [];
  const t: Transport = {
    async send(_ep, req) {
      asked.push(req);
      return new Response(JSON.stringify({ n: asked.length }), {
        status: req.url.includes('missing') ? 404 : 200,
        headers: { 'content-type': 'application/json' },
      });
    },
  };
  return { t, asked };
}

function req(path: string, o: { as?: string; accept?: string; method?: string; auth?: string } = {}) {
  const headers = new Headers({ accept: o.accept ?? 'application/json' });
  if (o.auth) headers.set('authorization', o.auth);
  return {
    method: o.method ?? 'GET',
    url: EP.server + path,
    headers,
    headerLines: o.as ? [['Impersonate-User', o.as] as const] : [],
    body: null,
    timeoutMs: 1000,
  } satisfies UpstreamRequest;
}

function reads(t: Transport, over: Record<string, unknown> = {}, edge?: EdgeStore, now?: () => number) {
  const results: ReadResult[] = [];
  const r = new SharedReads(t, cacheSchema.parse({ ttlSeconds: 5, ...over }), {
    edge,
    now,
    observer: { read: (_c, x) => results.push(x), detached: () => {} },
  });
  return { r, results };
}

const n = async (res: Response) => ((await res.json()) as { n: number }).n;

describe('readKind: only what kube itself answers from a cache', () => {
  it.each([
    ['/api/v1/pods?resourceVersion=0', 'any-version'],
    ['/api/v1/namespaces/a/pods/p?resourceVersion=0', 'any-version'],
    [
      '/apis/apps/v1/deployments?resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=500',
      'any-version',
    ],
    ['/api', 'discovery'],
    ['/apis/apps/v1', 'discovery'],
    ['/version?timeout=32s', 'discovery'],
    ['/openapi/v3/apis/apps/v1?hash=abc', 'openapi'],
    ['/openapi/v2', 'openapi'],
  ])('%s → %s', (path, kind) => expect(readKind('GET', path)).toBe(kind));

  it.each([
    '/api/v1/pods',
    '/api/v1/pods?resourceVersion=',
    '/api/v1/pods?resourceVersion=123',
    '/api/v1/pods?resourceVersion=123&resourceVersionMatch=NotOlderThan',
    '/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact',
    '/api/v1/pods?resourceVersion=0&watch=true',
    '/api/v1/pods?resourceVersion=0&watch=1',
    '/api/v1/watch/pods?resourceVersion=0',
    '/apis/apps/v1/watch/namespaces/a/deployments?resourceVersion=0',
    '/api/v1/pods?resourceVersion=0&continue=abc',
    '/api/v1/namespaces/a/pods/p/log?resourceVersion=0',
    '/healthz',
  ])('%s is never shared', (path) => expect(readKind('GET', path)).toBeUndefined());

  it('writes are never shared', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'])
      expect(readKind(m, '/api/v1/pods?resourceVersion=0')).toBeUndefined();
  });

  it('keys ignore parameter order and `timeout`', () => {
    expect(normalizedPath('/api/v1/pods?resourceVersion=0&limit=5&timeout=32s')).toBe(
      normalizedPath('/api/v1/pods?limit=5&resourceVersion=0'),
    );
    expect(normalizedPath('/api?timeout=1s')).toBe('/api');
  });
});

describe('SharedReads', () => {
  it('keeps RV=0 answers for the TTL; a consistent read always reaches the cluster', async () => {
    let now = 1_000_000;
    const c = counting();
    const { r, results } = reads(c.t, {}, undefined, () => now);
    const p = '/api/v1/pods?resourceVersion=0';
    expect(await n(await r.send(EP, req(p, { as: 'alice' })))).toBe(1);
    const again = await r.send(EP, req(p, { as: 'alice' }));
    expect(servedFromCache(again)).toBe(true);
    expect(await n(again)).toBe(1);
    expect(results).toEqual(['miss', 'hit']);
    for (const q of ['/api/v1/pods', '/api/v1/pods?resourceVersion=7'])
      for (let i = 0; i < 2; i++) await r.send(EP, req(q, { as: 'alice' }));
    expect(c.asked.length).toBe(5);
    now += 5_000;
    expect(await n(await r.send(EP, req(p, { as: 'alice' })))).toBe(6); // expired: asked again
  });

  it('never mixes identities, media types or credentials', async () => {
    const c = counting();
    const { r } = reads(c.t);
    const p = '/api/v1/pods?resourceVersion=0';
    const a = await n(await r.send(EP, req(p, { as: 'alice' })));
    const b = await n(await r.send(EP, req(p, { as: 'bob' })));
    const t = await n(
      await r.send(EP, req(p, { as: 'alice', accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })),
    );
    const x = await n(await r.send(EP, req(p, { auth: 'Bearer caller-a' })));
    const y = await n(await r.send(EP, req(p, { auth: 'Bearer caller-b' })));
    expect(new Set([a, b, t, x, y]).size).toBe(5);
    expect(await n(await r.send(EP, req(p, { as: 'bob' })))).toBe(b);
    expect(await n(await r.send(EP, req(p, { auth: 'Bearer caller-b' })))).toBe(y);
    expect(c.asked.length).toBe(5);
  });

  it('only 200s are kept; identical concurrent reads share one call even with the cache off', async () => {
    const c = counting();
    const { r } = reads(c.t);
    // read to the end: a body still being read is a call in flight that the next asker would join
    await (await r.send(EP, req('/api/v1/missing?resourceVersion=0'))).text();
    await (await r.send(EP, req('/api/v1/missing?resourceVersion=0'))).text();
    expect(c.asked.length).toBe(2);

    const slow = counting();
    const gated: Transport = {
      async send(ep, q) {
        await new Promise((res) => setTimeout(res, 20));
        return slow.t.send(ep, q);
      },
    };
    const off = reads(gated, { ttlSeconds: 0 });
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => off.r.send(EP, req('/api/v1/pods?resourceVersion=0', { as: 'alice' }))),
    );
    expect(new Set(await Promise.all(answers.map(n)))).toEqual(new Set([1]));
    expect(off.results).toEqual(['miss', 'coalesced', 'coalesced', 'coalesced']);
    await (await off.r.send(EP, req('/api/v1/pods?resourceVersion=0', { as: 'alice' }))).text();
    expect(slow.asked.length).toBe(2); // nothing kept with ttlSeconds 0

    const none = reads(gated, { ttlSeconds: 0, coalesce: false });
    await Promise.all([0, 1].map(() => none.r.send(EP, req('/api/v1/pods?resourceVersion=0'))));
    expect(slow.asked.length).toBe(4);
  });

  it('asks discovery as the public identity when configured, resource reads always as the caller', async () => {
    const c = counting();
    const { r } = reads(c.t, { publicIdentity: { user: 'discovery-reader', groups: ['readers'] } });
    const a = await n(await r.send(EP, req('/apis', { as: 'alice' })));
    const b = await n(await r.send(EP, req('/apis', { as: 'bob' })));
    expect(b).toBe(a);
    expect(c.asked[0]!.headerLines).toEqual([
      ['Impersonate-User', 'discovery-reader'],
      ['Impersonate-Group', 'readers'],
    ]);
    await r.send(EP, req('/api/v1/pods?resourceVersion=0', { as: 'alice' }));
    expect(c.asked[1]!.headerLines).toEqual([['Impersonate-User', 'alice']]);
    // the caller's own credential (passthrough): nobody else to ask as
    await r.send(EP, req('/apis', { auth: 'Bearer caller-a' }));
    expect(c.asked[2]!.headerLines).toEqual([]);
  });

  it('reads and fills the runtime cache; another isolate (empty memory) hits it', async () => {
    const kept = new Map<string, StoredAnswer>();
    const edge: EdgeStore = {
      async get(k) {
        return kept.get(k);
      },
      async put(k, a) {
        kept.set(k, a);
      },
    };
    const c = counting();
    const first = reads(c.t, {}, edge);
    expect(await n(await first.r.send(EP, req('/api/v1/pods?resourceVersion=0')))).toBe(1);
    expect(kept.size).toBe(1);
    const second = reads(c.t, {}, edge);
    const res = await second.r.send(EP, req('/api/v1/pods?resourceVersion=0'));
    expect(await n(res)).toBe(1);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(second.results).toEqual(['hit']);
    expect(c.asked.length).toBe(1);
  });
});

describe('MemoryStore', () => {
  const answer = (size: number, at = 0): StoredAnswer => ({
    status: 200,
    headers: [],
    body: new Uint8Array(size),
    storedAt: at,
  });
  it('stays within its byte bound, evicting the least recently used; refuses answers over a quarter', () => {
    const s = new MemoryStore(10_000, 4096, () => 0);
    expect(s.set('huge', answer(2000))).toBe(false);
    for (const k of ['a', 'b', 'c', 'd']) s.set(k, answer(900));
    expect(s.get('a')).toBeDefined(); // a is now the most recently used
    s.set('e', answer(900));
    expect(s.bytes).toBeLessThanOrEqual(4096);
    expect(s.get('b')).toBeUndefined();
    expect(s.get('a')).toBeDefined();
  });
});

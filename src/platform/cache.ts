/**
 * The Workers side of the shared-read cache: the location's Cache API (`caches.default`), behind the
 * EdgeStore seam that src/upstreams/cache/shared.ts uses. Per location, shared by every isolate there;
 * absent where the runtime has none (Node: the in-memory store alone).
 *
 * Entries live under a URL of their own (`https://fleet-shared-reads.invalid/<sha-256 key>`): the key is a
 * digest of the cluster, request and identity, so nothing of a credential or a path appears in it. The
 * Cache API decides expiry from Cache-Control, so the answer's own headers travel in one header of their
 * own and come back unchanged. The Cache API does nothing on `*.workers.dev` hosts (no zone to cache in):
 * there the in-memory store per isolate is all there is.
 */
import type { EdgeStore, StoredAnswer } from '../upstreams/cache/store.ts';

const ORIGIN = 'https://fleet-shared-reads.invalid';
const META = 'x-fleet-shared-read';

/** What the fleet uses of a Workers `Cache`. */
export interface CacheLike {
  match(req: Request): Promise<Response | undefined>;
  put(req: Request, res: Response): Promise<void>;
}

/** The location's cache, when the runtime has one. */
export function defaultCache(): CacheLike | undefined {
  const c = (globalThis as { caches?: { default?: CacheLike } }).caches?.default;
  return c && typeof c.match === 'function' && typeof c.put === 'function' ? c : undefined;
}

export function cacheApiStore(cache: CacheLike): EdgeStore {
  return {
    async get(key) {
      const res = await cache.match(new Request(`${ORIGIN}/${key}`));
      if (!res) return undefined;
      const meta = res.headers.get(META);
      let parsed: { h: Array<[string, string]>; at: number; s: number } | undefined;
      try {
        parsed = meta ? JSON.parse(decodeURIComponent(meta)) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!parsed || !Array.isArray(parsed.h) || typeof parsed.at !== 'number') {
        await res.body?.cancel();
        return undefined;
      }
      const answer: StoredAnswer = {
        status: parsed.s,
        headers: parsed.h,
        body: new Uint8Array(await res.arrayBuffer()),
        storedAt: parsed.at,
      };
      return answer;
    },
    async put(key, a, ttlSeconds) {
      const meta = encodeURIComponent(JSON.stringify({ h: a.headers, at: a.storedAt, s: a.status }));
      // the Cache API keeps 200s only as long as Cache-Control says; the answer's own status rides along
      await cache.put(
        new Request(`${ORIGIN}/${key}`),
        new Response(a.body.slice(), {
          status: 200,
          headers: { 'Cache-Control': `public, max-age=${ttlSeconds}`, [META]: meta },
        }),
      );
    },
  };
}

/** The location's Cache API as an EdgeStore, or undefined where the runtime has none. */
export function locationCache(): EdgeStore | undefined {
  const c = defaultCache();
  return c ? cacheApiStore(c) : undefined;
}

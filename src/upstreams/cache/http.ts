/**
 * What the fleet tells caches in front of it (a CDN, kubectl's HTTP cache) about a merged discovery or
 * OpenAPI document. Pure.
 *
 * A merged document depends on who asks: each cluster answers the caller as its RBAC lets it, and a
 * cluster that refuses the caller is left out. So unless the operator declared these documents the same
 * for everyone (`cache.publicIdentity`), a cache may keep one only to revalidate it: `no-cache` with the
 * ETag, so every reuse is a conditional request the fleet authenticates and answers with 304 or the
 * caller's own document. Even a cache that ignores `Vary` cannot hand one caller's document to another:
 * equal ETags are equal bytes. `public` is what lets a shared cache store a response to a request that
 * carried Authorization at all (RFC 9111 §3.5); `Vary` names what carries identity, for caches that key
 * by it.
 */

/** Request headers that carry who the caller is (and whom it acts as). */
export const IDENTITY_VARY = ['Authorization', 'Impersonate-User', 'Impersonate-Group', 'Impersonate-Uid'];

export interface DocumentCacheInput {
  /** a cluster was left out (Warning): nobody may keep it, it changes as soon as the cluster is back */
  partial: boolean;
  /** the document's form depends on Accept (the discovery roots: legacy or aggregated) */
  varyAccept: boolean;
  /** the document is the same for every caller (asked as `cache.publicIdentity`) */
  sharedIdentity: boolean;
  /** with sharedIdentity: how long a shared cache may serve it without asking (cache.ttlSeconds) */
  maxAgeSeconds?: number;
}

export function documentCacheHeaders(o: DocumentCacheInput): Array<[string, string]> {
  const accept: Array<[string, string]> = o.varyAccept ? [['Vary', 'Accept']] : [];
  if (o.partial) return [['Cache-Control', 'no-cache, private'], ...accept];
  if (o.sharedIdentity && (o.maxAgeSeconds ?? 0) > 0)
    return [['Cache-Control', `public, max-age=${o.maxAgeSeconds}`], ...accept];
  if (o.sharedIdentity) return [['Cache-Control', 'public, no-cache'], ...accept];
  const vary = [...(o.varyAccept ? ['Accept'] : []), ...IDENTITY_VARY].join(', ');
  return [
    ['Cache-Control', 'public, no-cache'],
    ['Vary', vary],
  ];
}

/**
 * Which upstream requests may be shared (coalesced) and kept for a while (cached): the one place that
 * decides it, from the request as it goes to one cluster. Pure.
 *
 * Only what Kubernetes itself answers from a cache qualifies:
 * - a list or get with `resourceVersion=0` ("any version is fine": kube-apiserver serves it from its watch
 *   cache, possibly behind etcd, and client-go reflectors send exactly that for their first list);
 * - discovery (`/api`, `/apis`, their group and group-version documents, `/version`) and OpenAPI
 *   (`/openapi/v2`, `/openapi/v3…`), which change only when an API is installed and carry ETags.
 *
 * Never: `resourceVersion` absent or "" (a consistent read: it must see every write that completed
 * before it was sent, so it may not even join a call already in flight), an exact or NotOlderThan RV
 * other than 0 (the cluster decides what is old enough), continue tokens (their RV is pinned), watches,
 * and anything but GET. A watch from the RV of a cached list resumes correctly: the list carried the RV it
 * was served at, and the cluster answers 410 once that is compacted, as for any stale RV.
 */

export type ReadKind = 'any-version' | 'discovery' | 'openapi';

/** Query parameters that do not change the answer: left out of the key so that such requests match. */
const IGNORED_PARAMS = new Set(['timeout']);

/**
 * What kind of shareable read `method path` is, or undefined when it must go to the cluster as its own
 * request. `path` is relative to the cluster's API server (the kube path and query, no proxy prefix).
 */
export function readKind(method: string, path: string): ReadKind | undefined {
  if (method !== 'GET') return undefined;
  // a merged list asks every cluster the same path: judged once, not once per cluster
  if (path === lastPath) return lastKind;
  const kind = judgeRead(path);
  lastPath = path;
  lastKind = kind;
  return kind;
}

let lastPath: string | undefined;
let lastKind: ReadKind | undefined;

function judgeRead(path: string): ReadKind | undefined {
  const q = path.indexOf('?');
  const kubePath = q < 0 ? path : path.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  const segs = kubePath.split('/').filter(Boolean);
  if (segs.length === 0) return undefined;
  if (isWatch(segs, query)) return undefined;
  if (segs[0] === 'openapi') return 'openapi';
  if (isDiscovery(segs)) return 'discovery';
  if (segs[0] !== 'api' && segs[0] !== 'apis') return undefined;
  if (query.get('resourceVersion') !== '0') return undefined;
  const match = query.get('resourceVersionMatch');
  // kube: RV 0 with NotOlderThan is the same "any"; Exact with 0 is refused by the cluster (let it say so)
  if (match !== null && match !== 'NotOlderThan') return undefined;
  if (query.get('continue')) return undefined;
  // streamed subresources (logs, proxy) are not reads of stored objects
  if (segs.includes('log') || segs.includes('proxy')) return undefined;
  return 'any-version';
}

function isWatch(segs: string[], query: URLSearchParams): boolean {
  const w = query.get('watch');
  if (w !== null && w !== '' && w !== 'false' && w !== '0') return true;
  // the legacy /api/v1/watch/… and /apis/<g>/<v>/watch/… forms
  const at = segs[0] === 'api' ? 2 : segs[0] === 'apis' ? 3 : -1;
  return at > 0 && segs[at] === 'watch';
}

/** `/version`, `/api`, `/api/<v>`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>` */
function isDiscovery(segs: string[]): boolean {
  if (segs[0] === 'version') return segs.length === 1;
  if (segs[0] === 'api') return segs.length <= 2;
  if (segs[0] === 'apis') return segs.length <= 3;
  return false;
}

/** The path and query as a key: parameters sorted, the ones that do not change the answer left out. */
export function normalizedPath(path: string): string {
  const q = path.indexOf('?');
  if (q < 0) return path;
  const params = [...new URLSearchParams(path.slice(q + 1))].filter(([k]) => !IGNORED_PARAMS.has(k));
  params.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const qs = new URLSearchParams(params).toString();
  return qs ? `${path.slice(0, q)}?${qs}` : path.slice(0, q);
}

/**
 * Request headers that change the answer, so part of the key. The identity (Authorization, Impersonate-*)
 * is keyed separately and always; anything else a client sends (User-Agent, traceparent) does not change
 * what kube answers.
 */
export const KEYED_HEADERS = ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since'] as const;

/** Answers that may be kept: complete 200s (a 403 or 404 is shared between concurrent askers only). */
export function storable(status: number): boolean {
  return status === 200;
}

/**
 * Asking every cluster of a clusterspace for one discovery document, and writing the merged answer:
 * what the discovery and OpenAPI routes share. Not a route: routes import it; it imports no route.
 *
 * Merges ask upstreams for JSON only (never protobuf); pass-throughs forward the caller's Accept. A cluster
 * that fails or times out is left out with a `Warning: 299 - "cluster <name>: <reason>"` header, strict
 * mode or not: `strict` is about data answers (lists, gets, watches), and a discovery that fails while
 * one cluster is down would leave kubectl unable to do anything at all, even with the healthy clusters
 * (kubectl discovers before every command). Complete merged answers are cached per process/isolate for
 * CACHE_TTL_MS (resolved documents only, never a pending promise: an isolate must not await I/O that
 * another request started — see src/upstreams/membership.ts).
 */

import { discoveryETag, etagMatches } from '../kube/discovery.ts';
import { failure, parseStatus, serviceUnavailable, statusOfAnswer, statusResponse } from '../kube/status.ts';
import { textGuarded } from '../list/read.ts';
import type { ClusterDoc } from '../merge/discovery.ts';
import type { CallerKey } from '../plan/discovery.ts';
import { undialedMember } from '../plan/unserved.ts';
import type { FanOutDeps, FleetDeps, ViewDeps } from '../types.ts';
import { documentCacheHeaders } from '../upstreams/cache/http.ts';
import { forwardableResponseHeaders, UpstreamError } from '../upstreams/client.ts';
import { fanOut, type Target, warningHeader } from '../upstreams/fanout.ts';
import { TtlCache } from '../util/ttlcache.ts';
import { type BodyIdleDeps, bodyIdleMs } from './respond.ts';

export const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 128;

/** What the discovery routes use of the fleet: asking clusters, and the fleet (cache scope). */
export type DiscoveryDeps = FanOutDeps & ViewDeps & Pick<FleetDeps, 'membership'> & BodyIdleDeps;

/** One discovery request: the client's request, the clusters asked, and the caller (for cache keys). */
export interface Ctx {
  req: Request;
  deps: DiscoveryDeps;
  targets: Target[];
  caller: CallerKey | undefined;
}

/** 405 for a method other than GET/HEAD, 503 for a clusterspace without clusters; undefined: go on. */
export function refuseDiscovery(req: Request, targets: Target[]): Response | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return statusResponse(
      failure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`),
    );
  if (targets.length === 0) return statusResponse(serviceUnavailable('the clusterspace has no clusters'));
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Per-process (per-isolate) cache of complete answers, per fleet

// keyed by the fleet's Membership, which every request of one fleet shares (the per-request deps a route
// gets are copies bound to the caller): one cache per fleet, several fleets per process in tests
const caches = new WeakMap<object, TtlCache<unknown>>();

function cacheOf(deps: Pick<FleetDeps, 'membership'>): TtlCache<unknown> {
  let m = caches.get(deps.membership);
  if (!m) {
    m = new TtlCache(CACHE_TTL_MS, CACHE_MAX_ENTRIES);
    caches.set(deps.membership, m);
  }
  return m;
}

export function cacheGet<T>(deps: Pick<FleetDeps, 'membership'>, key: string): T | undefined {
  return cacheOf(deps).get(key) as T | undefined;
}

export function cachePut(deps: Pick<FleetDeps, 'membership'>, key: string, value: unknown): void {
  cacheOf(deps).set(key, value);
}

// ---------------------------------------------------------------------------------------------------
// Asking the clusters

export type Got =
  | { target: Target; kind: 'ok'; body: string; contentType: string | null }
  | { target: Target; kind: 'absent' }
  | { target: Target; kind: 'failed'; reason: string; status?: number; body?: string; contentType?: string };

export function upstreamReason(err: UpstreamError): string {
  return err.kind === 'timeout' ? `no response within the timeout (${err.detail})` : err.detail;
}

/**
 * Why a cluster's non-200 answer leaves it out, in the words a list's Warning uses for it: a Status's own
 * message (never prefixed with the HTTP code: `500 dial tcp …` read as if the member had said 500), Karmada's
 * proxy failing to dial the member as the fleet words it everywhere; only an answer without a Status (a
 * proxy's page) keeps its HTTP code, which is then all there is to say.
 */
function failedReason(cluster: string, code: number, statusText: string, body: string): string {
  const status = parseStatus(body);
  const undialed = status && undialedMember(cluster, code, status);
  if (undialed) return (undialed.message ?? '').replace(`cluster ${cluster}: `, '');
  if (typeof status?.message === 'string' && status.message) return status.message;
  return `${code} ${body.trim().slice(0, 200) || statusText}`.trim();
}

/**
 * GETs `path` from every target at once with the given Accept and reads the bodies. `absentOn404`: a 404
 * means the cluster does not serve this (group, group-version), not that it failed.
 */
export async function gather(
  x: Pick<Ctx, 'req' | 'deps'>,
  targets: Target[],
  path: string,
  accept: string,
  absentOn404: boolean,
): Promise<Got[]> {
  const { req } = x;
  // discovery wider than the fleet's reach reads the clusters within it, so kubectl gets as far as the
  // request itself, which is refused with the reason (upstreams/relay/plan.ts); one Warning says so
  const limit = x.deps.maxClustersPerRequest ?? Number.POSITIVE_INFINITY;
  const beyond = targets.slice(limit).map((target, i): Got => {
    if (i > 0) return { target, kind: 'absent' };
    const more = targets.length - limit - 1;
    const reason = `not asked${more ? `, nor ${more} more clusters` : ''}: the fleet asks at most ${limit} clusters in one request (setting maxClustersPerRequest)`;
    return { target, kind: 'failed', reason };
  });
  const outcomes = await fanOut(x.deps, targets.slice(0, limit), () => ({
    method: 'GET',
    path,
    headers: new Headers({ Accept: accept }),
    signal: req.signal,
  }));
  const got = Promise.all(
    outcomes.map(async (o): Promise<Got> => {
      if (!o.ok) return { target: o.target, kind: 'failed', reason: upstreamReason(o.error) };
      let body: string;
      try {
        // a body that goes silent fails this cluster, not the whole discovery (kubectl gives up at 32 s)
        body = await textGuarded(o.res.body, bodyIdleMs(x.deps));
      } catch (err) {
        if (req.signal.aborted) throw err;
        return {
          target: o.target,
          kind: 'failed',
          reason: `reading the response: ${(err as Error).message}`,
        };
      }
      const contentType = o.res.headers.get('content-type');
      if (o.res.status === 404 && absentOn404) return { target: o.target, kind: 'absent' };
      if (o.res.status !== 200) {
        return {
          target: o.target,
          kind: 'failed',
          reason: failedReason(o.target.cluster, o.res.status, o.res.statusText, body),
          status: o.res.status,
          body,
          contentType: contentType ?? undefined,
        };
      }
      return { target: o.target, kind: 'ok', body, contentType };
    }),
  );
  return [...(await got), ...beyond];
}

export function parseDoc<T>(g: Extract<Got, { kind: 'ok' }>, check: (d: any) => boolean): T | string {
  try {
    const d = JSON.parse(g.body);
    if (d && typeof d === 'object' && check(d)) return d as T;
  } catch {
    // fall through
  }
  return 'the answer is not a discovery document';
}

/** Turns parse failures into failed clusters; returns the parsed documents in fleet order. */
export function docsOf<T>(
  got: Got[],
  check: (d: any) => boolean,
): { docs: Array<ClusterDoc<T>>; got: Got[] } {
  const docs: Array<ClusterDoc<T>> = [];
  const out = got.map((g): Got => {
    if (g.kind !== 'ok') return g;
    const d = parseDoc<T>(g, check);
    if (typeof d === 'string') return { target: g.target, kind: 'failed', reason: d };
    docs.push({ cluster: g.target.cluster, doc: d });
    return g;
  });
  return { docs, got: out };
}

export interface Partial {
  warnings: string[];
  failed: Array<Extract<Got, { kind: 'failed' }>>;
}

/**
 * What the failures mean for the answer: undefined to go on (with warnings: strict mode too, see the
 * header), or the response to give instead: 503 when no cluster answered; when every cluster refused with
 * the same HTTP status (say 403 for the caller), that refusal, as a single cluster would give it.
 */
export function judge(got: Got[], p: Partial): Response | undefined {
  for (const f of got) if (f.kind === 'failed') p.failed.push(f);
  const reasons = p.failed.map((f) => `cluster ${f.target.cluster}: ${f.reason}`);
  p.warnings.push(...reasons);
  if (p.failed.length === 0) return undefined;
  if (got.some((g) => g.kind === 'ok')) return undefined;
  if (got.every((g) => g.kind === 'failed')) {
    const first = p.failed[0]!;
    if (
      first.status !== undefined &&
      first.status < 500 &&
      p.failed.every((f) => f.status === first.status) &&
      first.body !== undefined
    )
      return refusal(first.status, first.body, first.contentType);
    return statusResponse(serviceUnavailable(`no cluster could answer: ${reasons.join('; ')}`));
  }
  // the rest say they do not serve it, but those that failed might: do not claim it is absent
  const names = p.failed.map((f) => f.target.cluster).join(', ');
  return statusResponse(
    serviceUnavailable(`clusters ${names} could not be asked; the others do not serve this`),
  );
}

/**
 * One cluster's refusal as the fleet's answer: its own bytes when they are a Status (JSON or protobuf);
 * anything else (a proxy's bodyless 431, a text 404) becomes kube's generic Status for that code.
 */
function refusal(status: number, body: string, contentType: string | undefined): Response {
  if (!contentType?.includes('protobuf') && !isStatus(body))
    return statusResponse(statusOfAnswer(status, body));
  return new Response(body, {
    status,
    headers: { 'Content-Type': contentType ?? 'application/json', 'Cache-Control': 'no-cache, private' },
  });
}

function isStatus(body: string): boolean {
  try {
    return (JSON.parse(body) as { kind?: string } | null)?.kind === 'Status';
  } catch {
    return false;
  }
}

export function notFound(warnings: string[] = []): Response {
  const r = statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));
  for (const w of warnings) r.headers.append('Warning', warningHeader(w));
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Writing merged documents

export interface Rendered {
  body: string;
  etag: string;
  contentType: string;
}

export async function render(doc: unknown, contentType: string): Promise<Rendered> {
  const body = JSON.stringify(doc);
  return { body, etag: await discoveryETag(body), contentType };
}

/**
 * A merged document with its ETag (If-None-Match → 304). A partial answer is never cacheable and carries
 * no validator, nor is it ever a 304: its body can equal the whole fleet's (a member left out whose APIs
 * the others serve too), and client-go's HTTP cache keeps a stored answer's Warning headers when a
 * revalidation says 304, so kubectl would go on printing one caller's or one outage's warnings long after
 * (seen with kubectl --as through Karmada's cluster proxy, test/real/).
 */
export function respondDoc(
  req: Request,
  r: Rendered,
  warnings: string[],
  opts: { vary: boolean; cachePublic: boolean },
): Response {
  const partial = warnings.length > 0;
  const headers = new Headers({ 'Content-Type': r.contentType });
  if (!partial) headers.set('ETag', r.etag);
  if (opts.cachePublic) {
    // merged per caller: a cache in front may keep it but must revalidate every reuse and key it by the
    // identity headers too, so it can never hand one caller's document to another; a partial answer is
    // kept by nobody (it changes as soon as the cluster is back)
    for (const [k, v] of documentCacheHeaders({
      partial,
      varyAccept: opts.vary,
      sharedIdentity: false,
    }))
      headers.set(k, v);
  } else {
    if (opts.vary) headers.set('Vary', 'Accept');
    headers.set('Cache-Control', 'no-cache, private');
  }
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  if (!partial && etagMatches(req.headers.get('if-none-match'), r.etag))
    return new Response(null, { status: 304, headers });
  return new Response(req.method === 'HEAD' ? null : r.body, { status: 200, headers });
}

/** A merged document, from the cache or freshly merged (cached only when every cluster answered). */
export async function merged(
  x: Ctx,
  key: string,
  make: (p: Partial) => Promise<Rendered | Response>,
): Promise<{ rendered: Rendered; warnings: string[] } | Response> {
  const hit = cacheGet<Rendered>(x.deps, key);
  if (hit) return { rendered: hit, warnings: [] };
  const p: Partial = { warnings: [], failed: [] };
  const out = await make(p);
  if (out instanceof Response) return out;
  if (p.warnings.length === 0) cachePut(x.deps, key, out);
  return { rendered: out, warnings: p.warnings };
}

// ---------------------------------------------------------------------------------------------------
// /version, /openapi: the first cluster that answers

/** Relays an upstream response as a single cluster gave it (bytes and headers), plus warnings. */
function relay(res: Response, warnings: string[], rewriteLocation?: (l: string) => string): Response {
  const headers = forwardableResponseHeaders(res.headers);
  const loc = headers.get('location');
  if (loc && rewriteLocation) headers.set('Location', rewriteLocation(loc));
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * Asks the clusters one after another (only one big answer travels) and relays the first that answers:
 * `accept` says which statuses count as a cluster's real answer. Transport failures and the rest move on
 * with a warning; none at all → the first HTTP answer if any, else 503.
 */
export async function firstAnswer(
  x: Pick<Ctx, 'req' | 'deps'>,
  order: Target[],
  path: string,
  headers: Headers,
  accept: (status: number) => boolean,
  rewriteLocation?: (l: string) => string,
): Promise<Response> {
  const warnings: string[] = [];
  let fallback: Response | undefined;
  for (const t of order) {
    let res: Response;
    try {
      const method = x.req.method === 'HEAD' ? 'HEAD' : 'GET';
      res = await x.deps.client.send(t.endpoint, { method, path, headers, signal: x.req.signal });
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      warnings.push(`cluster ${t.cluster}: ${upstreamReason(err)}`);
      continue;
    }
    if (accept(res.status)) {
      await fallback?.body?.cancel();
      return relay(res, warnings, rewriteLocation);
    }
    if (fallback) await res.body?.cancel();
    else fallback = res;
    warnings.push(`cluster ${t.cluster}: ${res.status} ${res.statusText}`.trim());
  }
  if (fallback) return relay(fallback, [], rewriteLocation);
  return statusResponse(serviceUnavailable(`no cluster could answer: ${warnings.join('; ')}`));
}

/** The caller's own negotiation and cache validators; client.ts strips credentials and hop-by-hop headers. */
export function passHeaders(req: Request): Headers {
  const h = new Headers();
  for (const k of ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'user-agent']) {
    const v = req.headers.get(k);
    if (v !== null) h.set(k, v);
  }
  return h;
}

/**
 * Discovery of a fleet clusterspace (`all`, the vanilla API): the non-resource paths a client reads before
 * anything else, answered from every cluster of the clusterspace.
 *
 *   /api, /apis                 merged; legacy JSON or aggregated discovery (v2, v2beta1) by Accept,
 *                               with ETag, If-None-Match → 304 and Vary: Accept, like kube-apiserver
 *   /api/v1, /apis/<g>[/<v>]    merged legacy documents (a cluster's 404 = it does not serve that)
 *   /version                    the control plane's (when among the clusters), else the first cluster's
 *   /openapi/v3                 merged root; every serverRelativeURL stays relative to the fleet
 *   /openapi/v3/<gv>?hash=…     passed through from a cluster that publishes the gv (that hash first)
 *   /openapi/v2                 passed through (protobuf bytes) from the first cluster that answers it
 *
 * Merges ask upstreams for JSON only (never protobuf); pass-throughs forward the caller's Accept. A cluster
 * that fails or times out is left out with a `Warning: 299 - "cluster <name>: <reason>"` header, or fails
 * the request with 503 in strict mode. Complete merged answers are cached per process/isolate for
 * CACHE_TTL_MS (resolved documents only, never a pending promise: an isolate must not await I/O that
 * another request started — see src/upstreams/membership.ts).
 */
import type { Context } from 'hono';
import type { Identity } from '../auth/identity.ts';
import { failure, serviceUnavailable, statusResponse } from '../kube/status.ts';
import {
  AGGREGATED_UPSTREAM_ACCEPT,
  type AggregatedVersion,
  type APIGroup,
  type APIGroupDiscovery,
  type APIGroupList,
  type APIResourceList,
  type APIVersions,
  aggregatedContentType,
  aggregatedFromLegacy,
  aggregatedVersionOf,
  type ClusterDoc,
  type DiscoveryForm,
  discoveryETag,
  etagMatches,
  mergeAggregated,
  mergeAPIGroup,
  mergeAPIGroupList,
  mergeAPIResourceList,
  mergeAPIVersions,
  mergeOpenAPIV3Roots,
  negotiateDiscovery,
  type OpenAPIServer,
  type OpenAPIV3Root,
  openAPIClustersFor,
} from '../merge/discovery.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { forwardableResponseHeaders, UpstreamError } from '../upstreams/client.ts';
import { fanOut, type Target, warningHeader } from '../upstreams/fanout.ts';

export const CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 128;

type Path =
  | { kind: 'version' }
  | { kind: 'root'; which: 'api' | 'apis' }
  | { kind: 'group'; group: string }
  | { kind: 'resources'; group: string; version: string }
  | { kind: 'openapi-v3-root' }
  | { kind: 'openapi-v3-doc'; gv: string }
  | { kind: 'openapi-v2' };

function classify(kubePath: string): Path | undefined {
  const segs = kubePath.split('/').filter(Boolean);
  const [a, b, c, ...rest] = segs;
  if (a === 'version' && segs.length === 1) return { kind: 'version' };
  if (a === 'api') {
    if (segs.length === 1) return { kind: 'root', which: 'api' };
    if (segs.length === 2) return { kind: 'resources', group: '', version: b! };
    return undefined;
  }
  if (a === 'apis') {
    if (segs.length === 1) return { kind: 'root', which: 'apis' };
    if (segs.length === 2) return { kind: 'group', group: b! };
    if (segs.length === 3) return { kind: 'resources', group: b!, version: c! };
    return undefined;
  }
  if (a === 'openapi') {
    if (b === 'v2' && segs.length === 2) return { kind: 'openapi-v2' };
    if (b === 'v3' && segs.length === 2) return { kind: 'openapi-v3-root' };
    if (b === 'v3' && c !== undefined) return { kind: 'openapi-v3-doc', gv: [c, ...rest].join('/') };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Per-process (per-isolate) cache of complete answers, per fleet

interface CacheEntry {
  at: number;
  value: unknown;
}
// keyed by the fleet's Membership, which every request of one fleet shares (the per-request deps a route
// gets are copies bound to the caller): one cache per fleet, several fleets per process in tests
const caches = new WeakMap<object, Map<string, CacheEntry>>();

function cacheGet<T>(deps: FleetDeps, key: string): T | undefined {
  const m = caches.get(deps.membership);
  const e = m?.get(key);
  if (!e) return undefined;
  if (Date.now() - e.at >= CACHE_TTL_MS) {
    m!.delete(key);
    return undefined;
  }
  return e.value as T;
}

function cachePut(deps: FleetDeps, key: string, value: unknown): void {
  let m = caches.get(deps.membership);
  if (!m) {
    m = new Map();
    caches.set(deps.membership, m);
  }
  m.delete(key);
  m.set(key, { at: Date.now(), value });
  // oldest first: drop what no longer fits
  while (m.size > CACHE_MAX_ENTRIES) m.delete(m.keys().next().value!);
}

function cacheKey(targets: Target[], identity: Identity | undefined, ...parts: string[]): string {
  const who = identity
    ? JSON.stringify([identity.user, identity.groups, identity.uid ?? '', identity.extra ?? {}])
    : '';
  return JSON.stringify([targets.map((t) => t.cluster), who, ...parts]);
}

// ---------------------------------------------------------------------------------------------------
// Asking the clusters

type Got =
  | { target: Target; kind: 'ok'; body: string; contentType: string | null }
  | { target: Target; kind: 'absent' }
  | { target: Target; kind: 'failed'; reason: string; status?: number; body?: string; contentType?: string };

function upstreamReason(err: UpstreamError): string {
  return err.kind === 'timeout' ? `no response within the timeout (${err.detail})` : err.detail;
}

function statusMessage(body: string): string | undefined {
  try {
    const s = JSON.parse(body) as { kind?: string; message?: string };
    return s?.kind === 'Status' && typeof s.message === 'string' ? s.message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * GETs `path` from every target at once with the given Accept and reads the bodies. `absentOn404`: a 404
 * means the cluster does not serve this (group, group-version), not that it failed.
 */
async function gather(
  req: Request,
  deps: FleetDeps,
  targets: Target[],
  identity: Identity | undefined,
  path: string,
  accept: string,
  absentOn404: boolean,
): Promise<Got[]> {
  const outcomes = await fanOut(
    deps,
    targets,
    () => ({ method: 'GET', path, headers: new Headers({ Accept: accept }), signal: req.signal }),
    identity,
  );
  return Promise.all(
    outcomes.map(async (o): Promise<Got> => {
      if (!o.ok) return { target: o.target, kind: 'failed', reason: upstreamReason(o.error) };
      let body: string;
      try {
        body = await o.res.text();
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
        const msg = statusMessage(body) ?? (body.trim().slice(0, 200) || o.res.statusText);
        return {
          target: o.target,
          kind: 'failed',
          reason: `${o.res.status} ${msg}`.trim(),
          status: o.res.status,
          body,
          contentType: contentType ?? undefined,
        };
      }
      return { target: o.target, kind: 'ok', body, contentType };
    }),
  );
}

function parseDoc<T>(g: Extract<Got, { kind: 'ok' }>, check: (d: any) => boolean): T | string {
  try {
    const d = JSON.parse(g.body);
    if (d && typeof d === 'object' && check(d)) return d as T;
  } catch {
    // fall through
  }
  return 'the answer is not a discovery document';
}

interface Partial {
  warnings: string[];
  failed: Array<Extract<Got, { kind: 'failed' }>>;
}

/**
 * What the failures mean for the answer: undefined to go on (with warnings), or the response to give
 * instead: 503 in strict mode or when no cluster answered; when every cluster refused with the same HTTP
 * status (say 403 for the caller), that refusal, as a single cluster would give it.
 */
function judge(deps: FleetDeps, got: Got[], p: Partial): Response | undefined {
  for (const f of got) if (f.kind === 'failed') p.failed.push(f);
  p.warnings.push(...p.failed.map((f) => `cluster ${f.target.cluster}: ${f.reason}`));
  if (p.failed.length === 0) return undefined;
  const names = p.failed.map((f) => f.target.cluster).join(', ');
  if (deps.config.strict)
    return statusResponse(
      serviceUnavailable(
        `strict mode: not every cluster answered (${p.failed.map((f) => `cluster ${f.target.cluster}: ${f.reason}`).join('; ')})`,
      ),
    );
  if (got.some((g) => g.kind === 'ok')) return undefined;
  if (got.every((g) => g.kind === 'failed')) {
    const first = p.failed[0]!;
    if (
      first.status !== undefined &&
      first.status < 500 &&
      p.failed.every((f) => f.status === first.status) &&
      first.body !== undefined
    )
      return new Response(first.body, {
        status: first.status,
        headers: {
          'Content-Type': first.contentType ?? 'application/json',
          'Cache-Control': 'no-cache, private',
        },
      });
    return statusResponse(
      serviceUnavailable(
        `no cluster could answer: ${p.failed.map((f) => `cluster ${f.target.cluster}: ${f.reason}`).join('; ')}`,
      ),
    );
  }
  // the rest say they do not serve it, but those that failed might: do not claim it is absent
  return statusResponse(
    serviceUnavailable(`clusters ${names} could not be asked; the others do not serve this`),
  );
}

function notFound(warnings: string[] = []): Response {
  const r = statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));
  for (const w of warnings) r.headers.append('Warning', warningHeader(w));
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Writing merged documents

interface Rendered {
  body: string;
  etag: string;
  contentType: string;
}

async function render(doc: unknown, contentType: string): Promise<Rendered> {
  const body = JSON.stringify(doc);
  return { body, etag: await discoveryETag(body), contentType };
}

function respond(
  req: Request,
  r: Rendered,
  warnings: string[],
  opts: { vary: boolean; cachePublic: boolean },
) {
  const headers = new Headers({ 'Content-Type': r.contentType, ETag: r.etag });
  if (opts.vary) headers.set('Vary', 'Accept');
  // a partial answer must not be kept by anyone: it changes as soon as the cluster is back
  headers.set('Cache-Control', opts.cachePublic && warnings.length === 0 ? 'public' : 'no-cache, private');
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  if (etagMatches(req.headers.get('if-none-match'), r.etag))
    return new Response(null, { status: 304, headers });
  return new Response(req.method === 'HEAD' ? null : r.body, { status: 200, headers });
}

function notAcceptable(): Response {
  return statusResponse(
    failure(
      406,
      'NotAcceptable',
      'only the following media types are accepted: application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
    ),
  );
}

type Ctx = {
  req: Request;
  deps: FleetDeps;
  targets: Target[];
  identity: Identity | undefined;
};

/** A merged document, from the cache or freshly merged (cached only when every cluster answered). */
async function merged(
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
// /api and /apis

const isAPIVersions = (d: any) => d.kind === 'APIVersions' || Array.isArray(d.versions);
const isGroupList = (d: any) => d.kind === 'APIGroupList' || Array.isArray(d.groups);
const isAggregated = (d: any) => d.kind === 'APIGroupDiscoveryList' || Array.isArray(d.items);
const isResourceList = (d: any) => d.kind === 'APIResourceList' || Array.isArray(d.resources);
const isGroup = (d: any) => typeof d.name === 'string' && Array.isArray(d.versions);

/** Turns parse failures into failed clusters; returns the parsed documents in fleet order. */
function docsOf<T>(got: Got[], check: (d: any) => boolean): { docs: Array<ClusterDoc<T>>; got: Got[] } {
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

/**
 * A cluster that answered the aggregated request with a legacy document (Kubernetes < 1.26): its groups'
 * resource lists are fetched one by one and converted, as client-go does on its side.
 */
async function legacyAsAggregated(
  x: Ctx,
  target: Target,
  which: 'api' | 'apis',
  doc: APIVersions | APIGroupList,
): Promise<{ items: APIGroupDiscovery[] } | string> {
  const groups: Array<{ group: string; versions: string[] }> =
    which === 'api'
      ? [{ group: '', versions: (doc as APIVersions).versions ?? [] }]
      : ((doc as APIGroupList).groups ?? []).map((g) => {
          const vs = (g.versions ?? []).map((v) => v.version);
          const p = g.preferredVersion?.version;
          return { group: g.name, versions: p && vs.includes(p) ? [p, ...vs.filter((v) => v !== p)] : vs };
        });
  const gvs = groups.flatMap((g) => g.versions.map((v) => ({ group: g.group, version: v })));
  const lists = await Promise.all(
    gvs.map(async ({ group, version }) => {
      const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
      const [got] = await gather(x.req, x.deps, [target], x.identity, path, 'application/json', true);
      if (got!.kind === 'absent') return undefined;
      if (got!.kind === 'failed') throw new Error(`${path}: ${got!.reason}`);
      const d = parseDoc<APIResourceList>(got!, isResourceList);
      if (typeof d === 'string') throw new Error(`${path}: ${d}`);
      return { group, version, list: d };
    }),
  ).catch((err: Error) => err.message);
  if (typeof lists === 'string') return lists;
  return {
    items: groups.map((g) => {
      const m = new Map<string, APIResourceList>();
      for (const l of lists) if (l && l.group === g.group) m.set(l.version, l.list);
      return aggregatedFromLegacy(g.group, g.versions, m);
    }),
  };
}

async function root(x: Ctx, which: 'api' | 'apis', form: DiscoveryForm): Promise<Response> {
  const path = `/${which}`;
  const host = new URL(x.req.url).host;
  const formKey = form.kind === 'legacy' ? 'legacy' : form.version;
  const key = cacheKey(x.targets, x.identity, path, formKey, which === 'api' ? host : '');
  const out = await merged(x, key, async (p) => {
    if (form.kind === 'legacy') {
      const got = await gather(x.req, x.deps, x.targets, x.identity, path, 'application/json', false);
      const check = which === 'api' ? isAPIVersions : isGroupList;
      const { docs, got: g2 } = docsOf<APIVersions & APIGroupList>(got, check);
      const stop = judge(x.deps, g2, p);
      if (stop) return stop;
      const doc =
        which === 'api'
          ? mergeAPIVersions(docs, [{ clientCIDR: '0.0.0.0/0', serverAddress: host }])
          : mergeAPIGroupList(docs);
      return render(doc, 'application/json');
    }
    const got = await gather(x.req, x.deps, x.targets, x.identity, path, AGGREGATED_UPSTREAM_ACCEPT, false);
    const docs: Array<ClusterDoc<{ items?: APIGroupDiscovery[] }>> = [];
    const judged = await Promise.all(
      got.map(async (g): Promise<Got> => {
        if (g.kind !== 'ok') return g;
        // aggregated when the cluster says so (Content-Type) or the body is one (a proxy may drop parameters)
        let d: any;
        try {
          d = JSON.parse(g.body);
        } catch {
          return { target: g.target, kind: 'failed', reason: 'the answer is not a discovery document' };
        }
        if (aggregatedVersionOf(g.contentType) !== undefined || d?.kind === 'APIGroupDiscoveryList') {
          if (!d || typeof d !== 'object' || !isAggregated(d))
            return { target: g.target, kind: 'failed', reason: 'the answer is not a discovery document' };
          docs.push({ cluster: g.target.cluster, doc: d });
          return g;
        }
        const legacy = d as APIVersions | APIGroupList;
        if (!legacy || typeof legacy !== 'object' || !(which === 'api' ? isAPIVersions : isGroupList)(legacy))
          return { target: g.target, kind: 'failed', reason: 'the answer is not a discovery document' };
        const conv = await legacyAsAggregated(x, g.target, which, legacy);
        if (typeof conv === 'string') return { target: g.target, kind: 'failed', reason: conv };
        docs.push({ cluster: g.target.cluster, doc: conv });
        return g;
      }),
    );
    const stop = judge(x.deps, judged, p);
    if (stop) return stop;
    // keep fleet order whatever order the conversions finished in
    const order = new Map(x.targets.map((t, i) => [t.cluster, i]));
    docs.sort((a, b) => order.get(a.cluster)! - order.get(b.cluster)!);
    return render(mergeAggregated(docs, form.version), aggregatedContentType(form.version));
  });
  if (out instanceof Response) return out;
  return respond(x.req, out.rendered, out.warnings, { vary: true, cachePublic: form.kind === 'aggregated' });
}

// ---------------------------------------------------------------------------------------------------
// /apis/<g>, /api/v1, /apis/<g>/<v>

async function legacyDoc(
  x: Ctx,
  path: string,
  check: (d: any) => boolean,
  merge: (docs: Array<ClusterDoc<any>>) => unknown | undefined,
): Promise<Response> {
  const key = cacheKey(x.targets, x.identity, path, 'legacy');
  const out = await merged(x, key, async (p) => {
    const got = await gather(x.req, x.deps, x.targets, x.identity, path, 'application/json', true);
    const { docs, got: g2 } = docsOf(got, check);
    const stop = judge(x.deps, g2, p);
    if (stop) return stop;
    const doc = merge(docs);
    if (doc === undefined) return notFound(p.warnings);
    return render(doc, 'application/json');
  });
  if (out instanceof Response) return out;
  return respond(x.req, out.rendered, out.warnings, { vary: false, cachePublic: false });
}

// ---------------------------------------------------------------------------------------------------
// /version, /openapi/v2: the first cluster that answers

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
 * any status below 500 is a cluster's real answer for the pass-through paths, except that for /version a
 * 4xx lets the next cluster try. Transport failures and 5xx move on with a warning; none at all → the
 * first HTTP answer if any, else 503.
 */
async function firstAnswer(
  x: Ctx,
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
      res = await x.deps.client.send(t.endpoint, {
        method: x.req.method === 'HEAD' ? 'HEAD' : 'GET',
        path,
        headers,
        signal: x.req.signal,
        identity: x.identity,
      });
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      warnings.push(`cluster ${t.cluster}: ${upstreamReason(err)}`);
      continue;
    }
    if (accept(res.status)) {
      if (warnings.length > 0 && x.deps.config.strict) {
        await res.body?.cancel();
        return statusResponse(
          serviceUnavailable(`strict mode: not every cluster answered (${warnings.join('; ')})`),
        );
      }
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

function passHeaders(req: Request): Headers {
  // the caller's own negotiation and cache validators; client.ts strips credentials and hop-by-hop headers
  const h = new Headers();
  for (const k of ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'user-agent']) {
    const v = req.headers.get(k);
    if (v !== null) h.set(k, v);
  }
  return h;
}

// ---------------------------------------------------------------------------------------------------
// /openapi/v3

interface V3Root {
  rendered: Rendered;
  servedBy: Array<[string, OpenAPIServer[]]>;
}

async function openapiRoot(x: Ctx): Promise<{ root: V3Root; warnings: string[] } | Response> {
  const key = cacheKey(x.targets, x.identity, '/openapi/v3');
  const hit = cacheGet<V3Root>(x.deps, key);
  if (hit) return { root: hit, warnings: [] };
  const p: Partial = { warnings: [], failed: [] };
  const got = await gather(x.req, x.deps, x.targets, x.identity, '/openapi/v3', 'application/json', false);
  const { docs, got: g2 } = docsOf<OpenAPIV3Root>(
    got,
    (d) => typeof d.paths === 'object' && d.paths !== null,
  );
  const stop = judge(x.deps, g2, p);
  if (stop) return stop;
  const { root, servedBy } = mergeOpenAPIV3Roots(docs);
  const v3: V3Root = { rendered: await render(root, 'application/json'), servedBy: [...servedBy] };
  if (p.warnings.length === 0) cachePut(x.deps, key, v3);
  return { root: v3, warnings: p.warnings };
}

/** The path prefix the client used in front of the Kubernetes path (`/clusterspaces/all`, or nothing). */
function clientPrefix(info: RequestInfo): string {
  return info.rawPath.endsWith(info.kubePath) ? info.rawPath.slice(0, -info.kubePath.length) : '';
}

/**
 * kube-openapi redirects a stale `?hash=` to `/openapi/v3/<gv>?hash=<current>` (a server-absolute path):
 * keep it pointing at the fleet, under the prefix the client used, whatever proxy path the upstream saw.
 */
function openapiLocation(prefix: string): (loc: string) => string {
  return (loc) => {
    let path = loc;
    try {
      const u = new URL(loc, 'http://upstream.invalid');
      path = u.pathname + u.search;
    } catch {
      return loc;
    }
    const i = path.indexOf('/openapi/v3/');
    return i < 0 ? loc : prefix + path.slice(i);
  };
}

async function openapiDoc(x: Ctx, info: RequestInfo, gv: string): Promise<Response> {
  const r = await openapiRoot(x);
  if (r instanceof Response) return r;
  const url = new URL(x.req.url);
  const servers = new Map(r.root.servedBy).get(gv);
  if (!servers) return notFound(r.warnings);
  const byName = new Map(x.targets.map((t) => [t.cluster, t]));
  const order = openAPIClustersFor(servers, url.searchParams.get('hash') ?? undefined)
    .map((n) => byName.get(n))
    .filter((t): t is Target => t !== undefined);
  const res = await firstAnswer(
    x,
    order,
    info.kubePath + url.search,
    passHeaders(x.req),
    (s) => s < 500,
    openapiLocation(clientPrefix(info)),
  );
  for (const w of r.warnings) res.headers.append('Warning', warningHeader(w));
  return res;
}

// ---------------------------------------------------------------------------------------------------

export async function discoveryRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
): Promise<Response | undefined> {
  const path = classify(info.kubePath);
  if (!path) return undefined;
  const req = c.req.raw;
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return statusResponse(
      failure(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`),
    );
  if (targets.length === 0) return statusResponse(serviceUnavailable('the clusterspace has no clusters'));
  const x: Ctx = { req, deps, targets, identity: c.get('identity') as Identity | undefined };
  const accept = req.headers.get('accept');

  switch (path.kind) {
    case 'root': {
      const form = negotiateDiscovery(accept, true);
      return form ? root(x, path.which, form) : notAcceptable();
    }
    case 'group': {
      if (!negotiateDiscovery(accept, false)) return notAcceptable();
      return legacyDoc(x, info.kubePath, isGroup, (docs: Array<ClusterDoc<APIGroup>>) => mergeAPIGroup(docs));
    }
    case 'resources': {
      if (!negotiateDiscovery(accept, false)) return notAcceptable();
      return legacyDoc(x, info.kubePath, isResourceList, (docs: Array<ClusterDoc<APIResourceList>>) =>
        mergeAPIResourceList(docs),
      );
    }
    case 'version': {
      const order = [...targets.filter((t) => t.controlPlane), ...targets.filter((t) => !t.controlPlane)];
      return firstAnswer(x, order, '/version', new Headers({ Accept: 'application/json' }), (s) => s < 300);
    }
    case 'openapi-v2':
      return firstAnswer(x, targets, '/openapi/v2', passHeaders(req), (s) => s < 400);
    case 'openapi-v3-root': {
      const r = await openapiRoot(x);
      if (r instanceof Response) return r;
      return respond(req, r.root.rendered, r.warnings, { vary: false, cachePublic: false });
    }
    case 'openapi-v3-doc':
      return openapiDoc(x, info, path.gv);
  }
}

export type { AggregatedVersion };

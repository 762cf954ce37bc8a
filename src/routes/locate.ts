/**
 * Finding the cluster that owns the object a write or connect names: src/plan/owner.ts decides, and
 * when a plain name pins no cluster, every cluster is asked whether it has the object (metadata only).
 * Also what the owner's answer means when Karmada's cluster proxy could not reach it ({@link undialed}).
 * Not a route: routes import it; it imports no route.
 */
import { failure, parseStatus, readStatus, type Status, statusResponse } from '../kube/status.ts';
import { unresolvedNameTerms } from '../merge/fieldnames.ts';
import { decodeName, encodeName, isShortenedName } from '../merge/names/index.ts';
import { isAmbiguous } from '../merge/names/memo.ts';
import type { FleetView } from '../merge/objects/index.ts';
import { type Owner, ownerAmong, ownerOf, ownerProbe } from '../plan/owner.ts';
import { undialedMember } from '../plan/unserved.ts';
import type { RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';
import { TtlCache } from '../util/ttlcache.ts';

/** What finding an owner uses of the fleet: asking clusters, and the fleet view for names. */
export type LocateDeps = FanOutDeps & Pick<ClustersDeps, 'config'>;

import { fanOut, type Target } from '../upstreams/fanout.ts';

/**
 * The owner of `info.name` among `targets`, or the Status to answer (400 contradicting clusterspace, 404
 * nowhere, 409 in several clusters). Asks the clusters only when the name is plain and nothing pins it.
 */
export async function findOwner(
  deps: LocateDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
  signal: AbortSignal,
): Promise<Owner<Target> | Status> {
  const view: FleetView = { federation: deps.config.federation };
  const planned = ownerOf(view, info, targets, plainNameCluster);
  if (!('search' in planned)) return planned;
  const probe = ownerProbe(info, planned.plain);
  const outcomes = await fanOut(deps, targets, () => ({
    ...probe,
    headers: new Headers(probe.headers),
    signal,
  }));
  await Promise.all(outcomes.map((o) => (o.ok ? o.res.body?.cancel() : undefined)));
  return ownerAmong(
    view,
    info,
    planned.plain,
    outcomes.filter((o) => o.ok && o.res.ok).map((o) => o.target),
    // no answer, or none of the cluster's own (a 5xx: Karmada's proxy could not dial it, say): unknown
    outcomes.filter((o) => !o.ok || o.res.status >= 500).map((o) => o.target.cluster),
  );
}

// ------------------------------------------------------------------------ a member the proxy cannot dial

/** A cluster and how it is reached: a fan-out's {@link Target}, or a passthrough's clusterspace. */
type Reached = Pick<Target, 'cluster' | 'endpoint'> & { controlPlane?: boolean };

/** whether `target` is reached through Karmada's cluster proxy (src/upstreams/endpoint.ts viaClusterProxy) */
function throughClusterProxy(target: Reached): boolean {
  return (
    !target.controlPlane &&
    target.endpoint.server.endsWith(
      `/apis/cluster.karmada.io/v1alpha1/clusters/${encodeURIComponent(target.cluster)}/proxy`,
    )
  );
}

/**
 * `res`, `target`'s answer to a request for one object (get, write, logs, exec), unless it is Karmada's
 * cluster proxy saying it could not dial the member (src/plan/unserved.ts undialedMember): that becomes the
 * fleet's 503 naming the cluster, as for a member the fleet cannot reach itself. Only a 500 from a member
 * reached through the proxy is read (its body is small); every other answer is returned untouched.
 * Passthrough (`/clusterspaces/<member>/…`) asks it too: the proxy's 500 is not the member's answer.
 */
export async function undialed(target: Reached, res: Response): Promise<Response> {
  if (res.status !== 500 || !throughClusterProxy(target)) return res;
  const text = await res.text().catch(() => '');
  const body = parseStatus(text);
  const down =
    body && typeof body.code === 'number' ? undialedMember(target.cluster, res.status, body) : undefined;
  if (down) return statusResponse(down);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// ------------------------------------------------------------------------------------ shortened names

/** Objects asked per page, and pages at most, when a shortened name is looked up in its cluster. */
export const LOOKUP_PAGE = 500;
export const LOOKUP_MAX_PAGES = 20;

/** the collection a request's object belongs to (`/api/v1/namespaces/ns/configmaps`), percent-encoded */
function collectionPath(info: RequestInfo): string {
  const base =
    info.apiPrefix === 'api' ? `/api/${info.apiVersion}` : `/apis/${info.apiGroup}/${info.apiVersion}`;
  const ns =
    info.namespace && info.resource !== 'namespaces'
      ? `/namespaces/${encodeURIComponent(info.namespace)}`
      : '';
  return `${base}${ns}/${encodeURIComponent(info.resource)}`;
}

/** where a shortened name in `field` is looked for: which collection, which value of its items */
function lookupFor(info: RequestInfo, field: string): { path: string; metadataOnly: boolean } {
  if (field === 'metadata.name')
    return { path: info.name ? collectionPath(info) : info.kubePath, metadataOnly: true };
  // a pod's node: the cluster's nodes
  if (field === 'spec.nodeName' || field === 'status.nominatedNodeName')
    return { path: '/api/v1/nodes', metadataOnly: true };
  // events' objects (involvedObject, regarding, related) can be of any kind: the events themselves say
  return { path: info.kubePath, metadataOnly: false };
}

function valueAt(item: unknown, field: string): unknown {
  if (field === 'spec.nodeName' || field === 'status.nominatedNodeName') field = 'metadata.name';
  let v: unknown = item;
  for (const key of field.split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/**
 * Looks `short` up in its cluster: lists `path` there a page at a time (as the caller: its RBAC decides)
 * and shortens every name met, which teaches names.ts what they stand for, until `short` is known. The
 * answer is the cluster's refusal, if it refused; otherwise undefined (found, or no such object).
 */
async function lookUp(
  deps: FanOutDeps,
  target: Target,
  where: { path: string; metadataOnly: boolean },
  field: string,
  short: string,
  signal: AbortSignal,
): Promise<Status | undefined> {
  const headers = new Headers({
    Accept: where.metadataOnly
      ? 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json'
      : 'application/json',
    'Accept-Encoding': 'identity',
  });
  let cont = '';
  for (let page = 0; page < LOOKUP_MAX_PAGES; page++) {
    const q = new URLSearchParams({ limit: String(LOOKUP_PAGE) });
    if (cont) q.set('continue', cont);
    const res = await deps.client.send(target.endpoint, {
      method: 'GET',
      path: `${where.path}?${q}`,
      headers: new Headers(headers),
      signal,
    });
    if (!res.ok) {
      const status = await readStatus(res);
      return (
        (status && throughClusterProxy(target)
          ? undialedMember(target.cluster, res.status, status)
          : undefined) ??
        status ??
        failure(503, 'ServiceUnavailable', `cluster "${target.cluster}" did not answer`)
      );
    }
    const list = (await res.json()) as { items?: unknown[]; metadata?: { continue?: string } };
    for (const item of list.items ?? []) {
      const v = valueAt(item, field);
      if (typeof v === 'string' && v !== '') encodeName(v, target.cluster);
    }
    if (decodeName(short).unresolved === undefined || isAmbiguous(short)) return undefined;
    cont = list.metadata?.continue ?? '';
    if (!cont) return undefined;
  }
  return undefined;
}

/** How long a shortened name looked up and found nowhere is taken as found nowhere, and how many are kept. */
export const MISS_TTL_MS = 5_000;
export const MISS_MAX_NAMES = 1024;
/** scopes (caller × collection × field) remembered per name: one name asked by many callers stays bounded */
const MISS_MAX_SCOPES = 16;

/**
 * Shortened names a lookup found nowhere, so that asking a made-up one again (a typo retried, a script, a
 * client polling an object that is gone) costs no new walk of up to LOOKUP_MAX_PAGES pages while the
 * answer is fresh. Per process or isolate, like the names memo; bounded (MISS_MAX_NAMES names, the least
 * recently written go first; MISS_MAX_SCOPES scopes each) and short-lived (MISS_TTL_MS): an object made
 * meanwhile by other means (directly in the cluster, through another replica) is found once it expires. A
 * create through this instance forgets its name at once ({@link forgetMissedName}). Scoped by the caller
 * (the lookup is sent as the caller: another's RBAC may refuse it), the collection and the field.
 */
let misses = new TtlCache<Map<string, number>>(MISS_TTL_MS, MISS_MAX_NAMES);

function missed(short: string, scope: string): boolean {
  const scopes = misses.get(short);
  const until = scopes?.get(scope);
  if (until === undefined) return false;
  if (Date.now() < until) return true;
  scopes!.delete(scope);
  return false;
}

function rememberMiss(short: string, scope: string): void {
  const scopes = misses.get(short) ?? new Map<string, number>();
  scopes.delete(scope);
  scopes.set(scope, Date.now() + MISS_TTL_MS);
  if (scopes.size > MISS_MAX_SCOPES) scopes.delete(scopes.keys().next().value!);
  misses.set(short, scopes);
}

/** A shortened name created through the fleet: no longer found nowhere. */
export function forgetMissedName(short: string): void {
  misses.delete(short);
}

/** Tests only: forget every miss. */
export function forgetMisses(): void {
  misses = new TtlCache(MISS_TTL_MS, MISS_MAX_NAMES);
}

/** who asks what: the caller's identity on the wire (hashed: it may hold a token), the collection, the field */
async function missScope(deps: FanOutDeps, path: string, field: string): Promise<string> {
  const material = JSON.stringify([deps.client.caller ?? null, path, field]);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(material));
  let hex = '';
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Makes the shortened fleet names a request carries known (src/merge/names/index.ts): the URL's name, and the
 * values of a collection's field selector that name objects. Each one this instance has not met is looked
 * up in its cluster (a list of that kind there, metadata only for names; see {@link lookUp}); afterwards
 * the request is planned as if the long name had been given. Answers a Status only when the request
 * cannot go on: the cluster refused the lookup of the URL's name (say RBAC allows get but not list), or
 * two names shorten alike (409). A name nothing matches stays unresolved: the owner is then not found, a
 * selector term matches nothing. A no-op (no I/O) for every request without a shortened name.
 */
export async function resolveShortenedNames(
  deps: FanOutDeps,
  info: RequestInfo,
  req: Request,
  targets: readonly Target[],
): Promise<Status | undefined> {
  const asked: { field: string; value: string; url: boolean }[] = [];
  if (info.name && isShortenedName(info.name) && decodeName(info.name).unresolved)
    asked.push({ field: 'metadata.name', value: info.name, url: true });
  if (!info.name && req.url.includes('clusterspace-h'))
    for (const t of unresolvedNameTerms(new URL(req.url).searchParams.get('fieldSelector')))
      asked.push({ ...t, url: false });
  for (const a of asked) {
    const cluster = decodeName(a.value).cluster!;
    const target = targets.find((t) => t.cluster === cluster);
    // a cluster outside the clusterspace: the plan answers that (400 or 404)
    if (!target) continue;
    const where = lookupFor(info, a.field);
    // found nowhere a moment ago, by this caller: nowhere still (it stays unresolved)
    const scope = await missScope(deps, where.path, a.field);
    if (missed(a.value, scope)) continue;
    const refused = await lookUp(deps, target, where, a.field, a.value, req.signal);
    if (refused && a.url) return refused;
    if (!refused && decodeName(a.value).unresolved !== undefined && !isAmbiguous(a.value))
      rememberMiss(a.value, scope);
    if (isAmbiguous(a.value))
      return failure(
        409,
        'Conflict',
        `the shortened fleet name "${a.value}" stands for several objects of cluster "${cluster}"; ` +
          `name the object by its own name: <name>.clusterspace.${cluster}, or the name alone under /clusterspaces/${cluster}/`,
      );
  }
  return undefined;
}

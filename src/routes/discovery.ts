/**
 * Discovery of a fleet clusterspace (`all`, the vanilla API): the documents a client reads before
 * anything else, answered from every cluster of the clusterspace.
 *
 *   /api, /apis                 merged; legacy JSON or aggregated discovery (v2, v2beta1) by Accept,
 *                               with ETag, If-None-Match → 304 and Vary: Accept, like kube-apiserver
 *   /api/v1, /apis/<g>[/<v>]    merged legacy documents (a cluster's 404 = it does not serve that)
 *   /version                    the control plane's (when among the clusters), else the first cluster's
 *
 * OpenAPI is src/routes/openapi.ts; asking, judging failures and caching are src/routes/gather.ts.
 */
import type { Context } from 'hono';
import {
  AGGREGATED_UPSTREAM_ACCEPT,
  type APIGroup,
  type APIGroupDiscovery,
  type APIGroupList,
  type APIResourceList,
  type APIVersions,
  aggregatedContentType,
  aggregatedVersionOf,
  type DiscoveryForm,
  negotiateDiscovery,
} from '../kube/discovery.ts';
import { failure, statusResponse } from '../kube/status.ts';
import {
  aggregatedFromLegacy,
  type ClusterDoc,
  mergeAggregated,
  mergeAPIGroup,
  mergeAPIGroupList,
  mergeAPIResourceList,
  mergeAPIVersions,
} from '../merge/discovery.ts';
import {
  legacyGroupDoc,
  legacyGroupList,
  legacyResourceList,
  legacyVersions,
  markStale,
} from '../merge/lastknown.ts';
import { type CallerKey, type DocumentPath, discoveryCacheKey } from '../plan/discovery.ts';
import type { RequestInfo } from '../request/info.ts';
import type { Target } from '../upstreams/fanout.ts';
import {
  type Ctx,
  type DiscoveryDeps,
  docsOf,
  firstAnswer,
  type Got,
  gather,
  judge,
  merged,
  notFound,
  parseDoc,
  refuseDiscovery,
  render,
  respondDoc,
} from './gather.ts';
import { type KeptAt, keep, withLastKnown } from './lastknown.ts';

export async function discoveryRoute(
  c: Context,
  deps: DiscoveryDeps,
  info: RequestInfo,
  targets: Target[],
  path: DocumentPath,
): Promise<Response> {
  const req = c.req.raw;
  const refused = refuseDiscovery(req, targets);
  if (refused) return refused;
  const x: Ctx = { req, deps, targets, caller: c.get('identity') as CallerKey | undefined };
  const accept = req.headers.get('accept');
  switch (path.kind) {
    case 'root': {
      const form = negotiateDiscovery(accept, true);
      return form ? root(x, path.which, form) : notAcceptable();
    }
    case 'group': {
      if (!negotiateDiscovery(accept, false)) return notAcceptable();
      return legacyDoc(
        x,
        info.kubePath,
        isGroup,
        (docs: Array<ClusterDoc<APIGroup>>) => mergeAPIGroup(docs),
        { group: path.group },
      );
    }
    case 'resources': {
      if (!negotiateDiscovery(accept, false)) return notAcceptable();
      return legacyDoc(
        x,
        info.kubePath,
        isResourceList,
        (docs: Array<ClusterDoc<APIResourceList>>) => mergeAPIResourceList(docs),
        { group: path.group, version: path.version },
      );
    }
    case 'version': {
      const order = [...targets.filter((t) => t.controlPlane), ...targets.filter((t) => !t.controlPlane)];
      return firstAnswer(x, order, '/version', new Headers({ Accept: 'application/json' }), (s) => s < 300);
    }
  }
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

const isAPIVersions = (d: any) => d.kind === 'APIVersions' || Array.isArray(d.versions);
const isGroupList = (d: any) => d.kind === 'APIGroupList' || Array.isArray(d.groups);
const isAggregated = (d: any) => d.kind === 'APIGroupDiscoveryList' || Array.isArray(d.items);
const isResourceList = (d: any) => d.kind === 'APIResourceList' || Array.isArray(d.resources);
const isGroup = (d: any) => typeof d.name === 'string' && Array.isArray(d.versions);

// ---------------------------------------------------------------------------------------------------
// /api and /apis

async function root(x: Ctx, which: 'api' | 'apis', form: DiscoveryForm): Promise<Response> {
  const path = `/${which}`;
  const host = new URL(x.req.url).host;
  const formKey = form.kind === 'legacy' ? 'legacy' : form.version;
  const key = discoveryCacheKey(x.targets, x.caller, path, formKey, which === 'api' ? host : '');
  const at: KeptAt = { deps: x.deps, caller: x.caller, which };
  const out = await merged(x, key, async (p) => {
    if (form.kind === 'legacy') {
      const asked = await gather(x, x.targets, path, 'application/json', false);
      // a cluster that cannot be asked: its entries as last seen (legacy discovery has no freshness)
      const kept = withLastKnown(at, asked, (items) =>
        json(which === 'api' ? legacyVersions(items) : legacyGroupList(items)),
      );
      p.warnings.push(...kept.warnings);
      const { docs, got: g2 } = docsOf<APIVersions & APIGroupList>(
        kept.got,
        which === 'api' ? isAPIVersions : isGroupList,
      );
      const stop = judge(g2, p);
      if (stop) return stop;
      const doc =
        which === 'api'
          ? mergeAPIVersions(docs, [{ clientCIDR: '0.0.0.0/0', serverAddress: host }])
          : mergeAPIGroupList(docs);
      return render(doc, 'application/json');
    }
    const asked = await gather(x, x.targets, path, AGGREGATED_UPSTREAM_ACCEPT, false);
    const docs: Array<ClusterDoc<{ items?: APIGroupDiscovery[] }>> = [];
    const judged = await Promise.all(asked.map((g) => aggregatedDoc(x, which, g, docs)));
    for (const d of docs) {
      const g = asked.find((a) => a.target.cluster === d.cluster);
      keep(at, d.cluster, d.doc.items ?? [], g?.kind === 'ok' ? g.body.length : 0);
    }
    // a cluster that cannot be asked: its APIs as last seen, every version Stale (as kube-aggregator
    // marks an APIService it could not reach)
    const kept = withLastKnown(at, judged, (items) => json({ items: markStale(items) }));
    p.warnings.push(...kept.warnings);
    for (const g of kept.got)
      if (g.kind === 'ok' && !judged.includes(g))
        docs.push({ cluster: g.target.cluster, doc: JSON.parse(g.body) });
    const stop = judge(kept.got, p);
    if (stop) return stop;
    // keep fleet order whatever order the conversions finished in
    const order = new Map(x.targets.map((t, i) => [t.cluster, i]));
    docs.sort((a, b) => order.get(a.cluster)! - order.get(b.cluster)!);
    return render(mergeAggregated(docs, form.version), aggregatedContentType(form.version));
  });
  if (out instanceof Response) return out;
  return respondDoc(x.req, out.rendered, out.warnings, {
    vary: true,
    cachePublic: form.kind === 'aggregated',
  });
}

const json = (doc: unknown) => ({ body: JSON.stringify(doc), contentType: 'application/json' });

/**
 * One cluster's answer to the aggregated request, pushed onto `docs`: aggregated when the cluster says so
 * (Content-Type) or the body is one (a proxy may drop parameters); a legacy document is converted.
 */
async function aggregatedDoc(
  x: Ctx,
  which: 'api' | 'apis',
  g: Got,
  docs: Array<ClusterDoc<{ items?: APIGroupDiscovery[] }>>,
): Promise<Got> {
  if (g.kind !== 'ok') return g;
  const notDiscovery: Got = {
    target: g.target,
    kind: 'failed',
    reason: 'the answer is not a discovery document',
  };
  let d: any;
  try {
    d = JSON.parse(g.body);
  } catch {
    return notDiscovery;
  }
  if (aggregatedVersionOf(g.contentType) !== undefined || d?.kind === 'APIGroupDiscoveryList') {
    if (!d || typeof d !== 'object' || !isAggregated(d)) return notDiscovery;
    docs.push({ cluster: g.target.cluster, doc: d });
    return g;
  }
  const legacy = d as APIVersions | APIGroupList;
  if (!legacy || typeof legacy !== 'object' || !(which === 'api' ? isAPIVersions : isGroupList)(legacy))
    return notDiscovery;
  const conv = await legacyAsAggregated(x, g.target, which, legacy);
  if (typeof conv === 'string') return { target: g.target, kind: 'failed', reason: conv };
  docs.push({ cluster: g.target.cluster, doc: conv });
  return g;
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
      const [got] = await gather(x, [target], path, 'application/json', true);
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

// ---------------------------------------------------------------------------------------------------
// /apis/<g>, /api/v1, /apis/<g>/<v>

async function legacyDoc(
  x: Ctx,
  path: string,
  check: (d: any) => boolean,
  merge: (docs: Array<ClusterDoc<any>>) => unknown | undefined,
  fromKept: { group: string; version?: string },
): Promise<Response> {
  const key = discoveryCacheKey(x.targets, x.caller, path, 'legacy');
  const at: KeptAt = { deps: x.deps, caller: x.caller, which: fromKept.group ? 'apis' : 'api' };
  const out = await merged(x, key, async (p) => {
    const asked = await gather(x, x.targets, path, 'application/json', true);
    // a cluster that cannot be asked: what its last seen aggregated document says of this group(-version)
    const kept = withLastKnown(at, asked, (items) => {
      const { group, version } = fromKept;
      const doc =
        version === undefined ? legacyGroupDoc(items, group) : legacyResourceList(items, group, version);
      return doc && json(doc);
    });
    p.warnings.push(...kept.warnings);
    const { docs, got: g2 } = docsOf(kept.got, check);
    const stop = judge(g2, p);
    if (stop) return stop;
    const doc = merge(docs);
    if (doc === undefined) return notFound(p.warnings);
    return render(doc, 'application/json');
  });
  if (out instanceof Response) return out;
  return respondDoc(x.req, out.rendered, out.warnings, { vary: false, cachePublic: false });
}

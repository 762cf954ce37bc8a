/**
 * OpenAPI of a fleet clusterspace:
 *
 *   /openapi/v3                 merged root; every serverRelativeURL stays relative to the fleet
 *   /openapi/v3/<gv>?hash=…     passed through from a cluster that publishes the gv (that hash first)
 *   /openapi/v2                 passed through (protobuf bytes) from the first cluster that answers it
 *
 * Asking and caching: src/routes/gather.ts.
 */
import type { Context } from 'hono';
import type { OpenAPIV3Root } from '../kube/discovery.ts';
import { mergeOpenAPIV3Roots, type OpenAPIServer, openAPIClustersFor } from '../merge/openapi.ts';
import {
  type CallerKey,
  clientPrefix,
  discoveryCacheKey,
  type OpenAPIPath,
  openapiLocation,
} from '../plan/discovery.ts';
import type { RequestInfo } from '../request/info.ts';
import type { Target } from '../upstreams/fanout.ts';
import { warningHeader } from '../upstreams/fanout.ts';
import {
  type Ctx,
  cacheGet,
  cachePut,
  type DiscoveryDeps,
  docsOf,
  firstAnswer,
  gather,
  judge,
  notFound,
  type Partial,
  passHeaders,
  type Rendered,
  refuseDiscovery,
  render,
  respondDoc,
} from './gather.ts';

export async function openapiRoute(
  c: Context,
  deps: DiscoveryDeps,
  info: RequestInfo,
  targets: Target[],
  path: OpenAPIPath,
): Promise<Response> {
  const req = c.req.raw;
  const refused = refuseDiscovery(req, targets);
  if (refused) return refused;
  const x: Ctx = { req, deps, targets, caller: c.get('identity') as CallerKey | undefined };
  switch (path.kind) {
    case 'openapi-v2':
      return firstAnswer(x, targets, '/openapi/v2', passHeaders(req), (s) => s < 400);
    case 'openapi-v3-root': {
      const r = await openapiRoot(x);
      if (r instanceof Response) return r;
      return respondDoc(req, r.root.rendered, r.warnings, { vary: false, cachePublic: false });
    }
    case 'openapi-v3-doc':
      return openapiDoc(x, info, path.gv);
  }
}

interface V3Root {
  rendered: Rendered;
  /** per group-version path, the clusters that publish it and their hashes */
  servedBy: Array<[string, OpenAPIServer[]]>;
}

async function openapiRoot(x: Ctx): Promise<{ root: V3Root; warnings: string[] } | Response> {
  const key = discoveryCacheKey(x.targets, x.caller, '/openapi/v3');
  const hit = cacheGet<V3Root>(x.deps, key);
  if (hit) return { root: hit, warnings: [] };
  const p: Partial = { warnings: [], failed: [] };
  const got = await gather(x, x.targets, '/openapi/v3', 'application/json', false);
  const { docs, got: g2 } = docsOf<OpenAPIV3Root>(
    got,
    (d) => typeof d.paths === 'object' && d.paths !== null,
  );
  const stop = judge(g2, p);
  if (stop) return stop;
  const { root, servedBy } = mergeOpenAPIV3Roots(docs);
  const v3: V3Root = { rendered: await render(root, 'application/json'), servedBy: [...servedBy] };
  if (p.warnings.length === 0) cachePut(x.deps, key, v3);
  return { root: v3, warnings: p.warnings };
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

/**
 * The fleet's OpenAPI v3 root: every path any cluster serves, and which clusters serve it with which
 * document hash, so that a document is fetched from a cluster that has that very version.
 */
import type { OpenAPIV3Root } from '../kube/discovery.ts';
import type { ClusterDoc } from './discovery.ts';

const lexical = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface OpenAPIServer {
  cluster: string;
  /** the `hash` of the cluster's serverRelativeURL, when it has one */
  hash?: string;
}

function hashOf(serverRelativeURL: string): string | undefined {
  const q = serverRelativeURL.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(serverRelativeURL.slice(q + 1)).get('hash') ?? undefined;
}

/**
 * GET /openapi/v3: every group-version path any cluster publishes, with the serverRelativeURL of the first
 * cluster (fleet order) that publishes it, left relative: the fleet serves `/openapi/v3/<gv>?hash=…` by
 * asking that cluster, so the URL (and its hash) stays valid through the fleet, under any base path the
 * client uses. Keys sorted, as kube-openapi writes them. `servedBy` lists, per path, every cluster that
 * publishes it (fleet order) and its hash.
 */
export function mergeOpenAPIV3Roots(inputs: ReadonlyArray<ClusterDoc<OpenAPIV3Root>>): {
  root: OpenAPIV3Root;
  servedBy: Map<string, OpenAPIServer[]>;
} {
  const servedBy = new Map<string, OpenAPIServer[]>();
  const first = new Map<string, string>();
  for (const { cluster, doc } of inputs)
    for (const [path, entry] of Object.entries(doc.paths ?? {})) {
      const url = entry?.serverRelativeURL;
      if (typeof url !== 'string') continue;
      if (!first.has(path)) first.set(path, url);
      const hash = hashOf(url);
      const l = servedBy.get(path) ?? [];
      l.push(hash === undefined ? { cluster } : { cluster, hash });
      servedBy.set(path, l);
    }
  const paths: OpenAPIV3Root['paths'] = {};
  for (const p of [...first.keys()].sort(lexical)) paths[p] = { serverRelativeURL: first.get(p)! };
  return { root: { paths }, servedBy };
}

/**
 * Which clusters to ask for `/openapi/v3/<path>?hash=<hash>`, best first: those whose document has that
 * very hash (fleet order), then the others serving the path (fleet order; a stale hash makes the first of
 * them redirect to its current one, as kube-openapi does).
 */
export function openAPIClustersFor(servers: readonly OpenAPIServer[], hash: string | undefined): string[] {
  const match = hash ? servers.filter((s) => s.hash === hash) : [];
  return [...match, ...servers.filter((s) => !match.includes(s))].map((s) => s.cluster);
}

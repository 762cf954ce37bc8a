/**
 * The catalog of a simulated kube-apiserver: which resources it serves, its discovery documents,
 * Table printers, OpenAPI documents and sample objects. The engine (sim/*.ts) uses it
 * only through the Catalog interface in ./types.ts.
 */
import { aggregated, apiGroup, apiGroupList, apiResourceList, legacyApi, versionInfo } from './discovery.ts';
import { OpenApi } from './openapi.ts';
import { crdPrinter, defaultPrinter, PRINTERS } from './printers.ts';
import { resourceTable } from './resources.ts';
import { sampleObjects } from './samples.ts';
import type { Catalog, CatalogOptions, ResourceDef } from './types.ts';

export { age, humanDuration, shortHumanDuration } from './duration.ts';
export { crdPrinter, defaultPrinter, formatLabels, PRINTERS, selectorString } from './printers.ts';
export type { Catalog, CatalogOptions, ResourceDef } from './types.ts';

// OpenAPI documents depend only on the served resources; clusters alike share them (and their hashes,
// which cost a few tens of milliseconds to compute).
const openApis = new Map<string, OpenApi>();
function sharedOpenApi(resources: readonly ResourceDef[]): OpenApi {
  const key = resources.map((r) => `${r.group}/${r.version}/${r.resource}`).join(',');
  let o = openApis.get(key);
  if (!o) {
    o = new OpenApi(resources);
    openApis.set(key, o);
  }
  return o;
}

function withPrinter(def: ResourceDef): ResourceDef {
  const p = PRINTERS[`${def.group}/${def.resource}`];
  if (p) def.printer = p;
  else def.printer = def.custom ? crdPrinter([]) : defaultPrinter;
  return def;
}

export function buildCatalog(options: CatalogOptions): Catalog {
  const opts: CatalogOptions = { ...options };
  const resources: readonly ResourceDef[] = Object.freeze(resourceTable(opts).map(withPrinter));
  const index = new Map(resources.map((r) => [`${r.group}/${r.version}/${r.resource}`, r]));
  const cache = new Map<string, unknown>();
  // documents are built once and handed out as copies, so that a caller may change what it gets
  const memo = <T>(key: string, make: () => T): T => {
    if (!cache.has(key)) cache.set(key, make());
    const v = cache.get(key) as T;
    return v === undefined ? v : structuredClone(v);
  };
  const openapi = sharedOpenApi(resources);
  return {
    options: opts,
    resources,
    find: (group, version, resource) => index.get(`${group}/${version}/${resource}`),
    version: () => ({ ...versionInfo(opts.kubernetesVersion) }),
    legacyApi: () => legacyApi(),
    apiGroupList: () => memo('groups', () => apiGroupList(resources)),
    apiGroup: (group) => memo(`group:${group}`, () => apiGroup(resources, group)),
    apiResourceList: (group, version) =>
      memo(`rl:${group}/${version}`, () => apiResourceList(resources, group, version)),
    aggregated: (which, version) =>
      memo(`agg:${which}:${version}`, () => aggregated(resources, which, version)),
    openapiV3Root: () => openapi.root(),
    openapiV3: (path) => openapi.v3(path),
    openapiV2: () => openapi.v2(),
    sampleObjects: (clusterName) => sampleObjects(clusterName, opts),
  };
}

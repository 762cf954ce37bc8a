/**
 * The contract between the simulated apiserver's engine (sim/*.ts: store, list, watch,
 * patch, tables, faults) and its catalog (sim/catalog/: which resources a cluster serves,
 * their discovery documents, Table printers, OpenAPI documents and sample objects).
 *
 * Everything here is Web-standard TypeScript: the simulated clusters run in Node and in workerd.
 */

/** meta.k8s.io/v1 TableColumnDefinition */
export interface ColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string; // 'name' for the Name column, '' otherwise (as kube-apiserver writes it)
  description: string;
  priority: number; // 0 = shown by default, 1 = only with -o wide
}

export interface TablePrinter {
  columns: ColumnDefinition[];
  /** One row's cells, in column order. `now` lets Age cells be computed deterministically. */
  cells(obj: KubeObject, now: Date): unknown[];
}

export interface SubresourceDef {
  name: string; // 'status', 'scale', 'log', 'exec', ...
  kind: string; // response kind: 'Pod', 'Scale', ...
  group?: string; // response group when it differs (autoscaling for scale)
  version?: string;
  verbs: string[];
}

export interface ResourceDef {
  group: string; // '' for the core group
  version: string;
  resource: string; // plural, e.g. 'pods'
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceDef[];
  /** Table printer; absent → the default printer (Name, Age), like kube-apiserver's default table convertor. */
  printer?: TablePrinter;
  /** true for custom resources (served from a CRD) */
  custom?: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<Record<string, unknown>>;
    finalizers?: string[];
    managedFields?: Array<Record<string, unknown>>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface CatalogOptions {
  /** 'karmada' adds cluster.karmada.io, policy.karmada.io, work.karmada.io groups like a karmada-apiserver. */
  role: 'member' | 'karmada';
  /** serve the custom resource kind used by tests (only some members have it) */
  crds: boolean;
  /** serve the Gadget CRD (gadgets.fleet.io), which a test installs in one member mid-run (SimCluster.serveGadgets) */
  gadgets?: boolean;
  /** gitVersion for /version, e.g. 'v1.35.0'; lets tests simulate version skew */
  kubernetesVersion: string;
  /** serve ClusterProfiles (multicluster.x-k8s.io, from the cluster-inventory-api CRD): a hub */
  clusterInventory?: boolean;
}

export interface Catalog {
  readonly options: CatalogOptions;
  readonly resources: readonly ResourceDef[];
  /** the resource at group/version/resource, or undefined when this cluster does not serve it */
  find(group: string, version: string, resource: string): ResourceDef | undefined;
  /** GET /version body */
  version(): Record<string, string>;
  /** GET /api (APIVersions) */
  legacyApi(): unknown;
  /** GET /apis (APIGroupList) */
  apiGroupList(): unknown;
  /** GET /apis/<group> (APIGroup), undefined → 404 */
  apiGroup(group: string): unknown | undefined;
  /** GET /api/v1 or /apis/<g>/<v> (APIResourceList), undefined → 404 */
  apiResourceList(group: string, version: string): unknown | undefined;
  /**
   * Aggregated discovery (APIGroupDiscoveryList) for GET /api (`legacy`) or /apis (`apis`),
   * version 'v2' (apidiscovery.k8s.io/v2) or 'v2beta1'.
   */
  aggregated(which: 'legacy' | 'apis', version: 'v2' | 'v2beta1'): unknown;
  /** GET /openapi/v3 root: { paths: { "api/v1": { serverRelativeURL: "/openapi/v3/api/v1?hash=…" } } } */
  openapiV3Root(): unknown;
  /** GET /openapi/v3/<api/v1|apis/g/v>: the OpenAPI v3 document, undefined → 404 */
  openapiV3(path: string): unknown | undefined;
  /** GET /openapi/v2: the Swagger 2.0 document as JSON (the engine encodes protobuf if asked) */
  openapiV2(): unknown;
  /** Objects a cluster starts with when seeded: names, namespaces, labels, realistic specs/statuses. */
  sampleObjects(
    clusterName: string,
  ): Array<{ group: string; version: string; resource: string; object: KubeObject }>;
}

/**
 * The simulated kube-apiserver (and Karmada control plane) used by the demo and every test.
 * `SimCluster.fetch` is the whole apiserver as one Web-standard handler; the rest is exported so
 * wrappers can compose (intercept paths in `handle`, reuse the store, list, watch and patch engines).
 */

export type { Catalog, KubeObject, ResourceDef } from './catalog/types.ts';
export {
  type RequestRecord,
  type ResolvedOptions,
  SimCluster,
  type SimClusterOptions,
  type SimFaults,
} from './cluster.ts';
export { CLUSTER_PROFILES, type ProfileOptions, SimProfileHub } from './clusterprofiles.ts';
export { serveDiscovery } from './discovery.ts';
export { negotiateResource, pageNotFound, parseAccept, StatusError } from './http.ts';
export { createSimFleet, memberEndpoint, SimKarmada, type SimKarmadaOptions } from './karmada.ts';
export { CONTINUE_EXPIRED, decodeContinue, encodeContinue, tooLargeResourceVersion } from './list.ts';
export { type Gvr, present, timestamp } from './objects.ts';
export { applyMerge, jsonPatch, mergePatch, strategicMergePatch } from './patch.ts';
export { parseResourcePath, type ResourceInfo } from './paths.ts';
export { propagate } from './propagation.ts';
export { handleResource } from './resources.ts';
export { parseFieldSelector, parseLabelSelector } from './selectors.ts';
export { Store, type StoreEvent } from './store.ts';
export { DEFAULT_PRINTER, humanDuration, toTable } from './table.ts';
export type { OpenWatch } from './watch.ts';

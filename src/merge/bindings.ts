/**
 * Karmada's bindings as the fleet reads them (docs/propagation.md), pure: where they are, how one is read,
 * and the index a list, a watch, a GET and a drift report are enriched from. Here, not in plan/, so that
 * the one reader (upstreams/bindings.ts) can use it: upstreams/ may import merge/, never plan/.
 *
 * A namespaced template has a ResourceBinding in its namespace; a cluster-scoped one (ClusterRole,
 * Namespace, CRD… under a ClusterPropagationPolicy) a ClusterResourceBinding. Both are
 * work.karmada.io/v1alpha2 with the same spec (resource, clusters) and status (aggregatedStatus); Karmada
 * names them `<name>-<kind>` (pkg/util/names GenerateBindingName), but the template is known by
 * spec.resource, never by the binding's name. The copies and Works of each carry their own keys (v1.18,
 * work/v1alpha2 well-known constants): `resourcebinding.karmada.io/{name,namespace}` and
 * `resourcebinding.karmada.io/permanent-id`, or `clusterresourcebinding.karmada.io/name` and
 * `clusterresourcebinding.karmada.io/permanent-id`.
 */

export const BINDING_NAME_ANNOTATION = 'resourcebinding.karmada.io/name';
export const BINDING_NAMESPACE_ANNOTATION = 'resourcebinding.karmada.io/namespace';
export const BINDING_ID_LABEL = 'resourcebinding.karmada.io/permanent-id';
export const CLUSTER_BINDING_NAME_ANNOTATION = 'clusterresourcebinding.karmada.io/name';
export const CLUSTER_BINDING_ID_LABEL = 'clusterresourcebinding.karmada.io/permanent-id';
export const WORK_NAME_ANNOTATION = 'work.karmada.io/name';
export const WORK_NAMESPACE_ANNOTATION = 'work.karmada.io/namespace';

export const BINDINGS_GROUP_VERSION = 'work.karmada.io/v1alpha2';
export const WORKS_GROUP_VERSION = 'work.karmada.io/v1alpha1';

/** The ResourceBindings of `namespace` (all namespaces when empty). */
export function bindingsPath(namespace: string): string {
  return namespace
    ? `/apis/${BINDINGS_GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/resourcebindings`
    : `/apis/${BINDINGS_GROUP_VERSION}/resourcebindings`;
}

/** The ClusterResourceBindings (cluster-scoped templates'). */
export const CLUSTER_BINDINGS_PATH = `/apis/${BINDINGS_GROUP_VERSION}/clusterresourcebindings`;

/**
 * Which templates' bindings to read: `namespace`'s (ResourceBindings only), or with no namespace both
 * kinds (a request without one may be of a namespaced kind across namespaces or of a cluster-scoped
 * kind), or `cluster`: cluster-scoped templates only.
 */
export interface BindingScope {
  namespace: string;
  cluster?: boolean;
}

/** The binding lists to read for a scope. */
export function bindingsPaths(scope: BindingScope): string[] {
  if (scope.cluster) return [CLUSTER_BINDINGS_PATH];
  if (scope.namespace) return [bindingsPath(scope.namespace)];
  return [bindingsPath(''), CLUSTER_BINDINGS_PATH];
}

/** The Works of the given bindings (by permanent id, under the id's label), in every execution namespace. */
export function worksPath(bindingIds: readonly string[], label: string = BINDING_ID_LABEL): string {
  if (bindingIds.length === 0 || bindingIds.length > 100) return `/apis/${WORKS_GROUP_VERSION}/works`;
  const q = new URLSearchParams({ labelSelector: `${label} in (${bindingIds.join(',')})` });
  return `/apis/${WORKS_GROUP_VERSION}/works?${q}`;
}

/**
 * kube's guess of a kind's resource (apimachinery `UnsafeGuessKindToResource`), right for the built-in
 * kinds and for CRDs that follow the convention: how a binding's `spec.resource.kind` meets a list's
 * resource.
 */
export function guessResource(kind: string): string {
  const k = kind.toLowerCase();
  if (k === '') return k;
  if (k === 'endpoints') return k;
  if (k.endsWith('s')) return `${k}es`;
  if (k.endsWith('y')) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

export interface Placement {
  cluster: string;
  /** replicas Karmada gave this cluster (absent for kinds without replicas) */
  replicas?: number;
  applied?: boolean;
  /** Karmada's health of the copy: Healthy, Unhealthy, Unknown */
  health?: string;
}

export interface Propagation {
  /** the binding's namespace/name (`/name` for a ClusterResourceBinding) */
  binding: string;
  bindingId?: string;
  /** the label its id is under (its Works and copies carry it): a ClusterResourceBinding's is its own */
  idLabel: string;
  /** the template, as the binding's spec.resource names it */
  template: { apiVersion: string; kind: string; namespace: string; name: string };
  /** spec.clusters, in Karmada's order, with each cluster's aggregated status */
  placements: Placement[];
}

/** A list answer's items (nothing when it is not one). */
export function itemsOf(list: unknown): any[] {
  const items = (list as { items?: unknown } | null)?.items;
  return Array.isArray(items) ? items : [];
}

export function groupOf(apiVersion: string): string {
  const at = apiVersion.indexOf('/');
  return at < 0 ? '' : apiVersion.slice(0, at);
}

/** One binding (a ResourceBinding, or a ClusterResourceBinding: it has no namespace) read as the fleet shows it. */
export function readBinding(rb: any): Propagation | undefined {
  const md = rb?.metadata ?? {};
  const res = rb?.spec?.resource;
  if (typeof md.name !== 'string' || typeof res?.kind !== 'string' || typeof res?.name !== 'string')
    return undefined;
  const cluster = !md.namespace;
  const status = new Map<string, any>();
  for (const s of rb?.status?.aggregatedStatus ?? [])
    if (typeof s?.clusterName === 'string') status.set(s.clusterName, s);
  const placements: Placement[] = [];
  for (const c of rb?.spec?.clusters ?? []) {
    if (typeof c?.name !== 'string') continue;
    const p: Placement = { cluster: c.name };
    if (typeof c.replicas === 'number') p.replicas = c.replicas;
    const s = status.get(c.name);
    if (s && typeof s.applied === 'boolean') p.applied = s.applied;
    if (s && typeof s.health === 'string') p.health = s.health;
    placements.push(p);
  }
  const idLabel = cluster ? CLUSTER_BINDING_ID_LABEL : BINDING_ID_LABEL;
  const id = md.labels?.[idLabel];
  return {
    binding: `${md.namespace ?? ''}/${md.name}`,
    ...(typeof id === 'string' ? { bindingId: id } : {}),
    idLabel,
    template: {
      apiVersion: String(res.apiVersion ?? ''),
      kind: res.kind,
      namespace: cluster ? '' : String(res.namespace ?? md.namespace),
      name: res.name,
    },
    placements,
  };
}

/** What one list's rows and objects are enriched from: the bindings of its kind, and their Works. */
export interface PropagationIndex {
  /** by the template's `namespace/name` (`/name` when cluster-scoped; the list's kind only) */
  byTemplate: Map<string, Propagation>;
  /** by the binding's `namespace/name` */
  byBinding: Map<string, Propagation>;
  /** Work manifests by the Work's `namespace/name` (filled once the Works are read) */
  manifests: Map<string, unknown>;
  /** whether the Works could be read (false: a copy's drift is Unknown) */
  worksRead: boolean;
}

/** The bindings of binding lists (ResourceBindings, ClusterResourceBindings) whose template is of `group`/`resource`. */
export function indexBindings(
  lists: unknown | readonly unknown[],
  group: string,
  resource: string,
): PropagationIndex {
  const byTemplate = new Map<string, Propagation>();
  const byBinding = new Map<string, Propagation>();
  for (const list of Array.isArray(lists) ? lists : [lists])
    for (const rb of itemsOf(list)) {
      const p = readBinding(rb);
      if (!p || groupOf(p.template.apiVersion) !== group || guessResource(p.template.kind) !== resource)
        continue;
      byTemplate.set(`${p.template.namespace}/${p.template.name}`, p);
      byBinding.set(p.binding, p);
    }
  return { byTemplate, byBinding, manifests: new Map(), worksRead: false };
}

/** The Works to read for an index's bindings: one read per id label in use (the same read when all Works). */
export function worksPaths(index: PropagationIndex): string[] {
  const ids = new Map<string, string[]>();
  for (const p of index.byBinding.values()) {
    // a binding without its id: its Works are known only by reading them all
    if (!p.bindingId) return [worksPath([])];
    ids.set(p.idLabel, [...(ids.get(p.idLabel) ?? []), p.bindingId]);
  }
  return [...new Set([...ids].map(([label, list]) => worksPath(list, label)))];
}

/** Adds a Work list's manifests to the index (each Work's first manifest: Karmada writes one). */
export function addWorks(index: PropagationIndex, list: unknown): void {
  for (const w of itemsOf(list)) {
    const md = w?.metadata ?? {};
    const manifest = w?.spec?.workload?.manifests?.[0];
    if (typeof md.name === 'string' && manifest)
      index.manifests.set(`${md.namespace ?? ''}/${md.name}`, manifest);
  }
  index.worksRead = true;
}

/** The key of the binding a copy names with Karmada's annotations (`/name` for a ClusterResourceBinding). */
export function copyBindingKey(annotations: Record<string, unknown>): string | undefined {
  const name = annotations[BINDING_NAME_ANNOTATION];
  if (typeof name === 'string') {
    const ns = annotations[BINDING_NAMESPACE_ANNOTATION];
    return `${typeof ns === 'string' ? ns : ''}/${name}`;
  }
  const cluster = annotations[CLUSTER_BINDING_NAME_ANNOTATION];
  return typeof cluster === 'string' ? `/${cluster}` : undefined;
}

/**
 * Propagation at the fleet root (docs/propagation.md): a control-plane object Karmada propagates says
 * where it went, from its ResourceBinding (clusters, replicas per cluster, aggregated status); a member's
 * copy says which template it came from and whether it drifted from what Karmada applied (its Work's
 * manifest, src/merge/drift.ts). Pure: what to read, how to index it, what each row and object shows.
 *
 * A copy is known by Karmada's own annotations on it (v1.18, work/v1alpha2 well-known constants):
 * `resourcebinding.karmada.io/{name,namespace}` name its binding, `work.karmada.io/{name,namespace}` its
 * Work; the label `resourcebinding.karmada.io/permanent-id` is the binding's id, the selector that picks
 * the copies of one template (`kubectl get deploy -A -l resourcebinding.karmada.io/permanent-id=<id>`).
 */
import { type Difference, driftOf } from '../merge/drift.ts';
import { PROPAGATION_ANNOTATIONS as A } from '../merge/objects/index.ts';
import type { ColumnDefinition } from '../merge/table/index.ts';

export const BINDING_NAME_ANNOTATION = 'resourcebinding.karmada.io/name';
export const BINDING_NAMESPACE_ANNOTATION = 'resourcebinding.karmada.io/namespace';
export const BINDING_ID_LABEL = 'resourcebinding.karmada.io/permanent-id';
export const WORK_NAME_ANNOTATION = 'work.karmada.io/name';
export const WORK_NAMESPACE_ANNOTATION = 'work.karmada.io/namespace';

export const BINDINGS_GROUP_VERSION = 'work.karmada.io/v1alpha2';
export const WORKS_GROUP_VERSION = 'work.karmada.io/v1alpha1';

/**
 * Resources whose objects each member's own controllers make (pods of a ReplicaSet, events, endpoints,
 * leases…): never templates Karmada propagates, so their lists (the hottest: `get pods -A`) never pay
 * the binding read.
 */
const MADE_IN_MEMBERS = new Set([
  'pods',
  'events',
  'endpoints',
  'endpointslices',
  'leases',
  'replicasets',
  'controllerrevisions',
]);

/** Whether a merged list of `group`/`resource` that includes the control plane reads the bindings. */
export function mayBePropagated(info: { apiGroup: string; resource: string; subresource: string }): boolean {
  if (info.subresource) return false;
  if (info.apiGroup.endsWith('karmada.io') || info.apiGroup === 'events.k8s.io') return false;
  return !MADE_IN_MEMBERS.has(info.resource);
}

/** The bindings to read for a list of `namespace` (all namespaces when empty). */
export function bindingsPath(namespace: string): string {
  return namespace
    ? `/apis/${BINDINGS_GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/resourcebindings`
    : `/apis/${BINDINGS_GROUP_VERSION}/resourcebindings`;
}

/** The Works of the given bindings (by permanent id), in every execution namespace. */
export function worksPath(bindingIds: readonly string[]): string {
  if (bindingIds.length === 0 || bindingIds.length > 100) return `/apis/${WORKS_GROUP_VERSION}/works`;
  const q = new URLSearchParams({ labelSelector: `${BINDING_ID_LABEL} in (${bindingIds.join(',')})` });
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
  /** the binding's namespace/name */
  binding: string;
  bindingId?: string;
  /** the template, as the binding's spec.resource names it */
  template: { apiVersion: string; kind: string; namespace: string; name: string };
  /** spec.clusters, in Karmada's order, with each cluster's aggregated status */
  placements: Placement[];
}

/** A list answer's items (nothing when it is not one). */
function itemsOf(list: unknown): any[] {
  const items = (list as { items?: unknown } | null)?.items;
  return Array.isArray(items) ? items : [];
}

function groupOf(apiVersion: string): string {
  const at = apiVersion.indexOf('/');
  return at < 0 ? '' : apiVersion.slice(0, at);
}

/** One binding read as the fleet shows it. */
export function readBinding(rb: any): Propagation | undefined {
  const md = rb?.metadata ?? {};
  const res = rb?.spec?.resource;
  if (typeof md.name !== 'string' || typeof res?.kind !== 'string' || typeof res?.name !== 'string')
    return undefined;
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
  const id = md.labels?.[BINDING_ID_LABEL];
  return {
    binding: `${md.namespace ?? ''}/${md.name}`,
    ...(typeof id === 'string' ? { bindingId: id } : {}),
    template: {
      apiVersion: String(res.apiVersion ?? ''),
      kind: res.kind,
      namespace: String(res.namespace ?? md.namespace ?? ''),
      name: res.name,
    },
    placements,
  };
}

/** What one list's rows and objects are enriched from: the bindings of its kind, and their Works. */
export interface PropagationIndex {
  /** by the template's `namespace/name` (the list's kind only) */
  byTemplate: Map<string, Propagation>;
  /** by the binding's `namespace/name` */
  byBinding: Map<string, Propagation>;
  /** Work manifests by the Work's `namespace/name` (filled once the Works are read) */
  manifests: Map<string, unknown>;
  /** whether the Works could be read (false: a copy's drift is Unknown) */
  worksRead: boolean;
}

/** The bindings of a ResourceBinding list whose template is of `group`/`resource`. */
export function indexBindings(list: unknown, group: string, resource: string): PropagationIndex {
  const byTemplate = new Map<string, Propagation>();
  const byBinding = new Map<string, Propagation>();
  for (const rb of itemsOf(list)) {
    const p = readBinding(rb);
    if (!p || groupOf(p.template.apiVersion) !== group || guessResource(p.template.kind) !== resource)
      continue;
    byTemplate.set(`${p.template.namespace}/${p.template.name}`, p);
    byBinding.set(p.binding, p);
  }
  return { byTemplate, byBinding, manifests: new Map(), worksRead: false };
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

// ------------------------------------------------------------------------------------- what is shown

/** `member1(3),member2(2)`: the clusters a template went to, replicas in brackets where it has them. */
export function placementsCell(p: Propagation): string {
  if (p.placements.length === 0) return '<pending>';
  return p.placements
    .map((c) => (c.replicas === undefined ? c.cluster : `${c.cluster}(${c.replicas})`))
    .join(',');
}

/** `applied 2/2, healthy 2/2`: the binding's aggregated status. */
export function aggregatedCell(p: Propagation): string {
  const n = p.placements.length;
  const applied = p.placements.filter((c) => c.applied).length;
  const healthy = p.placements.filter((c) => c.health === 'Healthy').length;
  return `applied ${applied}/${n}, healthy ${healthy}/${n}`;
}

export type DriftState = 'InSync' | 'Drifted' | 'Unknown';

export interface CopyFacts {
  /** the template's name at the root (the control plane's plain name) */
  template: string;
  placement?: Placement;
  drift: DriftState;
  differences: Difference[];
}

function annotationsOf(obj: any): Record<string, unknown> {
  const a = obj?.metadata?.annotations;
  return a && typeof a === 'object' ? a : {};
}

/** Whether an object is a Karmada copy (its binding named on it). */
export function isCopy(obj: unknown): boolean {
  return typeof annotationsOf(obj)[BINDING_NAME_ANNOTATION] === 'string';
}

/**
 * A member's copy as the fleet explains it: its template, its cluster's placement, and its drift from
 * its Work's manifest. `full` says whether `obj` is the whole object (a Table row's object may be
 * metadata only: its drift is then Unknown). Undefined when the object is not a copy of an indexed
 * binding.
 */
export function copyFacts(
  index: PropagationIndex,
  obj: unknown,
  cluster: string,
  full: boolean,
): CopyFacts | undefined {
  const a = annotationsOf(obj);
  const name = a[BINDING_NAME_ANNOTATION];
  if (typeof name !== 'string') return undefined;
  const ns = typeof a[BINDING_NAMESPACE_ANNOTATION] === 'string' ? a[BINDING_NAMESPACE_ANNOTATION] : '';
  const p = index.byBinding.get(`${ns}/${name}`);
  if (!p) return undefined;
  const placement = p.placements.find((c) => c.cluster === cluster);
  const work = `${a[WORK_NAMESPACE_ANNOTATION] ?? ''}/${a[WORK_NAME_ANNOTATION] ?? ''}`;
  const manifest = index.manifests.get(work);
  const differences = full && manifest ? driftOf(manifest, obj) : [];
  const drift: DriftState = !full || !manifest ? 'Unknown' : differences.length ? 'Drifted' : 'InSync';
  return { template: p.template.name, ...(placement ? { placement } : {}), drift, differences };
}

/** What a template says in the fleet view: where it went, how it is doing, the selector of its copies. */
export function templateAnnotations(p: Propagation): Record<string, string> {
  return {
    [A.propagatedTo]: placementsCell(p),
    [A.status]: aggregatedCell(p),
    ...(p.bindingId ? { [A.copies]: `${BINDING_ID_LABEL}=${p.bindingId}` } : {}),
  };
}

/** What a copy says in the fleet view: its template, and its drift (with the fields that drifted). */
export function copyAnnotations(f: CopyFacts): Record<string, string> {
  const fields = f.differences.map((d) => d.path).join(', ');
  return { [A.template]: f.template, [A.drift]: fields ? `${f.drift}: ${fields}` : f.drift };
}

// ------------------------------------------------------------------------------------- Tables and items

/** The columns a list with propagated objects gains (after each cluster's own). */
export const PROPAGATION_COLUMNS: ColumnDefinition[] = [
  {
    name: 'Propagated To',
    type: 'string',
    format: '',
    description:
      "The member clusters Karmada scheduled this template to, with each one's replicas (its ResourceBinding).",
    priority: 0,
  },
  {
    name: 'Template',
    type: 'string',
    format: '',
    description: 'The control-plane template this copy was propagated from (Karmada’s binding annotations).',
    priority: 0,
  },
  {
    name: 'Drift',
    type: 'string',
    format: '',
    description:
      'Whether this copy differs from what Karmada applied to it (its Work): InSync, Drifted or Unknown.',
    priority: 0,
  },
  {
    name: 'Karmada Status',
    type: 'string',
    format: '',
    description: 'The binding’s aggregated status: applied and healthy copies (for a copy: its own).',
    priority: 1,
  },
];

/** What the client asked the rows' objects to be: the fleet asks members for whole objects instead. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function includeObjectOf(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

type Obj = Record<string, any>;

/** The template an object of `cluster` is (the control plane's, indexed), if it is one. */
function templateOf(index: PropagationIndex, obj: Obj | undefined, cluster: string): Propagation | undefined {
  if (cluster !== 'karmada') return undefined;
  const md = obj?.metadata;
  if (typeof md?.name !== 'string') return undefined;
  return index.byTemplate.get(`${md.namespace ?? ''}/${md.name}`);
}

/**
 * One Table row with the propagation cells appended (its cluster's own columns come first, as the head's
 * columns were appended to), and its object as the client asked for it.
 */
export function enrichRow(index: PropagationIndex, row: Obj, cluster: string, include: IncludeObject): Obj {
  const obj = row.object as Obj | undefined;
  const full = obj?.kind !== undefined && obj.kind !== 'PartialObjectMetadata';
  const cells = ['', '', '', ''];
  const p = templateOf(index, obj, cluster);
  const copy = p ? undefined : copyFacts(index, obj, cluster, full);
  if (p) {
    cells[0] = placementsCell(p);
    cells[3] = aggregatedCell(p);
  } else if (copy) {
    cells[1] = copy.template;
    cells[2] = copy.drift;
    const pl = copy.placement;
    if (pl) cells[3] = `${pl.applied ? 'applied' : 'not applied'}, ${(pl.health ?? 'unknown').toLowerCase()}`;
  }
  const out: Obj = { ...row, cells: [...(Array.isArray(row.cells) ? row.cells : []), ...cells] };
  if (obj) {
    if (p) annotate(obj, templateAnnotations(p));
    if (copy) annotate(obj, copyAnnotations(copy));
  }
  if (include === 'None') delete out.object;
  else if (include === 'Metadata' && obj && full)
    out.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
  return out;
}

/**
 * One list item with the fleet's propagation annotation (a template) or drift annotation (a copy). `full`:
 * the items are whole objects (a list's items name no kind), not PartialObjectMetadata.
 */
export function enrichItem(index: PropagationIndex, obj: Obj, cluster: string, full: boolean): Obj {
  const add = itemAnnotations(index, obj, cluster, full);
  if (add) annotate(obj, add);
  return obj;
}

/** What enrichItem adds to `obj`: a template's or a copy's annotations; undefined when it is neither. */
export function itemAnnotations(
  index: PropagationIndex,
  obj: Obj,
  cluster: string,
  full: boolean,
): Record<string, string> | undefined {
  const p = templateOf(index, obj, cluster);
  if (p) return templateAnnotations(p);
  const copy = copyFacts(index, obj, cluster, full);
  return copy ? copyAnnotations(copy) : undefined;
}

/** The annotations of the template named `namespace/name` in `cluster`, if it is one (no parse needed). */
export function templateAnnotationsOf(
  index: PropagationIndex,
  cluster: string,
  namespace: string,
  name: string,
): Record<string, string> | undefined {
  const p = templateOf(index, { metadata: { name, namespace } }, cluster);
  return p ? templateAnnotations(p) : undefined;
}

function annotate(obj: Obj, add: Record<string, string>): void {
  const md = obj.metadata;
  if (!md || typeof md !== 'object') return;
  md.annotations = { ...(md.annotations ?? {}), ...add };
}

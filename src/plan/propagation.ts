/**
 * Propagation at the fleet root (docs/propagation.md): a control-plane object Karmada propagates says
 * where it went, from its ResourceBinding or, cluster-scoped, its ClusterResourceBinding (clusters,
 * replicas per cluster, aggregated status; read by upstreams/bindings.ts, indexed by merge/bindings.ts);
 * a member's copy says which template it came from and whether it drifted from what Karmada applied (its
 * Work's manifest, src/merge/drift.ts). Pure: which lists read them, what each row and object shows.
 *
 * A copy is known by Karmada's own annotations on it (v1.18, work/v1alpha2 well-known constants):
 * `resourcebinding.karmada.io/{name,namespace}` (`clusterresourcebinding.karmada.io/name`) name its
 * binding, `work.karmada.io/{name,namespace}` its Work; the label `resourcebinding.karmada.io/permanent-id`
 * (`clusterresourcebinding.karmada.io/permanent-id`) is the binding's id, the selector that picks the copies
 * of one template (`kubectl get deploy -A -l resourcebinding.karmada.io/permanent-id=<id>`).
 */

import {
  copyBindingKey,
  type Placement,
  type Propagation,
  type PropagationIndex,
  WORK_NAME_ANNOTATION,
  WORK_NAMESPACE_ANNOTATION,
} from '../merge/bindings.ts';
import { type Difference, driftOf } from '../merge/drift.ts';
import { PROPAGATION_ANNOTATIONS as A } from '../merge/objects/index.ts';
import type { ColumnDefinition } from '../merge/table/index.ts';

// the bindings' model lives in merge/bindings.ts (the reader, upstreams/bindings.ts, uses it too)
export {
  addWorks,
  BINDING_ID_LABEL,
  BINDING_NAME_ANNOTATION,
  BINDING_NAMESPACE_ANNOTATION,
  bindingsPath,
  CLUSTER_BINDING_ID_LABEL,
  CLUSTER_BINDING_NAME_ANNOTATION,
  guessResource,
  indexBindings,
  type Placement,
  type Propagation,
  type PropagationIndex,
  readBinding,
  WORK_NAME_ANNOTATION,
  WORK_NAMESPACE_ANNOTATION,
  worksPath,
} from '../merge/bindings.ts';

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
  return copyBindingKey(annotationsOf(obj)) !== undefined;
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
  const key = copyBindingKey(a);
  const p = key === undefined ? undefined : index.byBinding.get(key);
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
    ...(p.bindingId ? { [A.copies]: `${p.idLabel}=${p.bindingId}` } : {}),
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

/**
 * How one object looks in the fleet view, and back.
 *
 * Out (cluster → client): the name becomes the fleet name `<name>.clusterspace.<cluster>` (objects of the
 * control plane keep their plain name when federation is on), the annotation and the label
 * `fleet.karmada.io/cluster` carry the cluster, names that refer to objects of the same cluster
 * (ownerReferences, and the references of references.ts: nodes, volumes, events' objects…) get the same
 * treatment, a workload's pod selector gains the cluster term where the name is a fleet name
 * (podselector.ts), and
 * `metadata.resourceVersion` becomes a composite (see rv.ts) so a client can hand it back.
 *
 * In (client → cluster, for writes): markers (and that selector term) are stripped and names decoded
 * (see stripMarkers).
 * Pure and in place: the caller owns the parsed object. Lists rewrite their items from the bytes instead
 * (itembytes.ts), with this as the reference their property tests compare against.
 */

import { CLUSTER_LABEL } from '../../kube/selectors.ts';
import { encodeName } from '../names/index.ts';
import { showRecordIn } from './lastapplied.ts';
import { scopePodSelector, stripPodSelector } from './podselector.ts';
import { mapReferences } from './references.ts';

export const CLUSTER_ANNOTATION = CLUSTER_LABEL;
/**
 * What the fleet view says of Karmada's templates and copies (plan/propagation.ts): short values that
 * `kubectl describe` prints whole; never written back.
 */
export const PROPAGATION_ANNOTATIONS = {
  propagatedTo: 'fleet.karmada.io/propagated-to',
  status: 'fleet.karmada.io/propagation-status',
  copies: 'fleet.karmada.io/copies-selector',
  template: 'fleet.karmada.io/template',
  drift: 'fleet.karmada.io/drift',
} as const;
const VIEW_MARKS = [CLUSTER_LABEL, ...Object.values(PROPAGATION_ANNOTATIONS)];

export interface FleetView {
  /** federation on: the control plane's objects keep plain names */
  federation: boolean;
  /**
   * The cluster the request's scope already names (an in-path clusterspace, a namespace by fleet name):
   * its objects keep their plain names, as the request spelled them (docs/names.md; plan/view.ts decides).
   */
  scope?: string;
}

/** The name under which the fleet shows `name` of `cluster`. */
export function fleetName(view: FleetView, name: string, cluster: string): string {
  return keepsPlainNames(view, cluster) ? name : encodeName(name, cluster);
}

/** Whether `view` shows the names of `cluster` as they are (no suffix). */
export function keepsPlainNames(view: FleetView, cluster: string): boolean {
  return cluster === view.scope || (view.federation && cluster === 'karmada');
}

/**
 * Whether `view` shows `cluster`'s pod selectors with the cluster term (podselector.ts): where its names
 * are fleet names, except the control plane's, whose workloads are templates with pods in the members.
 */
export function scopesPodSelectors(view: FleetView, cluster: string): boolean {
  return cluster !== 'karmada' && !keepsPlainNames(view, cluster);
}

type Obj = Record<string, any>;

function renameRef(view: FleetView, ref: unknown, cluster: string): void {
  if (ref && typeof ref === 'object' && typeof (ref as Obj).name === 'string' && (ref as Obj).name !== '')
    (ref as Obj).name = fleetName(view, (ref as Obj).name, cluster);
}

/**
 * Rewrites one object for the fleet view. `resourceVersion` maps the object's own RV to the composite the
 * client sees (undefined: leave it).
 */
export function toFleetObject(
  view: FleetView,
  obj: Obj,
  cluster: string,
  resourceVersion?: (own: string) => string,
): Obj {
  const md = obj.metadata;
  if (!md || typeof md !== 'object') return obj;
  if (typeof md.name === 'string' && md.name !== '') {
    const plain = md.name;
    md.name = fleetName(view, plain, cluster);
    // client-side apply's record of the object says the name the object is shown by (lastapplied.ts)
    if (md.name !== plain) showRecordIn(md.annotations, { name: { plain, shown: md.name } });
  }
  md.annotations = { ...(md.annotations ?? {}), [CLUSTER_ANNOTATION]: cluster };
  md.labels = { ...(md.labels ?? {}), [CLUSTER_LABEL]: cluster };
  if (Array.isArray(md.ownerReferences)) for (const r of md.ownerReferences) renameRef(view, r, cluster);
  if (resourceVersion && typeof md.resourceVersion === 'string' && md.resourceVersion !== '')
    md.resourceVersion = resourceVersion(md.resourceVersion);
  // nodes, volumes, claims, endpoints' pods, events' objects: see references.ts for the rule
  mapReferences(obj, (name) => fleetName(view, name, cluster));
  // a workload shown by its fleet name selects its own cluster's pods (podselector.ts)
  if (scopesPodSelectors(view, cluster)) scopePodSelector(obj, cluster);
  return obj;
}

/**
 * Removes the fleet's markers from an object a client writes back, so no cluster ever stores them.
 * Empty maps left behind are removed too (a client that never had labels does not gain `labels: {}`).
 * The cluster term the view adds to a pod selector goes too (podselector.ts).
 */
export function stripMarkers(obj: Obj): Obj {
  stripPodSelector(obj);
  const md = obj?.metadata;
  if (!md || typeof md !== 'object') return obj;
  for (const key of ['annotations', 'labels'] as const) {
    const m = md[key];
    if (!m || typeof m !== 'object') continue;
    const marks = VIEW_MARKS.filter((k) => k in m);
    if (marks.length === 0) continue;
    for (const k of marks) delete m[k];
    if (Object.keys(m).length === 0) delete md[key];
  }
  return obj;
}

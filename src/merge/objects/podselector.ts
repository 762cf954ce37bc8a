/**
 * Pod selectors at the root: a workload shown by its fleet name selects only its own cluster's pods.
 *
 * kubectl's `exec|logs|attach|port-forward deploy/x.clusterspace.member2` (and `svc/`, `rs/`, `sts/`,
 * `ds/`, `job/`, `rc/`) GETs the workload, turns its `spec.selector` into a label selector string and
 * lists pods with it in the object's namespace (kubectl's polymorphichelpers: SelectorsForObject,
 * GetFirstPod). At the root that list spans every member, so the first pod could be another member's. Every pod the fleet shows
 * carries the label `fleet.karmada.io/cluster=<cluster>`, and a list whose selector has that term goes to
 * that cluster only (kube/selectors.ts splitClusterSelector). So, where the view shows the object by its
 * fleet name (not in a scope that names its cluster, docs/names.md), its pod selector gains that term:
 * `spec.selector.matchLabels` for Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs, the
 * `spec.selector` map for Services and ReplicationControllers (not an absent or empty one: a Service
 * without a selector selects no pods and must stay so). Writes remove the term again (`stripPodSelector`,
 * called with the markers' removal; protobuf bodies by PROTOBUF_POD_SELECTORS), so no member ever stores
 * it and apply's three-way diff never sees it.
 *
 * Also `spec.selector.matchLabels` of list items from their bytes: itembytes.ts.
 *
 * Pure and in place.
 */

import { CLUSTER_LABEL } from '../../kube/selectors.ts';
import { isObj } from './references-table.ts';

type Obj = Record<string, any>;

/** kinds whose `spec.selector` is a metav1.LabelSelector selecting the pods of `spec.template` */
export const LABEL_SELECTOR_KINDS: ReadonlySet<string> = new Set([
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'Job',
]);
/** kinds whose `spec.selector` is a plain map of labels */
const MAP_SELECTOR_KINDS = new Set(['Service', 'ReplicationController']);

const isLabelMap = (m: Obj): boolean => Object.values(m).every((v) => typeof v === 'string');

/**
 * The form of `obj`'s pod selector: by its kind when it carries one, else (list items) by its shape —
 * a LabelSelector beside a pod template, or a label map beside a template (ReplicationController) or a
 * Service's ports, clusterIP or type. Undefined: no pod selector to scope.
 */
function selectorForm(obj: Obj): 'labelSelector' | 'map' | undefined {
  const spec = obj.spec;
  if (!isObj(spec) || !isObj(spec.selector) || Object.keys(spec.selector).length === 0) return undefined;
  const sel = spec.selector;
  if (typeof obj.kind === 'string' && obj.kind !== '') {
    if (LABEL_SELECTOR_KINDS.has(obj.kind)) return 'labelSelector';
    return MAP_SELECTOR_KINDS.has(obj.kind) && isLabelMap(sel) ? 'map' : undefined;
  }
  const template = isObj(spec.template);
  if ('matchLabels' in sel || 'matchExpressions' in sel) return template ? 'labelSelector' : undefined;
  if (!isLabelMap(sel)) return undefined;
  const service =
    Array.isArray(spec.ports) || typeof spec.clusterIP === 'string' || typeof spec.type === 'string';
  return template || service ? 'map' : undefined;
}

/**
 * Protobuf write bodies (`<group>/<Kind>` as the envelope says): the field numbers from the object to its
 * selector's label map (spec, selector, matchLabels), as k8s.io/api's generated.proto numbers them.
 */
export const PROTOBUF_POD_SELECTORS: ReadonlyMap<string, readonly number[]> = new Map([
  ['apps/Deployment', [2, 2, 1]],
  ['apps/ReplicaSet', [2, 2, 1]],
  ['apps/StatefulSet', [2, 2, 1]],
  ['apps/DaemonSet', [2, 1, 1]],
  ['batch/Job', [2, 4, 1]],
  ['/Service', [2, 2]],
  ['/ReplicationController', [2, 2]],
]);

/** Adds `fleet.karmada.io/cluster=<cluster>` to `obj`'s pod selector, if it has one (see the top). */
export function scopePodSelector(obj: Obj, cluster: string): void {
  const form = selectorForm(obj);
  if (form === 'map') obj.spec.selector[CLUSTER_LABEL] = cluster;
  else if (form === 'labelSelector') {
    const sel = obj.spec.selector;
    if (sel.matchLabels !== undefined && sel.matchLabels !== null && !isObj(sel.matchLabels)) return;
    sel.matchLabels = { ...(sel.matchLabels ?? {}), [CLUSTER_LABEL]: cluster };
  }
}

/**
 * Removes the cluster term from a written object's or patch's `spec.selector` (its map form and its
 * `matchLabels`), whatever its value: members never store the marker label, so a selector on it could
 * select nothing there. A `matchLabels` left empty goes too (the term may have been all it held).
 */
export function stripPodSelector(obj: unknown): void {
  if (!isObj(obj) || !isObj(obj.spec) || !isObj(obj.spec.selector)) return;
  const sel = obj.spec.selector;
  delete sel[CLUSTER_LABEL];
  const ml = sel.matchLabels;
  if (isObj(ml) && CLUSTER_LABEL in ml) {
    delete ml[CLUSTER_LABEL];
    if (Object.keys(ml).length === 0) delete sel.matchLabels;
  }
}

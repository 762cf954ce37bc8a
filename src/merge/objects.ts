/**
 * How one object looks in the fleet view, and back.
 *
 * Out (cluster → client): the name becomes the fleet name `<name>.clusterspace.<cluster>` (objects of the
 * control plane keep their plain name when federation is on), the annotation and the label
 * `fleet.karmada.io/cluster` carry the cluster, names that refer to objects of the same cluster
 * (ownerReferences, an event's involvedObject/regarding/related) get the same treatment, and
 * `metadata.resourceVersion` becomes a composite (see rv.ts) so a client can hand it back.
 *
 * In (client → cluster, for writes): markers are stripped and names decoded (see stripMarkers).
 * Pure and in place: the caller owns the parsed object.
 */

import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { encodeName } from './names.ts';

export const CLUSTER_ANNOTATION = CLUSTER_LABEL;

export interface FleetView {
  /** federation on: the control plane's objects keep plain names */
  federation: boolean;
}

/** The name under which the fleet shows `name` of `cluster`. */
export function fleetName(view: FleetView, name: string, cluster: string): string {
  return view.federation && cluster === 'karmada' ? name : encodeName(name, cluster);
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
  if (typeof md.name === 'string' && md.name !== '') md.name = fleetName(view, md.name, cluster);
  md.annotations = { ...(md.annotations ?? {}), [CLUSTER_ANNOTATION]: cluster };
  md.labels = { ...(md.labels ?? {}), [CLUSTER_LABEL]: cluster };
  if (Array.isArray(md.ownerReferences)) for (const r of md.ownerReferences) renameRef(view, r, cluster);
  if (resourceVersion && typeof md.resourceVersion === 'string' && md.resourceVersion !== '')
    md.resourceVersion = resourceVersion(md.resourceVersion);
  // core/v1 Event and events.k8s.io/v1 Event point at objects of their own cluster
  if (obj.involvedObject) renameRef(view, obj.involvedObject, cluster);
  if (obj.regarding) renameRef(view, obj.regarding, cluster);
  if (obj.related) renameRef(view, obj.related, cluster);
  return obj;
}

/**
 * Removes the fleet's markers from an object a client writes back, so no cluster ever stores them.
 * Empty maps left behind are removed too (a client that never had labels does not gain `labels: {}`).
 */
export function stripMarkers(obj: Obj): Obj {
  const md = obj?.metadata;
  if (!md || typeof md !== 'object') return obj;
  for (const key of ['annotations', 'labels'] as const) {
    const m = md[key];
    if (m && typeof m === 'object' && CLUSTER_LABEL in m) {
      delete m[CLUSTER_LABEL];
      if (Object.keys(m).length === 0) delete md[key];
    }
  }
  return obj;
}

// ---------------------------------------------------------------------------------------------------
// byte-level splicing for list items: the edge bills CPU, and a pod is mostly spec and status, which the
// fleet never changes. Only the metadata member is parsed and rewritten; the rest is copied as it came.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function skipWs(t: string, i: number): number {
  let c = t.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++i);
  return i;
}

/** index just past the string starting at `i` (a quote) */
function skipString(t: string, i: number): number {
  for (i++; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/** index just past the JSON value starting at `i` (the text is valid JSON: the splitter checked it) */
function skipValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return skipString(t, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (; i < t.length; i++) {
      const d = t.charCodeAt(i);
      if (d === QUOTE) {
        i = skipString(t, i) - 1;
        if (i < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // number or literal: up to the next delimiter
  for (; i < t.length; i++) {
    const d = t.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09)
      return i;
  }
  return i;
}

/** top-level members that refer to other objects by name: such items take the full-parse path */
const REFERRING = new Set(['involvedObject', 'regarding', 'related']);

/**
 * The metadata member's value range in a JSON object's text, or undefined when the object has none or
 * refers to other objects by name (events), which the caller then rewrites in full.
 */
function metadataRange(t: string): [number, number] | undefined {
  let i = skipWs(t, 0);
  if (t.charCodeAt(i) !== 0x7b) return undefined;
  let found: [number, number] | undefined;
  i = skipWs(t, i + 1);
  if (t.charCodeAt(i) === 0x7d) return undefined;
  for (;;) {
    if (t.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(t, i);
    if (keyEnd < 0) return undefined;
    const raw = t.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
    i = skipWs(t, keyEnd);
    if (t.charCodeAt(i) !== 0x3a) return undefined;
    const start = skipWs(t, i + 1);
    const end = skipValue(t, start);
    if (end < 0) return undefined;
    if (REFERRING.has(key)) return undefined;
    if (key === 'metadata' && t.charCodeAt(start) === 0x7b) found = [start, end];
    i = skipWs(t, end);
    const c = t.charCodeAt(i);
    if (c === 0x2c) i = skipWs(t, i + 1);
    else if (c === 0x7d) return found;
    else return undefined;
  }
}

/**
 * One list item's JSON text in the fleet view: the same result as toFleetObject on the parsed item, but
 * only `metadata` is parsed and re-serialized; every other byte is copied.
 */
export function toFleetItemText(
  view: FleetView,
  text: string,
  cluster: string,
  resourceVersion?: (own: string) => string,
): string {
  const range = metadataRange(text);
  if (!range) return JSON.stringify(toFleetObject(view, JSON.parse(text) as Obj, cluster, resourceVersion));
  const holder = { metadata: JSON.parse(text.slice(range[0], range[1])) as Obj };
  toFleetObject(view, holder, cluster, resourceVersion);
  return text.slice(0, range[0]) + JSON.stringify(holder.metadata) + text.slice(range[1]);
}

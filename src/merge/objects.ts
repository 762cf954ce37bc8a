/**
 * How one object looks in the fleet view, and back.
 *
 * Out (cluster → client): the name becomes the fleet name `<name>.clusterspace.<cluster>` (objects of the
 * control plane keep their plain name when federation is on), the annotation and the label
 * `fleet.karmada.io/cluster` carry the cluster, names that refer to objects of the same cluster
 * (ownerReferences, and the references of references.ts: nodes, volumes, events' objects…) get the same
 * treatment, and
 * `metadata.resourceVersion` becomes a composite (see rv.ts) so a client can hand it back.
 *
 * In (client → cluster, for writes): markers are stripped and names decoded (see stripMarkers).
 * Pure and in place: the caller owns the parsed object.
 */

import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { type Member, membersOf, QUOTE, Splice, skipWs, stringValue, valueEnd } from './jsontext.ts';
import { encodeName } from './names.ts';

// the text scanning lived here first: its users import it from objects.ts too
export { type Member, membersOf, Splice, stringValue, valueEnd } from './jsontext.ts';

import { mapReferences, mayHoldReference, referenceEdits } from './references.ts';

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
  // nodes, volumes, claims, endpoints' pods, events' objects: see references.ts for the rule
  mapReferences(obj, (name) => fleetName(view, name, cluster));
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
// Byte-level rewriting: the edge bills CPU, and a pod is mostly spec and status, which the fleet never
// changes, while parsing even its metadata only to serialise it again with three values changed costs more
// than the rest of the merge. The texts are scanned (keys at the top level, ownerReferences' names), the
// few values the view changes are replaced, the cluster markers inserted, and every other character is
// copied. Anything unusual (a key written with escapes, a duplicate key, labels that are not an object)
// gives undefined and the caller parses: toFleetObject is the reference, and the property tests
// (objects.test.ts) check that both give the same objects.

const MARKER_KEY = JSON.stringify(CLUSTER_LABEL);

/**
 * `{ ...value, [CLUSTER_LABEL]: cluster }` on a map's text (labels, annotations): the marker's value
 * replaced where the key already is, the marker appended otherwise; null becomes the marker alone.
 * Undefined for anything else (spreading a string or an array makes an object of its indexes).
 */
function withMarker(t: string, from: number, to: number, clusterJson: string): string | undefined {
  const c = t.charCodeAt(from);
  if (c === 0x6e) return `{${MARKER_KEY}:${clusterJson}}`;
  if (c !== 0x7b) return undefined;
  const m = membersOf(t, from);
  if (!m) return undefined;
  const own = m.members.find((x) => x.key === CLUSTER_LABEL);
  if (own) return t.slice(from, own.from) + clusterJson + t.slice(own.to, to);
  const sep = m.members.length ? ',' : '';
  return `${t.slice(from, m.close)}${sep}${MARKER_KEY}:${clusterJson}${t.slice(m.close, to)}`;
}

/** a reference's text with its non-empty string `name` shown as a fleet name (renameRef) */
function renamedRef(
  view: FleetView,
  t: string,
  from: number,
  to: number,
  cluster: string,
): string | undefined {
  if (t.charCodeAt(from) !== 0x7b) return t.slice(from, to);
  const m = membersOf(t, from);
  if (!m) return undefined;
  const name = m.members.find((x) => x.key === 'name');
  if (!name || t.charCodeAt(name.from) !== QUOTE) return t.slice(from, to);
  const v = stringValue(t.slice(name.from, name.to));
  if (v === '') return t.slice(from, to);
  return t.slice(from, name.from) + JSON.stringify(fleetName(view, v, cluster)) + t.slice(name.to, to);
}

/** ownerReferences' text with every element renamed (an array; anything else is left as it is) */
function renamedRefs(
  view: FleetView,
  t: string,
  from: number,
  to: number,
  cluster: string,
): string | undefined {
  if (t.charCodeAt(from) !== 0x5b) return t.slice(from, to);
  const out = new Splice(t, from, to);
  let i = skipWs(t, from + 1);
  if (t.charCodeAt(i) === 0x5d) return t.slice(from, to);
  for (;;) {
    const end = valueEnd(t, i);
    if (end < 0) return undefined;
    if (t.charCodeAt(i) === 0x7b) {
      const ref = renamedRef(view, t, i, end, cluster);
      if (ref === undefined) return undefined;
      out.put(i, end, ref);
    }
    i = skipWs(t, end);
    if (t.charCodeAt(i) === 0x5d) return out.done();
    i = skipWs(t, i + 1);
  }
}

/** the replacement of one metadata member's value, null to keep it, undefined to give up */
function metadataValue(
  view: FleetView,
  t: string,
  { key, from, to }: Member,
  cluster: string,
  clusterJson: string,
  resourceVersion?: (own: string) => string,
): string | null | undefined {
  if (key === 'name' || key === 'resourceVersion') {
    if (t.charCodeAt(from) !== QUOTE || (key === 'resourceVersion' && !resourceVersion)) return null;
    const v = stringValue(t.slice(from, to));
    if (v === '') return null;
    return JSON.stringify(key === 'name' ? fleetName(view, v, cluster) : resourceVersion!(v));
  }
  if (key === 'annotations' || key === 'labels') return withMarker(t, from, to, clusterJson);
  if (key === 'ownerReferences') return renamedRefs(view, t, from, to, cluster);
  return null;
}

/**
 * The text of a metadata object (`{…}` from `from` to `to` in `t`) in the fleet view: the object
 * toFleetObject makes of it, serialised as it came but for the values the view changes. Undefined: parse.
 */
export function fleetMetadataText(
  view: FleetView,
  t: string,
  cluster: string,
  resourceVersion?: (own: string) => string,
  from = skipWs(t, 0),
  to = t.length,
): string | undefined {
  const m = membersOf(t, from);
  if (!m) return undefined;
  const clusterJson = JSON.stringify(cluster);
  const out = new Splice(t, from, to);
  let annotations = false;
  let labels = false;
  for (const member of m.members) {
    const text = metadataValue(view, t, member, cluster, clusterJson, resourceVersion);
    if (text === undefined) return undefined;
    if (member.key === 'annotations') annotations = true;
    if (member.key === 'labels') labels = true;
    if (text !== null) out.put(member.from, member.to, text);
  }
  // toFleetObject assigns annotations, then labels: missing ones come last, in that order
  let add = '';
  let sep = m.members.length ? ',' : '';
  if (!annotations) {
    add += `${sep}"annotations":{${MARKER_KEY}:${clusterJson}}`;
    sep = ',';
  }
  if (!labels) add += `${sep}"labels":{${MARKER_KEY}:${clusterJson}}`;
  if (add) out.put(m.close, m.close, add);
  return out.done();
}

/**
 * An object's text (`{…}` from `from` to `to` in `t`) in the fleet view, without parsing it: undefined when
 * it is not an object, refers to other objects by name, or is otherwise unusual (then parse it).
 */
export function fleetObjectText(
  view: FleetView,
  t: string,
  cluster: string,
  resourceVersion?: (own: string) => string,
  from = skipWs(t, 0),
  to = t.length,
): string | undefined {
  if (t.charCodeAt(from) !== 0x7b) return undefined;
  const m = membersOf(t, from);
  if (!m) return undefined;
  let md: Member | undefined;
  for (const x of m.members) if (x.key === 'metadata') md = x;
  // toFleetObject leaves an object without metadata, or with a scalar there, as it is
  const c = md ? t.charCodeAt(md.from) : 0;
  if (!md || (c !== 0x7b && c !== 0x5b)) return t.slice(from, to);
  if (c !== 0x7b) return undefined;
  const refs = referenceEdits(t, m.members, (name) => fleetName(view, name, cluster));
  if (refs === undefined) return undefined;
  const text = fleetMetadataText(view, t, cluster, resourceVersion, md.from, md.to);
  if (text === undefined) return undefined;
  // edits in text order (the metadata's and the references' ranges never overlap)
  const edits = [...refs, { key: text, from: md.from, to: md.to }].sort((a, b) => a.from - b.from);
  const out = new Splice(t, from, to);
  for (const e of edits) out.put(e.from, e.to, e.key);
  return out.done();
}

/**
 * One list item's JSON text in the fleet view: the same object as toFleetObject on the parsed item; only
 * the metadata is scanned and spliced, every other character is copied.
 */
export function toFleetItemText(
  view: FleetView,
  text: string,
  cluster: string,
  resourceVersion?: (own: string) => string,
): string {
  return (
    fleetObjectText(view, text, cluster, resourceVersion) ??
    JSON.stringify(toFleetObject(view, JSON.parse(text) as Obj, cluster, resourceVersion))
  );
}

const utf8 = new TextDecoder();

/**
 * The same from the item's bytes when the splitter found where its metadata lies (`metadata`: byte range,
 * and no key that refers to other objects at the top level): spec and status are decoded and searched
 * for a reference's key (references.ts), never scanned.
 */
export function toFleetItemBytes(
  view: FleetView,
  bytes: Uint8Array,
  metadata: readonly [number, number] | undefined,
  cluster: string,
  resourceVersion?: (own: string) => string,
): string {
  if (metadata) {
    const head = utf8.decode(bytes.subarray(0, metadata[0]));
    const tail = utf8.decode(bytes.subarray(metadata[1]));
    if (!mayHoldReference(head, tail)) {
      const md = fleetMetadataText(
        view,
        utf8.decode(bytes.subarray(metadata[0], metadata[1])),
        cluster,
        resourceVersion,
      );
      if (md !== undefined) return head + md + tail;
    }
  }
  return toFleetItemText(view, utf8.decode(bytes), cluster, resourceVersion);
}

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
import { encodeName } from './names.ts';
import {
  mapReferences,
  REFERENCE_KEYS,
  REFERENCE_KINDS,
  REFERRING_MEMBERS,
  REFERRING_SPEC_MEMBERS,
} from './references.ts';

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MARKER_KEY = JSON.stringify(CLUSTER_LABEL);

function skipWs(t: string, i: number): number {
  let c = t.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++i);
  return i;
}

/** index just past the string whose opening quote is at `i`; -1 when it does not end */
function stringEnd(t: string, i: number): number {
  for (let from = i + 1; ; ) {
    const q = t.indexOf('"', from);
    if (q < 0) return -1;
    let k = q - 1;
    while (t.charCodeAt(k) === BACKSLASH) k--;
    // an even run of backslashes before the quote escapes only itself
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** index just past the JSON value starting at `i` (the text is valid JSON: the splitter checked it) */
export function valueEnd(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return stringEnd(t, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < t.length; j++) {
      const d = t.charCodeAt(j);
      if (d === QUOTE) {
        j = stringEnd(t, j) - 1;
        if (j < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  for (; j < t.length; j++) {
    const d = t.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
  }
  return j;
}

/** One member of an object's text: its key (written without escapes) and its value's range. */
export interface Member {
  key: string;
  from: number;
  to: number;
}

/**
 * The members of the object whose `{` is at `i`, and the index of its `}`; undefined when a key appears
 * twice (JSON.parse keeps the last value at the first key's place: the parsing path does that).
 */
export function membersOf(t: string, i: number): { members: Member[]; close: number } | undefined {
  const members: Member[] = [];
  i = skipWs(t, i + 1);
  if (t.charCodeAt(i) === 0x7d) return { members, close: i };
  for (;;) {
    if (t.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(t, i);
    if (keyEnd < 0) return undefined;
    // a key written with escapes is compared by its value (a marker or a duplicate may hide behind them)
    const key = stringValue(t.slice(i, keyEnd));
    for (let k = 0; k < members.length; k++) if (members[k]!.key === key) return undefined;
    i = skipWs(t, keyEnd);
    if (t.charCodeAt(i) !== 0x3a) return undefined;
    const from = skipWs(t, i + 1);
    const to = valueEnd(t, from);
    if (to < 0) return undefined;
    members.push({ key, from, to });
    i = skipWs(t, to);
    const c = t.charCodeAt(i);
    if (c === 0x7d) return { members, close: i };
    if (c !== 0x2c) return undefined;
    i = skipWs(t, i + 1);
  }
}

/** a JSON string's value from its text (quotes included) */
export function stringValue(raw: string): string {
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/** The text of `t` from `at` to `end` with ranges replaced, in order. */
export class Splice {
  private readonly parts: string[] = [];
  constructor(
    private readonly t: string,
    private at = 0,
    private readonly end = t.length,
  ) {}
  put(from: number, to: number, text: string): void {
    this.parts.push(this.t.slice(this.at, from), text);
    this.at = to;
  }
  done(): string {
    this.parts.push(this.t.slice(this.at, this.end));
    return this.parts.join('');
  }
}

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
 * The reference edits mapReferences would make, as text edits over an object's top-level members: [] for
 * none, undefined when the object is one the parsing path must rewrite (any reference-bearing kind but a
 * pod's `spec.nodeName`, the one found in every scheduled pod, which is spliced here).
 */
function referenceEdits(
  view: FleetView,
  t: string,
  members: readonly Member[],
  cluster: string,
): Member[] | undefined {
  let spec: Member | undefined;
  let status: Member | undefined;
  for (const x of members) {
    if (REFERRING_MEMBERS.has(x.key)) return undefined;
    if (x.key === 'kind' && t.charCodeAt(x.from) === QUOTE) {
      const kind = stringValue(t.slice(x.from, x.to));
      // a kind without references: nothing to change (mapReferences goes by kind when there is one)
      if (kind !== '') return REFERENCE_KINDS.has(kind) ? undefined : [];
    }
    if (x.key === 'spec') spec = x;
    if (x.key === 'status') status = x;
  }
  if (!spec || t.charCodeAt(spec.from) !== 0x7b) return [];
  const sm = membersOf(t, spec.from);
  if (!sm) return undefined;
  let nodeName: Member | undefined;
  let pod = false;
  for (const x of sm.members) {
    if (REFERRING_SPEC_MEMBERS.has(x.key)) return undefined;
    if (x.key === 'containers') pod = t.charCodeAt(x.from) === 0x5b;
    if (x.key === 'nodeName') nodeName = x;
  }
  if (!pod) return [];
  if (status && t.slice(status.from, status.to).includes('"nominatedNodeName"')) return undefined;
  if (!nodeName || t.charCodeAt(nodeName.from) !== QUOTE) return [];
  const v = stringValue(t.slice(nodeName.from, nodeName.to));
  return v === ''
    ? []
    : [{ key: JSON.stringify(fleetName(view, v, cluster)), from: nodeName.from, to: nodeName.to }];
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
  const refs = referenceEdits(view, t, m.members, cluster);
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

/** whether an item's text outside its metadata has a reference's key, or escapes that could spell one */
function mayHoldReference(head: string, tail: string): boolean {
  for (const part of [head, tail])
    if (part.includes('\\u') || REFERENCE_KEYS.some((k) => part.includes(k))) return true;
  return false;
}

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

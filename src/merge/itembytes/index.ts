/**
 * A list item or Table row rewritten for the fleet view from its bytes, straight into the answer's
 * buffer: the splitter's scan (jsonsplit-item.ts) said where the values the view changes lie, those few
 * are decoded and replaced, every other byte is copied as it came. The result is the object
 * toFleetObject (objects.ts) or toFleetRow (table.ts) makes of the parsed item — the property tests
 * (itembytes.test.ts) compare them — and when the facts say the item is unusual (`odd`), or it is a
 * shape this path leaves to parsing, the writers return false and the caller takes the parsing path.
 */

import type { ByteSink } from '../../util/bytes.ts';
import { utf8Short } from '../../util/utf8.ts';
import { type ItemFacts, REFS_NOMINATED, REFS_RECORD, REFS_SPEC, REFS_TOP } from '../jsonsplit/facts.ts';
import { CLUSTERSPACE_SEPARATOR, FLEET_NAME_MAX_LENGTH } from '../names/index.ts';
import {
  CLUSTER_ANNOTATION,
  type FleetView,
  fleetName,
  keepsPlainNames,
  scopesPodSelectors,
} from '../objects/index.ts';
import { LABEL_SELECTOR_KINDS } from '../objects/podselector.ts';
import { REFERENCE_KINDS } from '../objects/references.ts';
import { isMemberDecimalBytes, type Splicer } from '../rv/codec.ts';
import { spliceBytes } from '../rv/live.ts';
import { Edits } from './edits.ts';

const utf8 = new TextDecoder();
const MARKER_KEY = JSON.stringify(CLUSTER_ANNOTATION);

/** the string value of the JSON string text `b[from..to)` (quotes included) */
export function stringAt(b: Uint8Array, from: number, to: number): string {
  let plain = true;
  for (let k = from + 1; k < to - 1; k++) {
    const c = b[k]!;
    if (c === 0x5c) return JSON.parse(utf8.decode(b.subarray(from, to))) as string;
    if (c >= 0x80) plain = false;
  }
  if (plain && to - from <= 14) {
    // a short one (an RV, a kind) by a loop: no view of the bytes to make
    let v = '';
    for (let k = from + 1; k < to - 1; k++) v += String.fromCharCode(b[k]!);
    return v;
  }
  if (plain && to - from < 256) return String.fromCharCode.apply(null, b.subarray(from + 1, to - 1) as never);
  return utf8.decode(b.subarray(from + 1, to - 1));
}

/** What one item's rewriting needs besides the item: built once per cluster by {@link itemView}. */
export interface ItemView {
  view: FleetView;
  cluster: string;
  /** JSON.stringify(cluster) */
  clusterJson: string;
  /** what a plain name gains: `.clusterspace.<cluster>`, as it is written inside a JSON string */
  suffix: string;
  /** keepsPlainNames(view, cluster), and how long a plain name may be to gain the suffix (plainSuffix) */
  plainNames: boolean;
  nameRoom: number;
  resourceVersion?: Splicer;
  /** the texts above and the marker's members as UTF-8, encoded once (itemView) */
  bytes: ViewBytes;
  /** resourceVersion's head and tail as UTF-8: an item's RV is then written from its bytes */
  rvHead: Uint8Array | undefined;
  rvTail: Uint8Array | undefined;
  /**
   * when the composite's tail is empty (its single form): per length of an RV's digits, the head and that
   * length in two digits, what such an RV gains after its opening quote (made when first needed)
   */
  rvInserts: Array<Uint8Array | undefined> | undefined;
  /** the last kind met (its JSON text) and its class (kindClass): a list's items are mostly of one kind */
  lastKind: Uint8Array;
  lastKindClass: number;
  /** the last answer of row.ts inPlace, for the columns, input and cell count it was asked about */
  lastRow: { merged: object; input: number; count: number; inPlace: boolean } | undefined;
  /** the edits of the item being written, reused item after item (made when first written) */
  edits: Edits | undefined;
}

interface ViewBytes {
  suffix: Uint8Array;
  clusterJson: Uint8Array;
  /** `,<cluster>`: a row's Cluster cell after the cell before it */
  clusterCell: Uint8Array;
  /** `<suffix>",<cluster>`: a plain name cell's closing quote when the Cluster cell follows it */
  nameCell: Uint8Array;
  /** `{"fleet.karmada.io/cluster":<cluster>}` */
  markObject: Uint8Array;
  /** `"fleet.karmada.io/cluster":<cluster>`, with and without a comma before it */
  markMember: Uint8Array;
  markMemberComma: Uint8Array;
  /** `"annotations":{marker}`, `"labels":{marker}`, with and without a comma before them */
  ann: Uint8Array;
  annComma: Uint8Array;
  labels: Uint8Array;
  labelsComma: Uint8Array;
}

const encoder = new TextEncoder();

/** The view of one cluster's items, its constant texts encoded once. */
export function itemView(view: FleetView, cluster: string, resourceVersion?: Splicer): ItemView {
  const clusterJson = JSON.stringify(cluster);
  const suffix = JSON.stringify(CLUSTERSPACE_SEPARATOR + cluster).slice(1, -1);
  let bytes = bytesOf.get(cluster);
  if (!bytes) {
    // a membership's names are few and asked for answer after answer; a bound keeps names seen once
    // (clusters since removed) from piling up
    if (bytesOf.size >= BYTES_KEPT) bytesOf.clear();
    bytes = viewBytes(suffix, clusterJson);
    bytesOf.set(cluster, bytes);
  }
  const iv: ItemView = {
    view,
    cluster,
    clusterJson,
    suffix,
    plainNames: keepsPlainNames(view, cluster),
    nameRoom: FLEET_NAME_MAX_LENGTH - CLUSTERSPACE_SEPARATOR.length - cluster.length,
    resourceVersion: undefined,
    bytes,
    rvHead: undefined,
    rvTail: undefined,
    rvInserts: undefined,
    lastKind: NO_BYTES,
    lastKindClass: 0,
    lastRow: undefined,
    edits: undefined,
  };
  useResourceVersion(iv, resourceVersion);
  return iv;
}

const NO_BYTES = new Uint8Array(0);

/**
 * The view's RV map becomes `rv`; a splicer's head and tail are encoded for the byte path (a function
 * without them, such as an initial event's fixed RV, leaves every RV to it).
 */
export function useResourceVersion(iv: ItemView, rv: Splicer | undefined): void {
  if (iv.resourceVersion === rv) return;
  iv.resourceVersion = rv;
  // a merged watch's splicer keeps its head and tail as bytes (merge/rv/live.ts): no encode per event
  const live = rv && spliceBytes(rv);
  if (live) {
    iv.rvHead = live.headBytes;
    iv.rvTail = live.tailBytes.length ? live.tailBytes : NO_BYTES;
    iv.rvInserts = undefined;
    return;
  }
  const head = rv?.head;
  const tail = rv?.tail;
  iv.rvHead = head === undefined ? undefined : utf8Short(head);
  iv.rvTail = !tail ? NO_BYTES : utf8Short(tail);
  iv.rvInserts = head !== undefined && !tail ? [] : undefined;
}

/** what an RV of `len` digits gains after its opening quote in the single form (ItemView.rvInserts) */
function rvInsert(iv: ItemView, inserts: Array<Uint8Array | undefined>, len: number): Uint8Array {
  const t = utf8Short(`${iv.resourceVersion!.head}${len < 10 ? '0' : ''}${len}`);
  inserts[len] = t;
  return t;
}

/**
 * Each cluster's constant texts as UTF-8, kept across answers: they depend on its name alone and are
 * only read, and encoding them per answer cost 1.5-2.7 ms of a 200-cluster answer (nine encodes each).
 */
const bytesOf = new Map<string, ViewBytes>();
const BYTES_KEPT = 4096;

function viewBytes(suffix: string, clusterJson: string): ViewBytes {
  const e = (s: string) => encoder.encode(s);
  const member = `${MARKER_KEY}:${clusterJson}`;
  return {
    suffix: e(suffix),
    clusterJson: e(clusterJson),
    clusterCell: e(`,${clusterJson}`),
    nameCell: e(`${suffix}",${clusterJson}`),
    markObject: e(`{${member}}`),
    markMember: e(member),
    markMemberComma: e(`,${member}`),
    ann: e(`"annotations":{${member}}`),
    annComma: e(`,"annotations":{${member}}`),
    labels: e(`"labels":{${member}}`),
    labelsComma: e(`,"labels":{${member}}`),
  };
}

/**
 * The suffix a plain name gains, when that is all the view does to a name of printable ASCII (no escapes)
 * that stays short enough (names.ts encodeName); undefined when the name is to be decoded and renamed.
 */
export function plainSuffix(b: Uint8Array, from: number, to: number, iv: ItemView): string | undefined {
  if (iv.plainNames) return '';
  if (to - from - 2 > iv.nameRoom) return undefined;
  for (let k = from + 1; k < to - 1; k++) {
    const c = b[k]!;
    if (c === 0x5c || c >= 0x80) return undefined;
  }
  return iv.suffix;
}

/**
 * Whether `b[from..to)` is the JSON string `"<none>"`: its bytes compared as constants, a row's reference
 * cells asked one by one (a canned Table row's rewriting took 0.95x the time of a loop over the char
 * codes of a constant string; bench/lib/idiombench.ts)
 */
export function isNone(b: Uint8Array, from: number, to: number): boolean {
  return (
    to - from === 8 &&
    b[from + 1] === 0x3c && // <
    b[from + 2] === 0x6e && // n
    b[from + 3] === 0x6f && // o
    b[from + 4] === 0x6e && // n
    b[from + 5] === 0x65 && // e
    b[from + 6] === 0x3e && // >
    b[from] === 0x22 &&
    b[from + 7] === 0x22
  );
}

/** a non-empty string value at `from..to` renamed as the view shows names of the cluster; else nothing */
export function rename(e: Edits, b: Uint8Array, from: number, to: number, iv: ItemView): void {
  if (from < 0 || b[from] !== 0x22 || to - from === 2) return;
  const suffix = plainSuffix(b, from, to, iv);
  if (suffix !== undefined) {
    if (suffix) e.put(to - 1, to - 1, iv.bytes.suffix);
  } else e.putJson(from, to, fleetName(iv.view, stringAt(b, from, to), iv.cluster));
}

/** `{ ...map, [marker]: cluster }` on labels' or annotations' value; false: leave it to parsing */
function marker(
  e: Edits,
  b: Uint8Array,
  from: number,
  to: number,
  keys: number,
  markFrom: number,
  markTo: number,
  iv: ItemView,
): boolean {
  const c = b[from];
  const vb = iv.bytes;
  if (c === 0x6e) e.put(from, to, vb.markObject);
  else if (c !== 0x7b) return false;
  else if (markFrom >= 0) e.put(markFrom, markTo, vb.clusterJson);
  else e.put(to - 1, to - 1, keys ? vb.markMemberComma : vb.markMember);
  return true;
}

const KIND_OTHER = 0;
const KIND_POD = 1;
const KIND_REFERS = 2;
/** a kind whose spec.selector is a LabelSelector (podselector.ts) */
const KIND_WORKLOAD = 3;

/**
 * what the kind whose JSON string is `b[from..to)` is to references.ts and podselector.ts: a pod, another
 * referring kind, a workload with a LabelSelector, or none of these (the last one kept in `iv`)
 */
function kindClass(iv: ItemView, b: Uint8Array, from: number, to: number): number {
  const len = to - from;
  const last = iv.lastKind;
  if (len === last.length) {
    let k = 0;
    while (k < len && b[from + k] === last[k]) k++;
    if (k === len) return iv.lastKindClass;
  }
  const kind = stringAt(b, from, to);
  iv.lastKind = b.slice(from, to);
  iv.lastKindClass =
    kind === 'Pod'
      ? KIND_POD
      : REFERENCE_KINDS.has(kind)
        ? KIND_REFERS
        : LABEL_SELECTOR_KINDS.has(kind)
          ? KIND_WORKLOAD
          : KIND_OTHER;
  return iv.lastKindClass;
}

/**
 * The edits toFleetObject makes to the object whose facts these are (offsets into `b`, the item or the
 * row whose `object` it is); false when this path leaves the object to parsing.
 */
export function objectEdits(e: Edits, b: Uint8Array, f: ItemFacts, iv: ItemView): boolean {
  // toFleetObject leaves an object without metadata, or with a scalar there, as it is (references too)
  if (f.mdFrom < 0) return true;
  const md = b[f.mdFrom];
  if (md === 0x5b) return false;
  if (md !== 0x7b) return true;
  // references (references.ts mapReferences): an object with a kind goes by its kind; a kind-less one is
  // a pod when its spec has containers, else it may be any other kind that refers (left to parsing)
  let pod = f.podSpec;
  let workload = f.podTemplate;
  if (f.kindFrom >= 0 && b[f.kindFrom] === 0x22 && f.kindTo - f.kindFrom > 2) {
    const kind = kindClass(iv, b, f.kindFrom, f.kindTo);
    if (kind === KIND_REFERS) return false;
    pod = kind === KIND_POD;
    workload = kind === KIND_WORKLOAD;
  } else if (!pod && f.refs & (REFS_TOP | REFS_SPEC)) return false;
  // a pod selector shown by fleet name gains the cluster term (podselector.ts scopePodSelector)
  if (f.selFrom >= 0 && b[f.selFrom] === 0x7b && f.selKeys > 0 && scopesPodSelectors(iv.view, iv.cluster)) {
    // here: a workload's matchLabels object without the marker; any other selector is left to parsing
    if (!workload || f.mlFrom < 0 || b[f.mlFrom] !== 0x7b || f.mlMark) return false;
    e.put(f.mlTo - 1, f.mlTo - 1, f.mlKeys ? iv.bytes.markMemberComma : iv.bytes.markMember);
  }
  if (pod) {
    if (f.refs & REFS_NOMINATED) return false;
    rename(e, b, f.nodeNameFrom, f.nodeNameTo, iv);
  }
  rename(e, b, f.nameFrom, f.nameTo, iv);
  if (iv.resourceVersion && f.rvFrom >= 0 && b[f.rvFrom] === 0x22 && f.rvTo - f.rvFrom > 2) {
    // a plain decimal RV (no escapes: they are not digits) spliced in as it came, else decoded
    if (iv.rvHead && isMemberDecimalBytes(b, f.rvFrom + 1, f.rvTo - 1)) {
      // the single form: the digits stay where they are, the head and their length come before them
      const ins = iv.rvInserts;
      const len = f.rvTo - f.rvFrom - 2;
      if (ins !== undefined) e.put(f.rvFrom + 1, f.rvFrom + 1, ins[len] ?? rvInsert(iv, ins, len));
      else e.putSpliced(f.rvFrom, f.rvTo, iv.rvHead, b, f.rvFrom + 1, f.rvTo - 1, iv.rvTail!);
    } else e.putJson(f.rvFrom, f.rvTo, iv.resourceVersion(stringAt(b, f.rvFrom, f.rvTo)));
  }
  // client-side apply's record names the object (lastapplied.ts): left to toFleetObject, which shows it
  if (f.refs & REFS_RECORD && !iv.plainNames) return false;
  // labels before annotations, as a server writes them: the edit list gains them in order
  if (
    f.labelsFrom >= 0 &&
    !marker(e, b, f.labelsFrom, f.labelsTo, f.labelsKeys, f.labelsMarkFrom, f.labelsMarkTo, iv)
  )
    return false;
  if (f.annFrom >= 0 && !marker(e, b, f.annFrom, f.annTo, f.annKeys, f.annMarkFrom, f.annMarkTo, iv))
    return false;
  if (f.ownerNames && b[f.ownersFrom] === 0x5b)
    for (let k = 0; k < f.ownerNames.length; k += 2) rename(e, b, f.ownerNames[k]!, f.ownerNames[k + 1]!, iv);
  // toFleetObject assigns annotations, then labels: missing ones come last, in that order
  if (f.annFrom < 0 || f.labelsFrom < 0) {
    const vb = iv.bytes;
    let comma = f.mdKeys > 0;
    if (f.annFrom < 0) {
      e.put(f.mdTo - 1, f.mdTo - 1, comma ? vb.annComma : vb.ann);
      comma = true;
    }
    if (f.labelsFrom < 0) e.put(f.mdTo - 1, f.mdTo - 1, comma ? vb.labelsComma : vb.labels);
  }
  return true;
}

/** the view's edits, emptied for the next item (made when first needed) */
export function itemEdits(iv: ItemView): Edits {
  iv.edits ??= new Edits();
  iv.edits.reset();
  return iv.edits;
}

/**
 * Writes list item `b` (facts from the splitter) in the fleet view; false: nothing written, parse it.
 */
export function writeFleetItem(sink: ByteSink, b: Uint8Array, f: ItemFacts, iv: ItemView): boolean {
  if (f.odd) return false;
  const edits = itemEdits(iv);
  if (!objectEdits(edits, b, f, iv)) return false;
  edits.write(sink, b, 0, b.length);
  return true;
}

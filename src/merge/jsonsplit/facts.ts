/**
 * What the item scanner (jsonsplit-item.ts) notes about a list item or Table row while it scans it: where
 * the few values the fleet view changes lie (ItemFacts), so the rewriting (itembytes.ts) copies every other
 * byte without decoding it.
 *
 * Facts are noted only where the rewriting looks: an item's top-level keys, its metadata's keys, the keys
 * of labels, annotations and ownerReferences' elements, of spec and status (for the references a pod
 * carries, references.ts), of spec.selector and its matchLabels (podselector.ts); a row's `cells` and
 * `object`. Anything there the byte-level rewriting cannot be sure of — a key written with escapes, a key
 * it reads given twice, a member that makes the object refer to others — sets `odd`, and the item goes
 * down the parsing path.
 */
import { LAST_APPLIED } from '../objects/lastapplied.ts';
import { REFERRING_MEMBERS, REFERRING_SPEC_MEMBERS } from '../objects/references.ts';

/** where the rewriting's values lie in an item, as offsets into the item's bytes; -1: absent */
export class ItemFacts {
  /** the byte-level rewriting cannot be sure of this item: parse it */
  odd = false;
  /** `metadata`'s value; its first byte says its type */
  mdFrom = -1;
  mdTo = -1;
  /** members of metadata seen (0: an empty object) */
  mdKeys = 0;
  nameFrom = -1;
  nameTo = -1;
  rvFrom = -1;
  rvTo = -1;
  /** metadata's namespace and uid (a watch's initial events keep them, watchbytes.ts rawStub) */
  nsFrom = -1;
  nsTo = -1;
  uidFrom = -1;
  uidTo = -1;
  labelsFrom = -1;
  labelsTo = -1;
  labelsKeys = 0;
  /** the cluster marker's value inside labels, when the cluster already wrote one */
  labelsMarkFrom = -1;
  labelsMarkTo = -1;
  annFrom = -1;
  annTo = -1;
  annKeys = 0;
  annMarkFrom = -1;
  annMarkTo = -1;
  ownersFrom = -1;
  ownersTo = -1;
  /** value ranges of ownerReferences' elements' `name`, two numbers each */
  ownerNames: number[] | undefined = undefined;
  kindFrom = -1;
  kindTo = -1;
  /** the top-level apiVersion (a watch's shape, watch/bytes.ts rawObject: no walk of the object for it) */
  avFrom = -1;
  avTo = -1;
  specFrom = -1;
  /** spec.containers is an array: a pod, for references.ts */
  podSpec = false;
  /** spec.template is an object (a workload's pod template, podselector.ts) */
  podTemplate = false;
  /** spec.selector's value, its members seen; its matchLabels' value, members, and whether it holds the marker */
  selFrom = -1;
  selTo = -1;
  selKeys = 0;
  mlFrom = -1;
  mlTo = -1;
  mlKeys = 0;
  mlMark = false;
  nodeNameFrom = -1;
  nodeNameTo = -1;
  /** a Table row: its cells' value ranges (two numbers each), `cells`' and `object`'s ranges */
  cells: number[] | undefined = undefined;
  cellsFrom = -1;
  cellsTo = -1;
  objectFrom = -1;
  objectTo = -1;
  /**
   * members that may refer to other objects (REFS_*): whether they do depends on the kind (a pod's spec
   * may have a volumeName of its own), which itembytes.ts decides
   */
  refs = 0;
  /** bits of keys read once already, per context (a key given twice: `odd`) */
  seen = 0;
}

/** a top-level member of Events, Endpoints, EndpointSlices (or a Binding's target) */
export const REFS_TOP = 1;
/** a member of spec naming other objects in PVs, PVCs, VolumeAttachments */
export const REFS_SPEC = 2;
/** status.nominatedNodeName (a pod's) */
export const REFS_NOMINATED = 4;
/** annotations hold client-side apply's record, which names the object (lastapplied.ts) */
export const REFS_RECORD = 8;

/**
 * Contexts (what an object's keys mean to the rewriting) and slots (noted values the scanner does not look
 * into: negative, never a context), the values noteValue's switch and the walks compare. An enum because
 * esbuild writes its members' values where they are used: top-level consts become the bundle's module
 * `var`s, which V8 loads again at each compare (the tape walk of a canned row took 1.28x the time;
 * bench/lib/idiombench.ts "slot constants").
 */
export enum Slot {
  None = 0,
  Item = 1,
  Meta = 2,
  Spec = 3,
  Status = 4,
  Labels = 5,
  Annotations = 6,
  /** the ownerReferences array */
  Owners = 7,
  Owner = 8,
  Row = 9,
  /** a row's cells array */
  Cells = 10,
  /** spec.selector (a workload's or Service's pod selector, podselector.ts) */
  Selector = 11,
  /** spec.selector.matchLabels */
  MatchLabels = 12,
  Kind = -10,
  Name = -11,
  Rv = -12,
  Containers = -13,
  NodeName = -14,
  Mark = -15,
  OwnerName = -16,
  Namespace = -17,
  Uid = -18,
  Template = -19,
  ApiVersion = -20,
}
/** what a list item's and a Table row's scan starts in (ItemScanner.scan's `ctx`) */
export const ITEM = Slot.Item;
export const ROW = Slot.Row;

const enc = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const K_METADATA = enc('metadata');
const K_SPEC = enc('spec');
const K_STATUS = enc('status');
const K_KIND = enc('kind');
const K_API_VERSION = enc('apiVersion');
const K_NAME = enc('name');
const K_RV = enc('resourceVersion');
const K_NAMESPACE = enc('namespace');
const K_UID = enc('uid');
const K_LABELS = enc('labels');
const K_ANNOTATIONS = enc('annotations');
const K_OWNERS = enc('ownerReferences');
const K_CONTAINERS = enc('containers');
const K_NODENAME = enc('nodeName');
const K_NOMINATED = enc('nominatedNodeName');
const K_MARKER = enc('fleet.karmada.io/cluster');
const K_SELECTOR = enc('selector');
const K_TEMPLATE = enc('template');
const K_MATCH_LABELS = enc('matchLabels');
const K_CELLS = enc('cells');
const K_OBJECT = enc('object');
const K_RECORD = enc(LAST_APPLIED);
/** top-level members that make an object refer to others (references.ts's rule; a Binding's target too) */
const REFERRING_TOP = [...REFERRING_MEMBERS, 'target'].map(enc);
/** members of spec naming other objects in kinds rarer than pods */
const REFERRING_SPEC = [...REFERRING_SPEC_MEMBERS].map(enc);

/** a key a context knows: the slot its value gets, its bit in `seen` (0: may come twice), REFS_* it sets */
interface Known {
  key: Uint8Array;
  slot: number;
  bit: number;
  refs: number;
}

/** per context, per key length: the keys of that length it knows (most keys' lengths match none) */
const KNOWN: Array<Array<Known[] | undefined> | undefined> = [];

function know(ctx: number, key: Uint8Array, slot: number, bit: number, refs = 0): void {
  KNOWN[ctx] ??= [];
  const byLen = KNOWN[ctx];
  while (byLen.length <= key.length) byLen.push(undefined);
  byLen[key.length] ??= [];
  byLen[key.length]!.push({ key, slot, bit, refs });
}
know(Slot.Item, K_METADATA, Slot.Meta, 1);
know(Slot.Item, K_SPEC, Slot.Spec, 2);
know(Slot.Item, K_STATUS, Slot.Status, 4);
know(Slot.Item, K_KIND, Slot.Kind, 8);
// read by watches only, never rewritten: given twice, the last one counts (as JSON.parse keeps it)
know(Slot.Item, K_API_VERSION, Slot.ApiVersion, 0);
for (const k of REFERRING_TOP) know(Slot.Item, k, Slot.None, 0, REFS_TOP);
know(Slot.Meta, K_NAME, Slot.Name, 16);
know(Slot.Meta, K_RV, Slot.Rv, 32);
// read by watches only, never rewritten: given twice, the last one counts (as JSON.parse keeps it)
know(Slot.Meta, K_NAMESPACE, Slot.Namespace, 0);
know(Slot.Meta, K_UID, Slot.Uid, 0);
know(Slot.Meta, K_LABELS, Slot.Labels, 64);
know(Slot.Meta, K_ANNOTATIONS, Slot.Annotations, 128);
know(Slot.Meta, K_OWNERS, Slot.Owners, 256);
know(Slot.Spec, K_CONTAINERS, Slot.Containers, 512);
know(Slot.Spec, K_NODENAME, Slot.NodeName, 1024);
for (const k of REFERRING_SPEC) know(Slot.Spec, k, Slot.None, 0, REFS_SPEC);
know(Slot.Spec, K_SELECTOR, Slot.Selector, 32768);
know(Slot.Spec, K_TEMPLATE, Slot.Template, 65536);
know(Slot.Selector, K_MATCH_LABELS, Slot.MatchLabels, 131072);
know(Slot.MatchLabels, K_MARKER, Slot.Mark, 262144);
know(Slot.Status, K_NOMINATED, Slot.None, 0, REFS_NOMINATED);
know(Slot.Labels, K_MARKER, Slot.Mark, 2048);
know(Slot.Annotations, K_MARKER, Slot.Mark, 4096);
know(Slot.Annotations, K_RECORD, Slot.None, 0, REFS_RECORD);
// a name given twice in one element is found by arr (Owners)
know(Slot.Owner, K_NAME, Slot.OwnerName, 0);
know(Slot.Row, K_CELLS, Slot.Cells, 8192);
know(Slot.Row, K_OBJECT, Slot.Item, 16384);

/**
 * Every key some context knows, once, shortest first: the wasm lane's tape names a key by its index + 1
 * (its id; skip.wat's keyId over the table wasm/lane.ts writes from these), so ./tape.ts finds what a key
 * is to a context by the id instead of comparing its bytes again.
 */
export const KEYS: readonly Uint8Array[] = (() => {
  const all = new Map<string, Uint8Array>();
  for (const byLen of KNOWN)
    for (const known of byLen ?? [])
      for (const kn of known ?? []) all.set(String.fromCharCode(...kn.key), kn.key);
  return [...all.values()].sort((a, b) => a.length - b.length);
})();
/** ids as many as fit one context's row of the *_BY_ID tables */
export const ID_ROW = 64;
/**
 * per context and key id (ctx * ID_ROW + id), what the key is to it, as flat integers (./tape.ts reads
 * them per tape entry: one typed-array load each, not a Known object's fields): the slot its value gets
 * (None: none), its bit in `seen`, the REFS_* it sets
 */
export const SLOT_BY_ID = new Int32Array(13 * ID_ROW);
export const BIT_BY_ID = new Int32Array(13 * ID_ROW);
export const REFS_BY_ID = new Int32Array(13 * ID_ROW);
/** per key id: some context looks into its value (a context, not a slot): the lane descends into it */
export const DESCENDS: readonly boolean[] = (() => {
  const d = new Array<boolean>(KEYS.length + 1).fill(false);
  for (const [ctx, byLen] of KNOWN.entries())
    for (const known of byLen ?? [])
      for (const kn of known ?? []) {
        const id = KEYS.indexOf(kn.key) + 1;
        const at = ctx * ID_ROW + id;
        // a referring key: only its REFS_* (keySlot's order: refs first, no slot, no `seen`)
        if (kn.refs) REFS_BY_ID[at] = kn.refs;
        else {
          SLOT_BY_ID[at] = kn.slot;
          BIT_BY_ID[at] = kn.bit;
        }
        if (kn.slot > 0 && !kn.refs) d[id] = true;
      }
  return d;
})();

/** counts `n` keys of an object in context `ctx`: the maps' sizes, which the rewriting checks */
export function countKeys(f: ItemFacts, ctx: number, n: number): void {
  if (ctx === Slot.Meta) f.mdKeys += n;
  else if (ctx === Slot.Labels) f.labelsKeys += n;
  else if (ctx === Slot.Annotations) f.annKeys += n;
  else if (ctx === Slot.Selector) f.selKeys += n;
  else if (ctx === Slot.MatchLabels) f.mlKeys += n;
}

/**
 * What the key at `at` (`len` bytes, quotes excluded) of an object in context `ctx` is to the rewriting:
 * the context of its value, a negative slot for values noted but not looked into, or Slot.None. Also counts
 * map keys and flags what makes the item odd.
 */
export function keySlot(
  f: ItemFacts,
  b: Uint8Array,
  ctx: number,
  at: number,
  len: number,
  escaped: boolean,
): number {
  if (escaped) {
    f.odd = true;
    return Slot.None;
  }
  countKeys(f, ctx, 1);
  const byLen = KNOWN[ctx];
  if (byLen === undefined || len >= byLen.length) return Slot.None;
  const known = byLen[len];
  if (known === undefined) return Slot.None;
  for (let k = 0; k < known.length; k++) {
    const kn = known[k]!;
    const key = kn.key;
    let j = 0;
    while (j < len && b[at + j] === key[j]) j++;
    if (j < len) continue;
    if (kn.refs) {
      f.refs |= kn.refs;
      return Slot.None;
    }
    return kn.bit ? once(f, kn.bit, kn.slot) : kn.slot;
  }
  return Slot.None;
}

/** `slot` for a key read the first time (`bit`), `odd` for one given twice */
function once(f: ItemFacts, bit: number, slot: number): number {
  if (f.seen & bit) f.odd = true;
  f.seen |= bit;
  return slot;
}

/** the value of a noted key ended: `from`, `to` relative to the item's `start` in `b` */
export function noteValue(
  f: ItemFacts,
  b: Uint8Array,
  start: number,
  ctx: number,
  slot: number,
  from: number,
  to: number,
): void {
  switch (slot) {
    case Slot.Meta:
      f.mdFrom = from;
      f.mdTo = to;
      return;
    case Slot.Spec:
      f.specFrom = from;
      return;
    case Slot.Kind:
      f.kindFrom = from;
      f.kindTo = to;
      return;
    case Slot.Name:
      f.nameFrom = from;
      f.nameTo = to;
      return;
    case Slot.Rv:
      f.rvFrom = from;
      f.rvTo = to;
      return;
    case Slot.ApiVersion:
      f.avFrom = from;
      f.avTo = to;
      return;
    case Slot.Namespace:
      f.nsFrom = from;
      f.nsTo = to;
      return;
    case Slot.Uid:
      f.uidFrom = from;
      f.uidTo = to;
      return;
    case Slot.Labels:
      f.labelsFrom = from;
      f.labelsTo = to;
      return;
    case Slot.Annotations:
      f.annFrom = from;
      f.annTo = to;
      return;
    case Slot.Owners:
      f.ownersFrom = from;
      f.ownersTo = to;
      return;
    case Slot.Containers:
      f.podSpec = b[start + from] === 0x5b;
      return;
    case Slot.Template:
      f.podTemplate = b[start + from] === 0x7b;
      return;
    case Slot.Selector:
      f.selFrom = from;
      f.selTo = to;
      return;
    case Slot.MatchLabels:
      f.mlFrom = from;
      f.mlTo = to;
      return;
    case Slot.NodeName:
      f.nodeNameFrom = from;
      f.nodeNameTo = to;
      return;
    case Slot.Mark:
      if (ctx === Slot.MatchLabels) f.mlMark = true;
      else if (ctx === Slot.Labels) {
        f.labelsMarkFrom = from;
        f.labelsMarkTo = to;
      } else {
        f.annMarkFrom = from;
        f.annMarkTo = to;
      }
      return;
    case Slot.OwnerName: {
      // most objects have one owner: an array of its two numbers, not an empty one grown by a push
      if (f.ownerNames === undefined) f.ownerNames = [from, to];
      else f.ownerNames.push(from, to);
      return;
    }
    case Slot.Cells:
      f.cellsFrom = from;
      f.cellsTo = to;
      return;
    case Slot.Item:
      f.objectFrom = from;
      f.objectTo = to;
      return;
  }
}

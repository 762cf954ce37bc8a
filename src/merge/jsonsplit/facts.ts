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

// contexts: what an object's keys mean to the rewriting
export const NONE = 0;
export const ITEM = 1;
const META = 2;
const SPEC = 3;
const STATUS = 4;
const LABELS = 5;
const ANNOTATIONS = 6;
export const OWNERS = 7; // the ownerReferences array
export const OWNER = 8;
export const ROW = 9;
export const CELLS = 10; // a row's cells array
const SELECTOR = 11; // spec.selector (a workload's or Service's pod selector, podselector.ts)
const MATCH_LABELS = 12; // spec.selector.matchLabels

// slots: noted values the scanner does not look into (negative: never a context)
export const SLOT_KIND = -10;
export const SLOT_NAME = -11;
export const SLOT_RV = -12;
export const SLOT_CONTAINERS = -13;
export const SLOT_NODENAME = -14;
export const SLOT_MARK = -15;
export const SLOT_OWNER_NAME = -16;
export const SLOT_NAMESPACE = -17;
export const SLOT_UID = -18;
export const SLOT_TEMPLATE = -19;
export const SLOT_API_VERSION = -20;

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
know(ITEM, K_METADATA, META, 1);
know(ITEM, K_SPEC, SPEC, 2);
know(ITEM, K_STATUS, STATUS, 4);
know(ITEM, K_KIND, SLOT_KIND, 8);
// read by watches only, never rewritten: given twice, the last one counts (as JSON.parse keeps it)
know(ITEM, K_API_VERSION, SLOT_API_VERSION, 0);
for (const k of REFERRING_TOP) know(ITEM, k, NONE, 0, REFS_TOP);
know(META, K_NAME, SLOT_NAME, 16);
know(META, K_RV, SLOT_RV, 32);
// read by watches only, never rewritten: given twice, the last one counts (as JSON.parse keeps it)
know(META, K_NAMESPACE, SLOT_NAMESPACE, 0);
know(META, K_UID, SLOT_UID, 0);
know(META, K_LABELS, LABELS, 64);
know(META, K_ANNOTATIONS, ANNOTATIONS, 128);
know(META, K_OWNERS, OWNERS, 256);
know(SPEC, K_CONTAINERS, SLOT_CONTAINERS, 512);
know(SPEC, K_NODENAME, SLOT_NODENAME, 1024);
for (const k of REFERRING_SPEC) know(SPEC, k, NONE, 0, REFS_SPEC);
know(SPEC, K_SELECTOR, SELECTOR, 32768);
know(SPEC, K_TEMPLATE, SLOT_TEMPLATE, 65536);
know(SELECTOR, K_MATCH_LABELS, MATCH_LABELS, 131072);
know(MATCH_LABELS, K_MARKER, SLOT_MARK, 262144);
know(STATUS, K_NOMINATED, NONE, 0, REFS_NOMINATED);
know(LABELS, K_MARKER, SLOT_MARK, 2048);
know(ANNOTATIONS, K_MARKER, SLOT_MARK, 4096);
know(ANNOTATIONS, K_RECORD, NONE, 0, REFS_RECORD);
// a name given twice in one element is found by arr (OWNERS)
know(OWNER, K_NAME, SLOT_OWNER_NAME, 0);
know(ROW, K_CELLS, CELLS, 8192);
know(ROW, K_OBJECT, ITEM, 16384);

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
 * (NONE: none), its bit in `seen`, the REFS_* it sets
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
  if (ctx === META) f.mdKeys += n;
  else if (ctx === LABELS) f.labelsKeys += n;
  else if (ctx === ANNOTATIONS) f.annKeys += n;
  else if (ctx === SELECTOR) f.selKeys += n;
  else if (ctx === MATCH_LABELS) f.mlKeys += n;
}

/**
 * What the key at `at` (`len` bytes, quotes excluded) of an object in context `ctx` is to the rewriting:
 * the context of its value, a negative slot for values noted but not looked into, or NONE. Also counts
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
    return NONE;
  }
  countKeys(f, ctx, 1);
  const byLen = KNOWN[ctx];
  if (byLen === undefined || len >= byLen.length) return NONE;
  const known = byLen[len];
  if (known === undefined) return NONE;
  for (let k = 0; k < known.length; k++) {
    const kn = known[k]!;
    const key = kn.key;
    let j = 0;
    while (j < len && b[at + j] === key[j]) j++;
    if (j < len) continue;
    if (kn.refs) {
      f.refs |= kn.refs;
      return NONE;
    }
    return kn.bit ? once(f, kn.bit, kn.slot) : kn.slot;
  }
  return NONE;
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
    case META:
      f.mdFrom = from;
      f.mdTo = to;
      return;
    case SPEC:
      f.specFrom = from;
      return;
    case SLOT_KIND:
      f.kindFrom = from;
      f.kindTo = to;
      return;
    case SLOT_NAME:
      f.nameFrom = from;
      f.nameTo = to;
      return;
    case SLOT_RV:
      f.rvFrom = from;
      f.rvTo = to;
      return;
    case SLOT_API_VERSION:
      f.avFrom = from;
      f.avTo = to;
      return;
    case SLOT_NAMESPACE:
      f.nsFrom = from;
      f.nsTo = to;
      return;
    case SLOT_UID:
      f.uidFrom = from;
      f.uidTo = to;
      return;
    case LABELS:
      f.labelsFrom = from;
      f.labelsTo = to;
      return;
    case ANNOTATIONS:
      f.annFrom = from;
      f.annTo = to;
      return;
    case OWNERS:
      f.ownersFrom = from;
      f.ownersTo = to;
      return;
    case SLOT_CONTAINERS:
      f.podSpec = b[start + from] === 0x5b;
      return;
    case SLOT_TEMPLATE:
      f.podTemplate = b[start + from] === 0x7b;
      return;
    case SELECTOR:
      f.selFrom = from;
      f.selTo = to;
      return;
    case MATCH_LABELS:
      f.mlFrom = from;
      f.mlTo = to;
      return;
    case SLOT_NODENAME:
      f.nodeNameFrom = from;
      f.nodeNameTo = to;
      return;
    case SLOT_MARK:
      if (ctx === MATCH_LABELS) f.mlMark = true;
      else if (ctx === LABELS) {
        f.labelsMarkFrom = from;
        f.labelsMarkTo = to;
      } else {
        f.annMarkFrom = from;
        f.annMarkTo = to;
      }
      return;
    case SLOT_OWNER_NAME: {
      // most objects have one owner: an array of its two numbers, not an empty one grown by a push
      if (f.ownerNames === undefined) f.ownerNames = [from, to];
      else f.ownerNames.push(from, to);
      return;
    }
    case CELLS:
      f.cellsFrom = from;
      f.cellsTo = to;
      return;
    case ITEM:
      f.objectFrom = from;
      f.objectTo = to;
      return;
  }
}

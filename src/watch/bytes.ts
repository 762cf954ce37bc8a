/**
 * Watch events on the byte path, as merged lists have their items (itembytes.ts): an upstream watch line
 * is scanned, not parsed (its `object` by the list's item scanner, jsonsplit-item.ts, which notes where
 * the values the fleet view changes lie), and the merged line is written by the list's item rewriter
 * (writeFleetItem) around the event's type, every other byte of the object copied as it came.
 *
 * What the merger needs besides (the object's RV, kind, and during initial events its identity: name,
 * namespace, uid) and the apiVersion (looked up when the kind changes) are read from the noted ranges.
 * Whatever the byte path cannot be sure of (a key with escapes, a
 * member given twice, a value of an unexpected type, a line the scanner refuses) falls back to parsing:
 * the event's `object` is then parsed (once, when first read), and the merger goes the parsing way.
 *
 * A raw event's bytes are a view of the upstream chunk: an event is read synchronously, while the chunk
 * it came in is still the reader's (its `object` must be read then too, if at all).
 */

import { Edits } from '../merge/itembytes/edits.ts';
import {
  type ItemView,
  itemView,
  stringAt,
  useResourceVersion,
  writeFleetItem,
} from '../merge/itembytes/index.ts';
import { ITEM, type ItemFacts, type ItemScanner } from '../merge/jsonsplit/item.ts';
import { str, ws } from '../merge/jsonsplit/skip.ts';
import type { FleetView } from '../merge/objects/index.ts';
import type { Splicer } from '../merge/rv/index.ts';
import { ByteSink } from '../util/bytes.ts';

const utf8 = new TextDecoder();
const encoder = new TextEncoder();
/** nesting the byte path reads (deeper: parsed, as JSON.parse has no such limit) */
const MAX_DEPTH = 100;

/** A watch event as the line's bytes (scanned), with its `object` parsed only when read. */
export class RawWatchEvent {
  private parsed: Record<string, any> | undefined;
  private view: Uint8Array | undefined;

  constructor(
    readonly type: string,
    /** the line */
    readonly bytes: Uint8Array,
    /** the object's value within `bytes` */
    readonly from: number,
    readonly to: number,
    /** the item scanner's facts of the object (offsets from `from`) */
    readonly facts: ItemFacts,
  ) {}

  /** the object, parsed (once): for what the byte path leaves to parsing */
  get object(): Record<string, any> {
    this.parsed ??= JSON.parse(utf8.decode(this.objectBytes)) as Record<string, any>;
    return this.parsed;
  }

  /** the object's bytes (one view, made when first asked for: the merger and the writer both read it) */
  get objectBytes(): Uint8Array {
    this.view ??= this.bytes.subarray(this.from, this.to);
    return this.view;
  }
}

/** the usual event types and kinds, as their JSON texts: read without decoding (a burst's every event) */
const KNOWN = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR', 'Pod'];
const KNOWN_TEXT = KNOWN.map((t) => encoder.encode(JSON.stringify(t)));

function same(b: Uint8Array, from: number, to: number, t: Uint8Array): boolean {
  if (to - from !== t.length) return false;
  for (let k = 0; k < t.length; k++) if (b[from + k] !== t[k]) return false;
  return true;
}

/** the string value of the JSON string `b[from..to)`, the usual ones without decoding */
function known(b: Uint8Array, from: number, to: number): string {
  for (let k = 0; k < KNOWN.length; k++) if (same(b, from, to, KNOWN_TEXT[k]!)) return KNOWN[k]!;
  return stringAt(b, from, to);
}

/** is the key text `b[from..to)` (quotes included) exactly `key` (ASCII, no escapes)? */
function isKey(b: Uint8Array, from: number, to: number, key: string): boolean {
  if (to - from !== key.length + 2) return false;
  for (let k = 0; k < key.length; k++) if (b[from + 1 + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** a key with a backslash: what it says is known only decoded (left to parsing) */
function escaped(b: Uint8Array, from: number, to: number): boolean {
  for (let k = from + 1; k < to - 1; k++) if (b[k] === 0x5c) return true;
  return false;
}

/**
 * One watch line (without its newline) scanned by `scanner` (the process's watch scanner): `{"type": <string>, "object": {…}}` in any order, other
 * members skipped (JSON.stringify of the merged event leaves them out too), whitespace anywhere JSON
 * allows. Undefined when the byte path cannot read it: the caller parses the line (and reports what is not
 * a watch event as before). The members are walked here, not by a callback: every event of every merged
 * watch comes this way, and a callback's closure was an allocation an event.
 */
export function scanWatchLine(
  b: Uint8Array,
  scanner: ItemScanner,
  /** the line is `b[start..n)`: a line of a chunk read where it lies (no view per line) */
  start = 0,
  n = b.length,
): RawWatchEvent | undefined {
  let i = ws(b, start, n);
  if (i >= n || b[i] !== 0x7b) return undefined;
  let type: string | undefined;
  let from = -1;
  let to = -1;
  let facts: ItemFacts | undefined;
  i = ws(b, i + 1, n);
  if (i < n && b[i] === 0x7d) return undefined;
  for (;;) {
    if (i >= n || b[i] !== 0x22) return undefined;
    const kf = i;
    i = str(b, i, n);
    if (i < 0 || escaped(b, kf, i)) return undefined;
    const kt = i;
    i = ws(b, i, n);
    if (i >= n || b[i] !== 0x3a) return undefined;
    i = ws(b, i + 1, n);
    if (i >= n) return undefined;
    // `type` or `object` given twice (JSON.parse keeps the last), or of another type: parsed
    if (isKey(b, kf, kt, 'type')) {
      if (type !== undefined || b[i] !== 0x22) return undefined;
      const e = str(b, i, n);
      if (e < 0) return undefined;
      type = known(b, i, e);
      i = e;
    } else if (isKey(b, kf, kt, 'object')) {
      if (from >= 0 || b[i] !== 0x7b) return undefined;
      const e = scanner.scan(b, i, n, ITEM, MAX_DEPTH);
      if (e < 0) return undefined;
      from = i;
      to = e;
      facts = scanner.facts;
      i = e;
    } else {
      i = scanner.skip(b, i, n, MAX_DEPTH);
      if (i < 0) return undefined;
    }
    i = ws(b, i, n);
    if (i >= n) return undefined;
    if (b[i] === 0x7d) break;
    if (b[i] !== 0x2c) return undefined;
    i = ws(b, i + 1, n);
  }
  if (type === undefined || !facts || ws(b, i + 1, n) !== n) return undefined;
  return new RawWatchEvent(type, b, from, to, facts);
}

/** a string member's value, `undefined` when absent; `null`: not a string (left to parsing) */
type Text = string | undefined | null;

/** the string at `b[from..to)` as a Text */
function textAt(b: Uint8Array, from: number, to: number): Text {
  if (from < 0) return undefined;
  return b[from] === 0x22 ? stringAt(b, from, to) : null;
}

/** the kind and apiVersion of a watch's objects (for its fleet bookmarks) */
export interface Shape {
  kind?: string;
  apiVersion?: string;
  /** `kind` as its JSON text, once an object's bytes showed it: a watch's objects are of one kind */
  kindText?: Uint8Array;
}

/** What the merger reads of a raw event's object, besides what the rewriting does. */
export interface RawObject {
  /** metadata.resourceVersion */
  rv: string | undefined;
  /** kind: undefined when absent */
  kind: string | undefined;
  /** the watch's shape after this object (the one given while its kind stays) */
  shape: Shape;
}

/**
 * The object's RV and kind, and the watch's shape after it (a watch's objects are of one kind and
 * version: the apiVersion is looked up when the kind changes); undefined: the byte path leaves the event
 * to parsing (a Table too: Table watches are parsed).
 */
export function rawObject(ev: RawWatchEvent, shape: Shape): RawObject | undefined {
  const f = ev.facts;
  const b = ev.objectBytes;
  // metadata that is not an object, or anything the scanner found odd: parsed
  if (f.odd || f.mdFrom < 0 || b[f.mdFrom] !== 0x7b) return undefined;
  const rv = textAt(b, f.rvFrom, f.rvTo);
  const kind =
    f.kindFrom < 0 ? undefined : b[f.kindFrom] === 0x22 ? kindOf(b, f.kindFrom, f.kindTo, shape) : null;
  if (rv === null || kind === null || kind === 'Table') return undefined;
  if (kind && kind !== shape.kind) {
    const apiVersion = rawApiVersion(ev);
    if (apiVersion === null) return undefined;
    shape = { kind, apiVersion, kindText: b.slice(f.kindFrom, f.kindTo) };
  } else if (kind && !shape.kindText) shape.kindText = b.slice(f.kindFrom, f.kindTo);
  return { rv, kind, shape };
}

/** the kind whose JSON string is `b[from..to)`: the watch's own kind read from its text, without decoding */
function kindOf(b: Uint8Array, from: number, to: number, shape: Shape): string {
  const text = shape.kindText;
  return text !== undefined && same(b, from, to, text) ? shape.kind! : known(b, from, to);
}

/**
 * What the initial phase (watchinitial.ts) keeps of the object: kind, apiVersion and identifying metadata
 * (name, namespace, uid, resourceVersion, as far as they are there); undefined: one of them is not a string.
 */
export function rawStub(ev: RawWatchEvent, o: RawObject): Record<string, any> | undefined {
  const apiVersion = o.kind ? o.shape.apiVersion : rawApiVersion(ev);
  const metadata = rawIdentity(ev);
  return metadata && apiVersion !== null ? { kind: o.kind, apiVersion, metadata } : undefined;
}

/** the object's top-level `apiVersion` (the last one given, as JSON.parse keeps it; null: not a string) */
function rawApiVersion(ev: RawWatchEvent): Text {
  const f = ev.facts;
  return textAt(ev.objectBytes, f.avFrom, f.avTo);
}

/**
 * the identifying metadata of a raw event's object, from where the scanner noted it (no walk of the
 * metadata); undefined: one of them is not a string
 */
function rawIdentity(ev: RawWatchEvent): Record<string, string> | undefined {
  const b = ev.objectBytes;
  const f = ev.facts;
  const md: Record<string, string> = {};
  return identity(md, 'name', b, f.nameFrom, f.nameTo) &&
    identity(md, 'namespace', b, f.nsFrom, f.nsTo) &&
    identity(md, 'uid', b, f.uidFrom, f.uidTo) &&
    identity(md, 'resourceVersion', b, f.rvFrom, f.rvTo)
    ? md
    : undefined;
}

/** `md[key]`, the string at `b[from..to)` when there is one there; false: not a string */
function identity(md: Record<string, string>, key: string, b: Uint8Array, from: number, to: number): boolean {
  const v = textAt(b, from, to);
  if (v === null) return false;
  if (v !== undefined) md[key] = v;
  return true;
}

/**
 * Where every merged watch writes its lines, one after another, each handed out as a view: one buffer
 * serves many lines (a buffer per line cost more than the rest of the line's rewriting), and is let go
 * once nearly full (its lines stay valid: nothing is written over a line handed out). Shared by all
 * merged watches (a line is written whole in one synchronous call), so an idle watch holds none.
 */
const SLAB = 64 * 1024;
const slab = new ByteSink(SLAB);
/** `{"type":<type>,"object":` by type */
const prefixes = new Map<string, Uint8Array>();

function prefixOf(type: string): Uint8Array {
  let p = prefixes.get(type);
  if (!p) {
    p = encoder.encode(`{"type":${JSON.stringify(type)},"object":`);
    // the usual types; any other is encoded each time
    if (prefixes.size < 8) prefixes.set(type, p);
  }
  return p;
}

/**
 * The edits of the line being written, for every merged watch's views (a line is written whole in one
 * synchronous call): one per view was five arrays and a scratch made at each watch's first event
 */
const edits = new Edits();

/**
 * The cluster views of every merged watch, by fleet view and cluster: a view depends on these alone, what
 * a line sets in it (the RV splicer) is set anew by every line, and a line is written whole in one
 * synchronous call, so watches share them. One per watch and cluster cost ~2 µs at its first event
 * (merged-watch's burst: 1,000 watches of ~2 events each). Bounded as itembytes' own.
 */
const sharedViews = new Map<string, Map<string, ItemView>>();
let sharedCount = 0;
const SHARED_KEPT = 4096;

/** every member of a fleet view, in the key: one added to FleetView fails to compile here until keyed */
const KEYED: Record<keyof FleetView, true> = { federation: true, scope: true };
void KEYED;

function viewsOf(view: FleetView): Map<string, ItemView> {
  // (JSON.stringify of the view cost more than the rest of a fresh watch's views)
  const key =
    view.scope === undefined ? (view.federation ? 'f' : '-') : `${view.federation ? 'f' : '-'}${view.scope}`;
  let views = sharedViews.get(key);
  if (!views) {
    views = new Map();
    sharedViews.set(key, views);
  }
  return views;
}

/** Writes merged watch lines from raw events: one per merged watch, the cluster views shared. */
export class WatchLineWriter {
  private views: Map<string, ItemView> | undefined;

  constructor(private readonly view: FleetView) {}

  /**
   * `{"type":<type>,"object":<ev's object in the fleet view of cluster>}\n`, the object's RV mapped by
   * `rv` (a splicer's RV written from the object's bytes); undefined (nothing kept): the object is one the
   * byte path leaves to parsing.
   */
  line(ev: RawWatchEvent, cluster: string, type: string, rv: Splicer): Uint8Array | undefined {
    let views = this.views;
    // made again after the bound cleared the shared ones (the old map stays this writer's)
    if (!views) views = this.views = viewsOf(this.view);
    let iv = views.get(cluster);
    if (!iv) {
      if (++sharedCount > SHARED_KEPT) {
        sharedViews.clear();
        sharedCount = 1;
        views = this.views = viewsOf(this.view);
      }
      iv = itemView(this.view, cluster);
      iv.edits = edits;
      views.set(cluster, iv);
    }
    useResourceVersion(iv, rv);
    const s = slab;
    if (s.length > SLAB - 8 * 1024) s.take();
    const start = s.length;
    const prefix = prefixOf(type);
    s.bytes(prefix, 0, prefix.length);
    if (!writeFleetItem(s, ev.objectBytes, ev.facts, iv)) {
      // nothing of the object was written: the prefix is taken back (kinds that always parse, such as
      // Events, cost no buffer)
      s.advance(start - s.length);
      return undefined;
    }
    s.byte(0x7d);
    s.byte(0x0a);
    const end = s.length;
    // the buffer the line is in (it grew into a new one, copied, when the line did not fit)
    return s.reserve(0).subarray(start, end);
  }
}

/**
 * The merged list body, streamed: items (or Table rows) flow from each cluster's response to the client
 * as they are split and rewritten, in fleet order, never a whole list in memory.
 *
 * Shape: `{"kind":…,"apiVersion":…[,"columnDefinitions":…],"items"|"rows":[…],"metadata":{…}}`. The list
 * metadata comes last: where a paged walk stops (the continue token) and how many items remain are known
 * only once the items have flowed. JSON clients do not depend on member order.
 *
 * Paging walks the clusters: a page takes up to `limit` items across the sources, in order. Where it stops
 * the token records the cluster, the upstream continue token its page was asked with, and how many items
 * of that page were already taken (`skip`), so the next page asks the same cluster again from the same
 * point at the same RV: no item lost or repeated, each cluster read at the RV it started with.
 */

import { type ItemView, itemView, writeFleetItem } from '../merge/itembytes/index.ts';
import { writeFleetRow } from '../merge/itembytes/row.ts';
import { parseItem, type SplitEvent } from '../merge/jsonsplit/index.ts';
import { type FleetView, toFleetObject } from '../merge/objects/index.ts';
import { compositeWith, encodeComposite, type Membership } from '../merge/rv/index.ts';
import { type MergedColumns, toFleetRow } from '../merge/table/index.ts';
import { ByteSink } from '../util/bytes.ts';

const NO_RVS: ReadonlyMap<string, string> = new Map();

/**
 * The body is sent in pieces of about this many bytes: fewer, larger writes; a list is not a stream. A
 * piece goes out before an item that may not fit in what is left of its buffer (an item's bytes grow by
 * its fleet names and markers, at most this much beyond an eighth): each piece fills its buffer, and the
 * buffers made for an answer add up to little more than its bytes.
 */
const PIECE = 256 * 1024;
const ITEM_GROWTH = 1024;
/**
 * The first piece goes out once it holds this much: the client sees the list begin without waiting for a
 * whole piece to be scanned and rewritten (2-8 ms of a 10×1,000 answer's first byte, on 2 loaded cores)
 */
const FIRST_PIECE = 32 * 1024;

export interface ListSource {
  cluster: string;
  /** the cluster's parsed head (kind, apiVersion, metadata, columnDefinitions) */
  head: Record<string, any>;
  /** the rest of its split body: items, then the tail */
  events: ListEvents;
  /** items of this page already taken by an earlier fleet page */
  skip: number;
  /** the upstream continue token this page was asked with ("" = from the cluster's first item) */
  askedWith: string;
  /** the limit it was asked with (0 = none) */
  askedLimit: number;
  /** stop reading (cancels the upstream body) */
  cancel(): Promise<void>;
}

export interface ListMergeInput {
  view: FleetView;
  membership: Membership;
  /** every cluster's list RV ("" unknown): the composite base */
  rvs: Map<string, string>;
  /** items per page, 0 = all */
  limit: number;
  kind: string;
  apiVersion: string;
  /** present when the sources are Tables: merged columns, indexed like `sources` */
  table?: MergedColumns;
  /** encodes the fleet continue token for a walk that resumes at `cluster` */
  continueToken(cluster: string, upstream: string, skip: number): string;
}

/**
 * A source's events. `ready`, when the source has it, hands on an event already split without a promise
 * (undefined: none is, ask `next`), which is how the merge takes them item after item.
 */
export interface ListEvents extends AsyncIterator<SplitEvent> {
  ready?(): SplitEvent | undefined;
}

type ItemEvent = Extract<SplitEvent, { type: 'item' }>;

async function nextItem(events: ListEvents): Promise<ItemEvent | undefined> {
  for (;;) {
    const e = events.ready?.();
    if (e !== undefined) {
      if (e.type === 'tail') return undefined;
      if (e.type === 'item') return e;
      continue;
    }
    const r = await events.next();
    if (r.done || r.value.type === 'tail') return undefined;
    if (r.value.type === 'item') return r.value;
  }
}

/** Counts what is left of a page without parsing it (bounded by the page's limit). */
async function drainCount(events: ListEvents): Promise<number> {
  let n = 0;
  while ((await nextItem(events)) !== undefined) n++;
  return n;
}

function remainingOf(head: Record<string, any>): number | undefined {
  const md = head.metadata ?? {};
  if (!md.continue) return 0;
  return typeof md.remainingItemCount === 'number' ? md.remainingItemCount : undefined;
}

/**
 * One item in the fleet view, written to `out`: from its bytes where the splitter's facts allow it
 * (itembytes.ts), else parsed, rewritten and serialised.
 */
function writeItem(
  out: ByteSink,
  item: ItemEvent,
  iv: ItemView,
  table: MergedColumns | undefined,
  input: number,
): void {
  const f = item.facts;
  if (table) {
    if (f && writeFleetRow(out, item.bytes, f, iv, table, input)) return;
    const row = parseItem(item.bytes) as Record<string, any>;
    out.string(JSON.stringify(toFleetRow(iv.view, row, table, input, iv.cluster, iv.resourceVersion)));
  } else if (!(f && writeFleetItem(out, item.bytes, f, iv))) {
    const obj = parseItem(item.bytes) as Record<string, any>;
    out.string(JSON.stringify(toFleetObject(iv.view, obj, iv.cluster, iv.resourceVersion)));
  }
}

export async function* mergeList(input: ListMergeInput, sources: ListSource[]): AsyncGenerator<Uint8Array> {
  const { view, membership, rvs, limit, table } = input;
  const arrayKey = table ? 'rows' : 'items';
  const out = new ByteSink(PIECE);
  let open = `{"kind":${JSON.stringify(input.kind)},"apiVersion":${JSON.stringify(input.apiVersion)},`;
  if (table) open += `"columnDefinitions":${JSON.stringify(table.columns)},`;
  out.string(`${open}"${arrayKey}":[`);

  let emitted = 0;
  let first = true;
  let token: string | undefined;
  let remaining: number | undefined;
  try {
    for (let si = 0; si < sources.length; si++) {
      const s = sources[si]!;
      // an item's RV is its cluster's own (the single form, rvcodec.ts): what a GET of it answers, as
      // long whatever the number of clusters; the list's RV, which knows every cluster, closes the body
      const iv = itemView(view, s.cluster, compositeWith(membership, NO_RVS, s.cluster));
      let consumed = 0; // items of this page read, skipped ones included
      let pageEnded = false;
      const events = s.events;
      const sync = typeof events.ready === 'function';
      while (!(limit > 0 && emitted === limit)) {
        // nextItem inlined, and what the source has split already taken without a promise
        let e = sync ? events.ready!() : undefined;
        if (e === undefined) {
          const r = await events.next();
          if (r.done) {
            pageEnded = true;
            break;
          }
          e = r.value;
        }
        if (e.type === 'tail') {
          pageEnded = true;
          break;
        }
        if (e.type !== 'item') continue;
        const item = e;
        consumed++;
        if (consumed <= s.skip) continue;
        const n = item.bytes.length;
        if (
          out.length > 0 &&
          (out.free < n + (n >> 3) + ITEM_GROWTH || (first && out.length >= FIRST_PIECE))
        ) {
          first = false;
          yield out.take();
        }
        if (emitted > 0) out.string(',');
        writeItem(out, item, iv, table, si);
        emitted++;
      }
      if (pageEnded) continue;
      // the page limit was reached inside (or exactly at the end of) this source's page
      const peek = await nextItem(s.events);
      const next = sources[si + 1];
      if (peek === undefined) {
        const cont = s.head.metadata?.continue;
        if (cont) token = input.continueToken(s.cluster, cont, 0);
        else if (next) token = input.continueToken(next.cluster, '', 0);
        let rem: number | undefined = remainingOf(s.head);
        for (const later of sources.slice(si + 1)) rem = await addRemaining(rem, later);
        remaining = rem;
      } else {
        // the peeked item was not taken: the next page starts with it
        token = input.continueToken(s.cluster, s.askedWith, consumed);
        const left = 1 + (await drainCount(s.events));
        const pageRem = remainingOf(s.head);
        let rem: number | undefined = pageRem === undefined ? undefined : left + pageRem;
        for (const later of sources.slice(si + 1)) rem = await addRemaining(rem, later);
        remaining = rem;
      }
      break;
    }
  } finally {
    // whatever was not read to the end is cancelled (the upstream requests close at once); cancelling a
    // finished body is a no-op
    await Promise.all(sources.map((s) => s.cancel().catch(() => {})));
  }

  const metadata: Record<string, unknown> = { resourceVersion: encodeComposite(membership, rvs) };
  if (token) {
    metadata.continue = token;
    if (remaining !== undefined && remaining > 0) metadata.remainingItemCount = remaining;
  }
  out.string(`],"metadata":${JSON.stringify(metadata)}}`);
  yield out.take();
}

/**
 * Adds the whole item count of a source the page did not reach to `rem` (undefined = unknown). Such a
 * source was asked from its start (no skip).
 */
async function addRemaining(rem: number | undefined, s: ListSource): Promise<number | undefined> {
  if (rem === undefined) return undefined;
  if (s.head.metadata?.continue) {
    // a page that has a continue is full: its size is the limit it was asked with
    const r = s.head.metadata?.remainingItemCount;
    return typeof r === 'number' && s.askedLimit > 0 ? rem + s.askedLimit + r : undefined;
  }
  return rem + (await drainCount(s.events));
}

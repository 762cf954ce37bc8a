/**
 * Propagation in a merged list (docs/propagation.md): one extra read of the control plane's bindings
 * (upstreams/bindings.ts: the ResourceBindings of the list's namespace, or with no namespace those of all
 * and the ClusterResourceBindings, side by side), only when the list includes the control plane and its
 * kind may be propagated (plan/propagation.ts `mayBePropagated`); when none is of the list's kind nothing
 * else changes and the list keeps its byte-level fast path. When some are, their Works are read while the
 * clusters answer, a Table asks the clusters for whole objects (a copy's drift needs its fields), and every
 * row, and every JSON item that names Karmada, is enriched (plan/propagation.ts): a JSON item from its
 * bytes where it can (a template not even parsed, the annotations spliced in), a row parsed.
 */
import { addAnnotations, itemFacts, parseItem, type SplitEvent, stringAt } from '../merge/jsonsplit/index.ts';
import {
  enrichItem,
  enrichRow,
  type IncludeObject,
  includeObjectOf,
  itemAnnotations,
  mayBePropagated,
  PROPAGATION_COLUMNS,
  type PropagationIndex,
  templateAnnotationsOf,
} from '../plan/propagation.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FanOutDeps } from '../types.ts';
import { readBindings } from '../upstreams/bindings.ts';
import type { Target } from '../upstreams/fanout.ts';
import type { ListEvents } from './merge.ts';

export interface ListPropagation {
  index: PropagationIndex;
  /** the Works, read while the clusters answer */
  works: Promise<void>;
  /** what the client asked a Table's row objects to be */
  include: IncludeObject;
  /** whether the answer is a Table (its clusters are asked for whole row objects) */
  table: boolean;
  /** whether items are whole objects (not PartialObjectMetadata) */
  full: boolean;
}

/** The propagation of a merged list's kind, or undefined when the list shows none (the usual case). */
export async function listPropagation(
  deps: FanOutDeps,
  info: RequestInfo,
  targets: Target[],
  shape: 'object' | 'table' | 'metadata',
  req: Request,
): Promise<ListPropagation | undefined> {
  const karmada = targets.find((t) => t.controlPlane);
  if (!karmada || !mayBePropagated(info)) return undefined;
  const read = await readBindings(
    deps,
    karmada,
    { namespace: info.namespace, group: info.apiGroup, resource: info.resource, works: shape !== 'metadata' },
    req.signal,
  );
  if (!read || read.index.byBinding.size === 0) return undefined;
  const { index, works } = read;
  return {
    index,
    works,
    include: includeObjectOf(new URL(req.url).searchParams),
    table: shape === 'table',
    full: shape !== 'metadata',
  };
}

/** The query a cluster is asked with: whole row objects for a Table (the client's choice is restored). */
export function propagationQuery(p: ListPropagation | undefined, q: URLSearchParams): URLSearchParams {
  if (p?.table) q.set('includeObject', 'Object');
  return q;
}

interface Source {
  cluster: string;
  head: Record<string, any>;
  events: ListEvents;
}

/** Each source's head gains the columns (a Table) and its items are enriched as they flow. */
export async function withPropagation<S extends Source>(p: ListPropagation, sources: S[]): Promise<S[]> {
  await p.works;
  return sources.map((s) => {
    if (p.table) s.head.columnDefinitions = [...(s.head.columnDefinitions ?? []), ...PROPAGATION_COLUMNS];
    return { ...s, events: enriched(p, s.cluster, s.events) };
  });
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function* enriched(
  p: ListPropagation,
  cluster: string,
  events: ListEvents,
): AsyncGenerator<SplitEvent> {
  for (;;) {
    const next = await events.next();
    if (next.done) return;
    const e = next.value;
    // a JSON item that names nothing of Karmada's is neither a template nor a copy: its bytes go as they are
    if (e.type !== 'item' || (!p.table && !decoder.decode(e.bytes).includes('karmada.io/'))) {
      yield e;
      continue;
    }
    if (!p.table) {
      const out = splicedItem(p, cluster, e);
      if (out) {
        yield out;
        continue;
      }
    }
    const v = parseItem(e.bytes) as Record<string, any>;
    const out = p.table ? enrichRow(p.index, v, cluster, p.include) : enrichItem(p.index, v, cluster, p.full);
    // new bytes, scanned again for their facts: the merge rewrites them from their bytes, not parsing again
    const bytes = encoder.encode(JSON.stringify(out));
    const facts = itemFacts(bytes, p.table);
    yield facts ? { type: 'item', index: e.index, bytes, facts } : { type: 'item', index: e.index, bytes };
  }
}

type ItemEvent = Extract<SplitEvent, { type: 'item' }>;

/**
 * A JSON item enriched from its bytes: a template known by the name and namespace its facts point at (not
 * parsed), a copy parsed for its drift; the annotations spliced in, the item's other bytes as they came.
 * An item that is neither goes on untouched. Undefined: its bytes cannot say, the caller parses it.
 */
function splicedItem(p: ListPropagation, cluster: string, e: ItemEvent): ItemEvent | undefined {
  const f = e.facts;
  if (!f || f.odd) return undefined;
  const b = e.bytes;
  const name = stringAt(b, f.nameFrom, f.nameTo);
  let add =
    name === undefined
      ? undefined
      : templateAnnotationsOf(p.index, cluster, stringAt(b, f.nsFrom, f.nsTo) ?? '', name);
  if (!add) add = itemAnnotations(p.index, parseItem(b) as Record<string, any>, cluster, p.full);
  if (!add) return e;
  const bytes = addAnnotations(b, f, add);
  const facts = bytes && itemFacts(bytes, false);
  return facts ? { type: 'item', index: e.index, bytes: bytes!, facts } : undefined;
}

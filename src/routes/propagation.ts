/**
 * Propagation in a merged list (docs/propagation.md), a helper of the list route: one extra read of the
 * control plane's ResourceBindings for the namespaces of the list (only when the list includes the control
 * plane and its kind may be propagated, plan/propagation.ts `mayBePropagated`); when none is of the list's
 * kind nothing else changes and the list keeps its byte-level fast path. When some are, their Works are
 * read while the clusters answer, a Table asks the clusters for whole objects (a copy's drift needs its
 * fields), and every row or item is parsed and enriched (plan/propagation.ts).
 */
import { parseItem, type SplitEvent } from '../merge/jsonsplit.ts';
import { showRecordIn } from '../merge/lastapplied.ts';
import type { ListEvents } from '../merge/listmerge.ts';
import { stripMarkers } from '../merge/objects.ts';
import {
  addWorks,
  bindingsPath,
  copyAnnotations,
  copyFacts,
  enrichItem,
  enrichRow,
  type IncludeObject,
  includeObjectOf,
  indexBindings,
  isCopy,
  mayBePropagated,
  PROPAGATION_COLUMNS,
  type PropagationIndex,
  worksPath,
} from '../plan/propagation.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FanOutDeps } from '../types.ts';
import { fanOut, type Target } from '../upstreams/fanout.ts';

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

/** Reads one JSON document from the control plane; undefined when it cannot (the list goes on without). */
export async function readJson(
  deps: FanOutDeps,
  target: Target,
  path: string,
  signal: AbortSignal,
): Promise<unknown> {
  const [o] = await fanOut(deps, [target], () => ({
    method: 'GET',
    path,
    headers: new Headers({ Accept: 'application/json', 'Accept-Encoding': 'identity' }),
    signal,
  }));
  if (!o?.ok) return undefined;
  if (!o.res.ok) {
    await o.res.body?.cancel().catch(() => {});
    return undefined;
  }
  return o.res.json().catch(() => undefined);
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
  const bindings = await readJson(deps, karmada, bindingsPath(info.namespace), req.signal);
  const index = indexBindings(bindings, info.apiGroup, info.resource);
  if (index.byBinding.size === 0) return undefined;
  const ids = [...index.byBinding.values()].flatMap((p) => (p.bindingId ? [p.bindingId] : []));
  const works =
    shape === 'metadata'
      ? Promise.resolve()
      : readJson(deps, karmada, worksPath(ids), req.signal).then((list) => {
          if (list !== undefined) addWorks(index, list);
        });
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
    const v = parseItem(e.bytes) as Record<string, any>;
    const out = p.table ? enrichRow(p.index, v, cluster, p.include) : enrichItem(p.index, v, cluster, p.full);
    // new bytes: the splitter's facts were about the old ones
    yield { type: 'item', index: e.index, bytes: encoder.encode(JSON.stringify(out)) };
  }
}

/**
 * One object answered by a GET at the root (what `kubectl describe` reads): a template gains where it went,
 * a copy its template and drift, as annotations. The bindings (and, for a copy, its Works) are read only
 * for a whole object of a kind Karmada may propagate, when the control plane is in the fleet view.
 */
export async function objectPropagation(
  deps: FanOutDeps,
  info: RequestInfo,
  targets: Target[],
  cluster: string,
  plain: string,
  answer: Response,
  req: Request,
): Promise<Response> {
  const karmada = targets.find((t) => t.controlPlane);
  if (!karmada || !answer.ok || info.subresource || !mayBePropagated(info)) return answer;
  if (!(answer.headers.get('content-type') ?? '').startsWith('application/json')) return answer;
  const text = await answer.text();
  const again = () => new Response(text, answer);
  let obj: Record<string, any>;
  try {
    obj = JSON.parse(text);
  } catch {
    return again();
  }
  const copy = isCopy(obj);
  if (!obj?.metadata || obj.kind === 'Table' || obj.kind === 'PartialObjectMetadata') return again();
  if (!copy && cluster !== karmada.cluster) return again();
  const bindings = await readJson(deps, karmada, bindingsPath(info.namespace), req.signal);
  const index = indexBindings(bindings, info.apiGroup, info.resource);
  if (index.byBinding.size === 0) return again();
  if (copy) {
    const ids = [...index.byBinding.values()].flatMap((p) => (p.bindingId ? [p.bindingId] : []));
    const works = await readJson(deps, karmada, worksPath(ids), req.signal);
    if (works !== undefined) addWorks(index, works);
  }
  if (copy) {
    // compared as the member holds it: the fleet view's name in client-side apply's record, its markers
    // and its pod-selector term are the fleet's, not drift
    const held = stripMarkers(structuredClone(obj));
    if (held.metadata?.name !== plain)
      showRecordIn(held.metadata?.annotations, {
        name: { plain: String(held.metadata?.name), shown: plain },
      });
    const facts = copyFacts(index, held, cluster, true);
    if (facts) obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), ...copyAnnotations(facts) };
  } else enrichItem(index, obj, cluster, true);
  const headers = new Headers(answer.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(obj), { status: answer.status, headers });
}

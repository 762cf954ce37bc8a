/**
 * Merged list (JSON, Table, PartialObjectMetadataList) across the clusters of a clusterspace.
 *
 * The plan (src/plan/list.ts) chooses the clusters and each one's query; every chosen cluster is asked in
 * parallel; once every answer's head is in (status, RV, columns), the body streams item by item
 * (src/merge/listmerge.ts). A cluster that does not serve the resource is skipped; one that fails is left
 * out with a Warning (strict mode: 503).
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { failure, type Status, serviceUnavailable, statusResponse } from '../kube/status.ts';
import { encodeContinue } from '../merge/continue.ts';
import { type SplitEvent, splitListStream } from '../merge/jsonsplit.ts';
import { type ListSource, mergeList } from '../merge/listmerge.ts';
import { type Membership, prepareMembership } from '../merge/rv.ts';
import { mergeColumns } from '../merge/table.ts';
import { type ListAsk, type ListPlan, planList } from '../plan/list.ts';
import type { RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps, FleetDeps, ViewDeps } from '../types.ts';
import { fanOut, fleetMembership, type Outcome, type Target, warningHeader } from '../upstreams/fanout.ts';
import { acceptsGzip, generatorStream, gzipIfLarge, readStatus, streamResponse } from './respond.ts';

type Served = { ask: ListAsk<Target>; res: Response };

/** What a merged list uses of the fleet. */
export type ListDeps = FanOutDeps & ClustersDeps & ViewDeps & Pick<FleetDeps, 'gzipResponses'>;

export async function listRoute(
  c: Context,
  deps: ListDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const membership = prepareMembership(await fleetMembership(deps, req.signal));
  const plan = planList({ query: new URL(req.url).searchParams, targets, membership, plainNameCluster });
  if ('code' in plan) return statusResponse(plan);

  const outcomes = await fanOut(
    deps,
    plan.asks.map((a) => a.target),
    (t) => {
      const qs = plan.queryFor(plan.asks.find((x) => x.target === t)!).toString();
      const headers = new Headers(req.headers);
      headers.set('Accept', neg.accept);
      // the body is split and rewritten: it must arrive uncompressed
      headers.set('Accept-Encoding', 'identity');
      return { method: 'GET', path: info.kubePath + (qs ? `?${qs}` : ''), headers, signal: req.signal };
    },
  );
  const sorted = await sortOutcomes(deps, plan.asks, outcomes);
  if (sorted instanceof Response) return sorted;
  const sources = await openSources(sorted.served);
  return mergedListResponse(req, deps, plan, membership, sorted, sources);
}

// ---------------------------------------------------------------------------------------------- answers

interface Sorted {
  served: Served[];
  warnings: string[];
}

/**
 * Served, not served (404: skipped silently), failed (a warning, or the whole answer in strict mode, or
 * when nobody served it). A 410 from any cluster is the answer: the page's RVs are compacted away.
 */
async function sortOutcomes(
  deps: ViewDeps,
  asks: ListAsk<Target>[],
  outcomes: Outcome[],
): Promise<Sorted | Response> {
  const served: Served[] = [];
  const warnings: string[] = [];
  let firstFailure: Status | undefined;
  let expiredStatus: Status | undefined;
  for (const [i, o] of outcomes.entries()) {
    const r = await classify(o);
    if (r.kind === 'ok' && o.ok) served.push({ ask: asks[i]!, res: o.res });
    else if (r.kind === 'failed') {
      warnings.push(`cluster ${o.target.cluster}: ${r.reason}`);
      firstFailure ??= r.status;
      if (r.status?.code === 410) expiredStatus ??= r.status;
    }
  }
  const cancelAll = () => Promise.all(served.map((s) => s.res.body?.cancel().catch(() => {})));
  if (expiredStatus) {
    await cancelAll();
    return statusResponse(expiredStatus);
  }
  if (warnings.length && deps.config.strict) {
    await cancelAll();
    return statusResponse(serviceUnavailable(`strict mode: ${warnings.join('; ')}`));
  }
  if (served.length === 0) {
    if (firstFailure) return statusResponse(firstFailure);
    if (warnings.length) return statusResponse(serviceUnavailable(warnings.join('; ')));
    return statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));
  }
  return { served, warnings };
}

type Classified = { kind: 'ok' } | { kind: 'skip' } | { kind: 'failed'; reason: string; status?: Status };

async function classify(o: Outcome): Promise<Classified> {
  if (!o.ok) return { kind: 'failed', reason: o.error.kind === 'timeout' ? 'timed out' : o.error.detail };
  if (o.res.ok) return { kind: 'ok' };
  const status = await readStatus(o.res);
  if (o.res.status === 404 && status?.reason !== 'NotFound') return { kind: 'skip' };
  if (o.res.status === 404 && status?.reason === 'NotFound' && !status.details?.name) return { kind: 'skip' };
  return { kind: 'failed', reason: status?.message ?? `HTTP ${o.res.status}`, status };
}

// ---------------------------------------------------------------------------------------------- merging

/** Splits every served body and reads its head (status, RV, columns); items stay unread. */
async function openSources(served: Served[]): Promise<ListSource[]> {
  const sources: ListSource[] = [];
  try {
    await Promise.all(
      served.map(async ({ ask, res }, i) => {
        const events = splitListStream(res.body!, { arrayKey: ['items', 'rows'] })[Symbol.asyncIterator]();
        const first = await events.next();
        sources[i] = {
          cluster: ask.target.cluster,
          head: first.done ? {} : headOf(first.value),
          events,
          skip: ask.skip,
          askedWith: ask.askedWith,
          askedLimit: ask.limit,
          cancel: async () => {
            await events.return?.(undefined);
          },
        };
      }),
    );
  } catch (e) {
    await Promise.all(sources.filter(Boolean).map((s) => s.cancel()));
    await Promise.all(served.map((s) => s.res.body?.cancel().catch(() => {})));
    throw e;
  }
  return sources;
}

function headOf(e: SplitEvent): Record<string, any> {
  return e.type === 'head' || e.type === 'tail' ? e.value : {};
}

/** Every head is in: the merged head can be written, and the items stream after it. */
async function mergedListResponse(
  req: Request,
  deps: ViewDeps & Pick<FleetDeps, 'gzipResponses'>,
  plan: ListPlan<Target>,
  membership: Membership,
  sorted: Sorted,
  sources: ListSource[],
): Promise<Response> {
  const { rvs } = plan;
  if (!plan.emptyProbe)
    for (const s of sources) {
      const rv = s.head.metadata?.resourceVersion;
      if (typeof rv === 'string') rvs.set(s.cluster, rv);
    }
  const firstHead = sources[0]!.head;
  const headers = new Headers({
    'Content-Type': sorted.served[0]!.res.headers.get('content-type') ?? 'application/json',
    'Cache-Control': 'no-cache, private',
  });
  for (const w of sorted.warnings) headers.append('Warning', warningHeader(w));
  if (plan.emptyProbe) await sources[0]!.cancel();
  const body = mergeList(
    {
      view: { federation: deps.config.federation },
      membership,
      rvs,
      limit: plan.limit,
      kind: String(firstHead.kind ?? 'List'),
      apiVersion: String(firstHead.apiVersion ?? 'v1'),
      table:
        firstHead.kind === 'Table' ? mergeColumns(sources.map((s) => s.head.columnDefinitions)) : undefined,
      continueToken: (cluster, upstream, skip) => encodeContinue(membership, cluster, upstream, rvs, skip),
    },
    plan.emptyProbe ? [] : sources,
  );
  if (deps.gzipResponses && acceptsGzip(req.headers.get('accept-encoding')))
    return gzipIfLarge(generatorStream(body), 200, headers);
  return streamResponse(body, 200, headers);
}

/**
 * Merged list (JSON, Table, PartialObjectMetadataList) across the clusters of a clusterspace.
 *
 * Plan: label-selector terms on fleet.karmada.io/cluster and fleet names in field selectors choose the
 * clusters; the client's resourceVersion / continue map to per-cluster parameters; every chosen cluster is
 * asked in parallel; once every answer's head is in (status, RV, columns), the body streams item by item
 * (src/merge/listmerge.ts). A cluster that does not serve the resource is skipped; one that fails is left
 * out with a Warning (strict mode: 503).
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import {
  CLUSTER_LABEL,
  rewriteFieldSelectorNames,
  SelectorError,
  splitClusterSelector,
} from '../kube/selectors.ts';
import { failure, type Status, serviceUnavailable, statusResponse } from '../kube/status.ts';
import { continueErrorStatus, decodeContinue, encodeContinue } from '../merge/continue.ts';
import { type SplitEvent, splitListStream } from '../merge/jsonsplit.ts';
import { type ListSource, mergeList } from '../merge/listmerge.ts';
import { planResourceVersion, prepareMembership } from '../merge/rv.ts';
import { mergeColumns } from '../merge/table.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { fanOut, fleetMembership, type Outcome, type Target, warningHeader } from '../upstreams/fanout.ts';
import { acceptsGzip, generatorStream, gzipIfLarge, readStatus, streamResponse } from './respond.ts';

/** parameters the fleet sets per cluster; everything else in the query is forwarded as sent */
const PLANNED = new Set([
  'labelSelector',
  'fieldSelector',
  'continue',
  'resourceVersion',
  'resourceVersionMatch',
  'limit',
]);

interface Ask {
  target: Target;
  params: Record<string, string>;
  skip: number;
  askedWith: string;
  limit: number;
}

export async function listRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const url = new URL(req.url);
  const q = url.searchParams;
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const membership = prepareMembership(await fleetMembership(deps, req.signal));

  // which clusters: label terms on the cluster label, fleet names in name field selectors
  let labelForward: string;
  let names: ReturnType<typeof rewriteFieldSelectorNames>;
  let chosen: Target[];
  try {
    const split = splitClusterSelector(
      q.get('labelSelector'),
      targets.map((t) => t.cluster),
    );
    labelForward = split.forward;
    names = rewriteFieldSelectorNames(q.get('fieldSelector'), { plainNameCluster });
    chosen = targets.filter(
      (t) =>
        split.clusters.includes(t.cluster) &&
        !names.matchesNothing &&
        (names.cluster === undefined || names.cluster === t.cluster),
    );
  } catch (e) {
    if (e instanceof SelectorError) return statusResponse(e.status);
    throw e;
  }
  const limitParam = q.get('limit');
  const limit = limitParam && /^\d+$/.test(limitParam) ? Number(limitParam) : 0;

  // where the walk starts and at which RVs
  const rvs = new Map<string, string>(membership.names.map((n) => [n, '']));
  const asks: Ask[] = [];
  const cont = q.get('continue');
  const fieldFor = (t: Target) => (names.matchesNothing ? '' : names.forwardFor(t.cluster));
  if (cont) {
    const d = decodeContinue(cont, membership);
    if (!d.ok) return statusResponse(continueErrorStatus(d.reason));
    for (const [k, v] of d.rvs) rvs.set(k, v);
    const order = targets.map((t) => t.cluster);
    const from = order.indexOf(d.cluster);
    for (const t of chosen) {
      const at = order.indexOf(t.cluster);
      if (at < from) continue;
      const params: Record<string, string> = {};
      const rv = rvs.get(t.cluster) ?? '';
      const first = at === from;
      const skip = first ? d.skip : 0;
      if (first && d.upstream) params.continue = d.upstream;
      else if (rv) Object.assign(params, { resourceVersion: rv, resourceVersionMatch: 'Exact' });
      const lim = limit > 0 ? limit + skip : 0;
      asks.push({ target: t, params, skip, askedWith: first ? d.upstream : '', limit: lim });
    }
  } else {
    const plan = planResourceVersion(
      'list',
      membership,
      q.get('resourceVersion'),
      q.get('resourceVersionMatch'),
    );
    if (!plan.ok) return statusResponse(plan.status);
    for (const t of chosen) {
      const p = plan.perCluster.get(t.cluster) ?? {};
      const params: Record<string, string> = {};
      if (p.resourceVersion !== undefined) params.resourceVersion = p.resourceVersion;
      if (p.resourceVersionMatch !== undefined) params.resourceVersionMatch = p.resourceVersionMatch;
      asks.push({ target: t, params, skip: 0, askedWith: '', limit });
    }
  }
  // nothing chosen: still ask one cluster, with a selector nothing matches, for the list's kind and columns
  let emptyProbe = false;
  if (asks.length === 0 && targets.length > 0) {
    emptyProbe = true;
    asks.push({ target: targets[0]!, params: {}, skip: 0, askedWith: '', limit: 0 });
  }

  const outcomes = await fanOut(
    deps,
    asks.map((a) => a.target),
    (t) => {
      const a = asks.find((x) => x.target === t)!;
      const out = new URLSearchParams();
      for (const [k, v] of q) if (!PLANNED.has(k)) out.append(k, v);
      const label = emptyProbe ? `${CLUSTER_LABEL},!${CLUSTER_LABEL}` : labelForward;
      if (label) out.set('labelSelector', label);
      const field = emptyProbe ? '' : fieldFor(t);
      if (field) out.set('fieldSelector', field);
      for (const [k, v] of Object.entries(a.params)) out.set(k, v);
      if (a.limit > 0) out.set('limit', String(a.limit));
      const qs = out.toString();
      const headers = new Headers(req.headers);
      headers.set('Accept', neg.accept);
      // the body is split and rewritten: it must arrive uncompressed
      headers.set('Accept-Encoding', 'identity');
      return { method: 'GET', path: info.kubePath + (qs ? `?${qs}` : ''), headers, signal: req.signal };
    },
  );

  // classify: served, not served (404: skipped silently), failed (warning or strict 503)
  const served: Array<{ ask: Ask; res: Response }> = [];
  const warnings: string[] = [];
  let firstFailure: Status | undefined;
  let expiredStatus: Status | undefined;
  for (const [i, o] of outcomes.entries()) {
    const ask = asks[i]!;
    const r = await classify(o);
    if (r.kind === 'ok') served.push({ ask, res: o.ok ? o.res : (undefined as never) });
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

  // every head in: the merged head can be written
  const sources: ListSource[] = [];
  try {
    await Promise.all(
      served.map(async ({ ask, res }, i) => {
        const events = splitListStream(res.body!, { arrayKey: ['items', 'rows'] })[Symbol.asyncIterator]();
        const first = await events.next();
        const head = first.done ? {} : headOf(first.value);
        sources[i] = {
          cluster: ask.target.cluster,
          head,
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
    await cancelAll();
    throw e;
  }
  const ordered = emptyProbe ? [] : sources;
  for (const s of sources) {
    const rv = s.head.metadata?.resourceVersion;
    if (typeof rv === 'string' && !emptyProbe) rvs.set(s.cluster, rv);
  }
  const firstHead = sources[0]!.head;
  const isTable = firstHead.kind === 'Table';
  const headers = new Headers({
    'Content-Type': served[0]!.res.headers.get('content-type') ?? 'application/json',
    'Cache-Control': 'no-cache, private',
  });
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  if (emptyProbe) await sources[0]!.cancel();
  const body = mergeList(
    {
      view: { federation: deps.config.federation },
      membership,
      rvs,
      limit,
      kind: String(firstHead.kind ?? 'List'),
      apiVersion: String(firstHead.apiVersion ?? 'v1'),
      table: isTable ? mergeColumns(sources.map((s) => s.head.columnDefinitions)) : undefined,
      continueToken: (cluster, upstream, skip) => encodeContinue(membership, cluster, upstream, rvs, skip),
    },
    ordered,
  );
  if (deps.gzipResponses && acceptsGzip(req.headers.get('accept-encoding')))
    return gzipIfLarge(generatorStream(body), 200, headers);
  return streamResponse(body, 200, headers);
}

function headOf(e: SplitEvent): Record<string, any> {
  return e.type === 'head' || e.type === 'tail' ? e.value : {};
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

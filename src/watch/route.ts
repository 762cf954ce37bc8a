/**
 * Merged watch: one upstream watch per cluster, merged into one stream. Holds nothing but the open
 * connections. The route negotiates, plans (src/watch/plan.ts), starts the sources and responds; the
 * pieces live beside it in src/watch/ (sources, start, run, resume with backoff, output with heartbeat) and
 * src/watch/merge.ts (the per-event work).
 *
 * - Start: every chosen cluster is asked at once; the response starts when each has answered, or at the
 *   first answered 200 (not in strict mode; HEAD_GRACE_MS): Warning headers for those that failed by then,
 *   a bookmark notice and /metrics for those that fail later (or a 503 Status in strict mode). A cluster down at start
 *   keeps being retried in the background and joins when it is back.
 * - An upstream stream that ends or breaks is resumed from the last RV it delivered, with backoff,
 *   invisibly. A 410 on resume (the cluster compacted past it) ends the merged stream with one ERROR event
 *   carrying a 410 Status: the client relists.
 * - `timeoutSeconds` ends the stream cleanly; a client that goes away closes every upstream watch at once.
 * - Table watches: columns learned while the head is decided (a one-row Table list per cluster, and each
 *   cluster's first event), fixed when the first event carries the merged columnDefinitions and the
 *   Cluster column (watch/columns.ts).
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { type Status, serviceUnavailable, statusResponse } from '../kube/status.ts';
import { prepareMembership } from '../merge/rv/index.ts';
import { PROPAGATION_COLUMNS } from '../plan/propagation.ts';
import { answerOf, type UnservedAnswer, unservedStatus } from '../plan/unserved.ts';
import { answerView, selectedName } from '../plan/view.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import {
  fleetMembership,
  fleetTargets,
  splitForBudget,
  type Target,
  warningHeader,
} from '../upstreams/fanout.ts';
import { WatchColumns } from './columns.ts';
import type { WatchCounts } from './hold.ts';
import { WatchMerger } from './merge.ts';
import { planWatch } from './plan.ts';
import { watchPropagation } from './propagation.ts';
import { runMergedWatch } from './run.ts';
import { clusterSource, groupSource, type Source, upstreamHeaders, type WatchContext } from './sources.ts';
import {
  type FailedStart,
  failedForGood,
  groupWarnings,
  HEAD_GRACE_MS,
  openForHead,
  probeColumns,
  startWarnings,
} from './start.ts';
import { Upstreams } from './upstreams.ts';

/** streamed: a runtime that compresses would hold events back (RUNTIME-NOTES) */
function streamHeaders(): Headers {
  return new Headers({
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Encoding': 'identity',
  });
}

export function watchRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  return watchStream(c.req.raw, deps, info, targets, plainNameCluster, true);
}

/**
 * The merged watch of `req` over `targets`. Also what a relay invocation runs for its group of clusters
 * (src/upstreams/relay.ts), so the calling invocation merges the groups' merged streams the same way.
 * `follow`: the stream follows the fleet's membership (src/watch/membership.ts); a relay
 * group's does not (its caller does, for the whole watch).
 */
export async function watchStream(
  req: Request,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
  follow = false,
): Promise<Response> {
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const names = await fleetMembership(deps, req.signal);
  const membership = prepareMembership(names);
  const query = new URL(req.url).searchParams;
  // a Table of a propagated kind gains the list's propagation columns: its clusters are asked for whole
  // row objects (a copy's drift needs its fields), given back as the client asked (watch/propagation.ts)
  const propagation =
    neg.shape === 'table' ? await watchPropagation(deps, info, targets, query, req.signal) : undefined;
  if (propagation) query.set('includeObject', 'Object');
  const planned = planWatch({ query, targets, membership, plainNameCluster });
  if (!planned.ok) {
    if ('respond' in planned) return statusResponse(planned.respond);
    // a composite from another membership or garbage: the watch answers 200 and one ERROR event, as kube does
    const line = `${JSON.stringify({ type: 'ERROR', object: planned.errorEvent })}\n`;
    return new Response(line, { status: 200, headers: streamHeaders() });
  }
  const plan = planned.plan;

  const upstreams = new Upstreams();
  const abortAll = () => upstreams.abort();
  // until the stream exists, a client that leaves just aborts what is in flight (then the stream's close does)
  req.signal.addEventListener('abort', abortAll, { once: true });

  // Table watches: the columns are learned while the head is decided, not before it (watch/columns.ts)
  const table =
    neg.shape === 'table' && plan.chosen.length
      ? new WatchColumns(plan.chosen.length, propagation ? PROPAGATION_COLUMNS : [])
      : undefined;
  const probing = table
    ? probeColumns(
        deps,
        plan.chosen,
        `${info.kubePath}?${plan.probeQuery()}`,
        upstreamHeaders(req.headers, neg.accept),
        upstreams.signal,
        table,
      ).catch(() => {})
    : undefined;
  let probed = !probing;
  void probing?.then(() => {
    probed = true;
  });
  const groups = splitForBudget(deps, plan.chosen);
  if (groups) deps.metrics?.relayGroups.inc({ mode: 'watch' }, groups.length);
  const merger = new WatchMerger({
    view: answerView(deps.config.federation, info, selectedName(new URL(req.url).searchParams)),
    membership,
    rvs: plan.startRVs,
    clusters: plan.chosen.map((t) => t.cluster),
    table,
    ...(propagation && table ? { tableRow: (row, cluster) => propagation.row(row, cluster) } : {}),
    allowBookmarks: plan.allowBookmarks,
    sendInitialEvents: plan.sendInitialEvents,
    // a relay group restarts its own clusters' initial events; here, the group's stream as a whole
    initialPhases: groups
      ? plan.initialEvents
        ? groups.map((g) => g.map((t) => t.cluster).join(','))
        : []
      : plan.chosen.filter((t) => plan.initialEventsOf(t.cluster)).map((t) => t.cluster),
  });
  const ctx: WatchContext = {
    plan,
    merger,
    client: deps.client,
    relay: deps.relay,
    kubePath: info.kubePath,
    headers: req.headers,
    accept: neg.accept,
    plainNameCluster,
    // its signal read when a request is made: the start's is not kept for the watch's life
    upstreams,
  };
  const sources: Source[] = groups
    ? groups.map((g) => groupSource(ctx, g, deps.client.caller))
    : plan.chosen.map((t) => clusterSource(ctx, t));

  // strict mode answers only for the whole fleet; else the head goes out at the first 200 (start.ts)
  const [{ starts, late }] = await Promise.all([
    openForHead(
      sources,
      deps.config.strict ? Number.POSITIVE_INFINITY : HEAD_GRACE_MS,
      upstreams.signal,
      plan,
    ),
    // strict mode's head waits for the whole fleet: its columns too
    deps.config.strict ? probing : undefined,
  ]);
  const warnings = startWarnings(starts, plan.sendInitialEvents || plan.upgradesLegacy);
  const refusal =
    warnings.length && deps.config.strict
      ? serviceUnavailable(`strict mode: ${warnings.join('; ')}`)
      : unwatchable(failedForGood(starts));
  if (refusal) {
    req.signal.removeEventListener('abort', abortAll);
    abortAll();
    // answered streams are each their own from here (their opens' signals are let go): end them
    for (const s of starts) if ('res' in s) void s.res.body?.cancel().catch(() => {});
    return statusResponse(refusal);
  }
  req.signal.removeEventListener('abort', abortAll);
  // every open has answered: nothing listens to the start's signal any longer (late opens still do)
  if (!late.length && probed) upstreams.letGo();
  const headers = streamHeaders();
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  if (groups) for (const w of groupWarnings(starts)) headers.append('Warning', w);
  const members = deps.config.members;
  const body = runMergedWatch({
    plan,
    merger,
    starts,
    late,
    // a merged answer without these clusters that no Warning named: counted as one that did
    onLateFailure: (clusters) => {
      for (const cluster of clusters) deps.metrics?.partial.inc({ cluster });
    },
    grouped: !!groups,
    counts: watchCounts(deps),
    clientSignal: req.signal,
    upstreams,
    // a static membership never changes
    follow:
      follow && members.mode !== 'static'
        ? {
            ctx,
            fleet: (signal) => fleetTargets(deps, signal),
            names,
            everyMs: Math.max(members.refreshSeconds * 1000, 1000),
            table: !!table,
            grouped: !!groups,
          }
        : undefined,
  });
  return new Response(body, { status: 200, headers });
}

/** fleet_upstream_watches and fleet_watch_resumes_total, from the held sources (watch/hold.ts) */
function watchCounts(deps: FleetDeps): WatchCounts | undefined {
  const m = deps.metrics;
  if (!m) return undefined;
  return {
    open(clusters, by) {
      for (const cluster of clusters) m.upstreamWatches.inc({ cluster }, by);
    },
    resumed(clusters, reason) {
      for (const cluster of clusters) m.watchResumes.inc({ cluster, reason });
    },
  };
}

/**
 * What a watch none of whose clusters can be watched answers (`failed`: every start, failed for good):
 * what a list answers in the same state (plan/unserved.ts), kube's own 404 when no cluster serves the
 * resource (the first cluster's, as it wrote it).
 */
function unwatchable(failed: FailedStart[] | undefined): Status | undefined {
  if (!failed) return undefined;
  const first = failed[0]!;
  if (failed.every((s) => s.status === 404) && first.statusBody) return first.statusBody;
  return unservedStatus(
    failed.map((s): UnservedAnswer => {
      const cluster = s.src.clusters.join(', ');
      // no answer at all (transport, timeout): the reason is the failure's own
      return s.status === 0
        ? { cluster, kind: 'failed', reason: s.reason }
        : answerOf(cluster, s.status, s.statusBody);
    }),
  );
}

/**
 * Merged list (JSON, Table, PartialObjectMetadataList) across the clusters of a clusterspace.
 *
 * The plan (src/list/plan.ts) chooses the clusters and each one's query; every chosen cluster is asked in
 * parallel; once every answer's head is in (status, RV, columns), the body streams item by item
 * (src/list/merge.ts). A cluster that does not serve the resource is skipped; one that fails before
 * the merged body starts is left out with a Warning (strict mode: 503).
 *
 * A list never ends short and silently. Every upstream body is read under the body-idle timeout
 * (`timeouts.bodyIdleSeconds`). One that breaks (cut, or silent too long) after the merged body started
 * is read again from that cluster at the exact resourceVersion it was being read at (src/list/plan.ts
 * `rereadAsk`), skipping the items already taken; only when that fails too does the merged body break
 * off (a transfer error the client sees; a 503 Status when nothing was sent yet, as with gzip, which
 * holds the first 128 KiB). While the heads are read, a body that began and broke is asked once more; one
 * that never began (headers, then nothing) is a failed cluster like one that gave no headers.
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { readStatus, type Status, serviceUnavailable, statusResponse } from '../kube/status.ts';
import { encodeContinue } from '../merge/continue.ts';
import { ItemScanner, parseItem, type SplitEvent } from '../merge/jsonsplit/index.ts';
import { type Membership, prepareMembership } from '../merge/rv/index.ts';
import { mergeColumns } from '../merge/table/index.ts';
import { type AskedNamespace, askedNamespace, showAskedNamespace } from '../plan/namespace.ts';
import { type UnservedAnswer, unservedStatus } from '../plan/unserved.ts';
import { answerView, selectedName } from '../plan/view.ts';
import type { RequestInfo } from '../request/info.ts';
import { type BodyIdleDeps, bodyIdleMs } from '../routes/respond.ts';
import type { ClustersDeps, FanOutDeps, FleetDeps, ViewDeps } from '../types.ts';
import { forwardableRequestHeaders, type SendOptions } from '../upstreams/client.ts';
import { fanOut, fleetMembership, type Outcome, type Target, warningHeader } from '../upstreams/fanout.ts';
import { concatOwned } from '../util/bytes.ts';
import { piecesBody } from '../util/pieces.ts';
import { type ListSource, mergeList } from './merge.ts';
import { type ListAsk, type ListPlan, planList } from './plan.ts';
import { listPropagation, propagationQuery, withPropagation } from './propagation.ts';
import { splitGuarded } from './read.ts';
import {
  bodyFailure,
  ListReadError,
  type ListReader,
  listHead,
  outcomeReason,
  resumableSource,
} from './resume.ts';

type Served = { ask: ListAsk<Target>; res: Response };

/** What a merged list uses of the fleet. */
export type ListDeps = FanOutDeps & ClustersDeps & ViewDeps & Pick<FleetDeps, 'gzipResponses'> & BodyIdleDeps;
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
  // templates and copies Karmada propagated, when the list has any (list/propagation.ts): a Table waits
  // for the bindings (its clusters are asked for whole row objects when some are of its kind); other
  // answers read them while the clusters answer
  const propagationRead = listPropagation(deps, info, targets, neg.shape, req).catch(() => undefined);
  const propagation = neg.shape === 'table' ? await propagationRead : undefined;

  // one set of headers for every cluster (the client copies what it forwards, never changes them)
  const asked = new Headers(req.headers);
  asked.set('Accept', neg.accept);
  // the body is split and rewritten: it must arrive uncompressed
  asked.set('Accept-Encoding', 'identity');
  // as entries (on Node a list the client reads without iterating a Headers once per cluster)
  const headers = forwardableRequestHeaders(asked);
  const request = (a: ListAsk<Target>): SendOptions => {
    const qs = propagationQuery(propagation, plan.queryFor(a)).toString();
    // pulled: a cluster's body waiting its turn holds the chunk its head came in, not its whole answer
    return {
      method: 'GET',
      path: info.kubePath + (qs ? `?${qs}` : ''),
      headers,
      signal: req.signal,
      pulled: true,
    };
  };
  const askOf = new Map(plan.asks.map((a) => [a.target, a]));
  const outcomes = await fanOut(
    deps,
    plan.asks.map((a) => a.target),
    (t) => request(askOf.get(t)!),
  );
  const sorted = await sortOutcomes(deps, plan.asks, outcomes);
  if (sorted instanceof Response) return sorted;
  const reader: ListReader & { ns?: AskedNamespace } = {
    ask: async (a) => (await fanOut(deps, [a.target], () => request(a)))[0]!,
    idleMs: bodyIdleMs(deps),
    signal: req.signal,
    ns: askedNamespace(info),
    scanner: new ItemScanner(),
  };
  let opened = await openSources(reader, sorted, deps.config.strict);
  if (opened instanceof Response) return opened;
  const enrich = propagation ?? (await propagationRead);
  if (enrich) {
    const sources = await withPropagation(
      enrich,
      opened.map((o) => o.source),
    );
    opened = opened.map((o, i) => ({ ...o, source: sources[i]! }));
  }
  return mergedListResponse(req, deps, info, plan, membership, sorted, opened);
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
  const unserved: UnservedAnswer[] = [];
  let expiredStatus: Status | undefined;
  for (const [i, o] of outcomes.entries()) {
    const r = await classify(o);
    if (r.kind === 'ok' && o.ok) served.push({ ask: asks[i]!, res: o.res });
    else if (r.kind === 'skip') unserved.push({ cluster: o.target.cluster, kind: 'notServed' });
    else if (r.kind === 'failed') {
      warnings.push(`cluster ${o.target.cluster}: ${r.reason}`);
      unserved.push({ cluster: o.target.cluster, kind: 'failed', reason: r.reason, status: r.status });
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
    return strictRefusal(warnings);
  }
  // nobody served it: a 503 when a cluster that could not be asked may be the one (plan/unserved.ts)
  if (served.length === 0) return statusResponse(unservedStatus(unserved));
  return { served, warnings };
}

function strictRefusal(warnings: string[]): Response {
  return statusResponse(serviceUnavailable(`strict mode: ${warnings.join('; ')}`));
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

// ---------------------------------------------------------------------------------------------- heads

/** A served answer with its head read: the merge's source, and the answer's media type. */
interface Opened {
  source: ListSource;
  contentType: string | null;
}

/**
 * Reads every served body's head (status, RV, columns); items stay unread. A cluster whose head cannot be
 * read joins the warnings (nothing of the merged body is written yet): strict mode refuses, and when no
 * cluster is left the answer is a 503.
 */
async function openSources(
  r: ListReader & { ns?: AskedNamespace },
  sorted: Sorted,
  strict: boolean,
): Promise<Opened[] | Response> {
  const got = await Promise.all(sorted.served.map((s) => openOne(r, s).catch((e: unknown) => e as Error)));
  const thrown = got.find((g) => g instanceof Error);
  const opened = got.filter((g): g is Opened => typeof g === 'object' && !(g instanceof Error));
  const cancelOpened = () => Promise.all(opened.map((o) => o.source.cancel().catch(() => {})));
  if (thrown) {
    // the caller went away (or a bug): nothing is answered, everything is released
    await cancelOpened();
    throw thrown;
  }
  got.forEach((g, i) => {
    if (typeof g === 'string') sorted.warnings.push(`cluster ${sorted.served[i]!.ask.target.cluster}: ${g}`);
  });
  if (opened.length === sorted.served.length) return opened;
  if (strict || opened.length === 0) {
    await cancelOpened();
    return strict
      ? strictRefusal(sorted.warnings)
      : statusResponse(serviceUnavailable(sorted.warnings.join('; ')));
  }
  return opened;
}

/**
 * One served answer's head, read under the body-idle guard: the source of the merge, or why the cluster
 * is left out. A body that began and broke is asked once more with the same query (nothing was taken
 * from it yet, so any answer will do); one that never began is a cluster that did not answer.
 */
async function openOne(r: ListReader & { ns?: AskedNamespace }, s: Served): Promise<Opened | string> {
  let res = s.res;
  for (let attempt = 0; ; attempt++) {
    const guarded = splitGuarded(res, r.idleMs, r.scanner);
    const events = guarded.events;
    try {
      const first = await events.next();
      const head = first.done ? {} : listHead(first.value);
      const resumable = resumableSource(r, s.ask, head, events);
      const source = r.ns ? { ...resumable, events: withAskedNamespace(resumable.events, r.ns) } : resumable;
      return { source, contentType: res.headers.get('content-type') };
    } catch (err) {
      await events.return(undefined).catch(() => {});
      if (r.signal.aborted) throw err;
      const why = `its list body ${bodyFailure(err)}`;
      if (guarded.received() === 0) return `${why} before it began`;
      if (attempt > 0) return `${why}, and again when asked once more`;
      const again = await r.ask(s.ask);
      if (!again.ok || !again.res.ok) return `${why}; asked once more: ${await outcomeReason(again)}`;
      res = again.res;
    }
  }
}

/**
 * Items (or rows) that say the namespace as the client named it (src/plan/namespace.ts
 * `showAskedNamespace`): re-encoded, which only requests by fleet namespace pay, one cluster's list each.
 */
async function* withAskedNamespace(
  events: AsyncIterator<SplitEvent>,
  ns: AskedNamespace,
): AsyncGenerator<SplitEvent> {
  for (;;) {
    const next = await events.next();
    if (next.done) return;
    if (next.value.type !== 'item') yield next.value;
    else {
      const item = parseItem(next.value.bytes);
      showAskedNamespace(item, ns);
      // new bytes: the splitter's facts and ranges were about the old ones
      yield { type: 'item', index: next.value.index, bytes: encoder.encode(JSON.stringify(item)) };
    }
  }
}

const encoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------- gzip

/** kube-apiserver's threshold: answers smaller than this are never compressed (defaultGzipThresholdBytes). */
export const GZIP_THRESHOLD = 128 * 1024;

/** True when the client's Accept-Encoding allows gzip (q > 0). */
export function acceptsGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Gzips a finite answer the way kube-apiserver does: only when the client accepts it and the body reaches
 * the threshold. The body is still streamed: the first 128 KiB are held to decide, then everything flows
 * through a CompressionStream. Never used for watch or log streams (they must flush per event).
 */
export async function gzipIfLarge(
  body: ReadableStream<Uint8Array>,
  status: number,
  headers: Headers,
): Promise<Response> {
  const reader = body.getReader();
  const held: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const r = await reader.read();
    if (r.done) {
      headers.set('Content-Length', String(size));
      return new Response(concatOwned(held, size), { status, headers });
    }
    held.push(r.value);
    size += r.value.length;
    if (size >= GZIP_THRESHOLD) break;
  }
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of held) controller.enqueue(c);
      held.length = 0;
    },
    async pull(controller) {
      const r = await reader.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  headers.set('Content-Encoding', 'gzip');
  headers.delete('Content-Length');
  headers.append('Vary', 'Accept-Encoding');
  const gzip = new CompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>;
  return new Response(rest.pipeThrough(gzip), { status, headers });
}

// ---------------------------------------------------------------------------------------------- merging

/**
 * The merged body's bytes as the merge makes them, piece by piece (bench/lib/canned-merge.ts measures
 * this path). When the client goes away the merge is closed, so the upstream bodies it reads are released.
 */
export function listBody(merged: AsyncGenerator<Uint8Array>): ReadableStream<Uint8Array> {
  // the Node server writes the pieces straight from the generator (src/util/pieces.ts)
  return piecesBody(merged, (err) => {
    // the response has started: the only honest signal left is a broken body
    console.error('fleet: merged response failed mid-stream:', (err as Error).message);
  });
}

/** Every head is in: the merged head can be written, and the items stream after it. */
async function mergedListResponse(
  req: Request,
  deps: ViewDeps & Pick<FleetDeps, 'gzipResponses'>,
  info: RequestInfo,
  plan: ListPlan<Target>,
  membership: Membership,
  sorted: Sorted,
  opened: Opened[],
): Promise<Response> {
  const { rvs } = plan;
  const sources = opened.map((o) => o.source);
  if (!plan.emptyProbe)
    for (const s of sources) {
      const rv = s.head.metadata?.resourceVersion;
      if (typeof rv === 'string') rvs.set(s.cluster, rv);
    }
  const firstHead = sources[0]!.head;
  const headers = new Headers({
    'Content-Type': opened[0]!.contentType ?? 'application/json',
    'Cache-Control': 'no-cache, private',
  });
  for (const w of sorted.warnings) headers.append('Warning', warningHeader(w));
  if (plan.emptyProbe) await sources[0]!.cancel();
  const body = mergeList(
    {
      view: answerView(deps.config.federation, info, selectedName(new URL(req.url).searchParams)),
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
  if (!(deps.gzipResponses && acceptsGzip(req.headers.get('accept-encoding'))))
    return new Response(listBody(body), { status: 200, headers });
  try {
    return await gzipIfLarge(listBody(body), 200, headers);
  } catch (err) {
    // gzip holds the first 128 KiB back: a body that broke in them has sent nothing, so it can still
    // be an honest Status instead of a broken transfer
    if (req.signal.aborted || !(err instanceof ListReadError)) throw err;
    return statusResponse(serviceUnavailable(err.message));
  }
}

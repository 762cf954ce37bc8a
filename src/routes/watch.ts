/**
 * Merged watch: one upstream watch per cluster, merged into one stream (src/merge/watchmerge.ts does the
 * per-event work). Holds nothing but the open connections.
 *
 * - Start: every chosen cluster is asked at once; the response starts when each has answered (Warning
 *   headers for those that did not, or a 503 Status in strict mode). A cluster down at start keeps being
 *   retried in the background and joins when it is back.
 * - An upstream stream that ends or breaks is resumed from the last RV it delivered, with backoff,
 *   invisibly. A 410 on resume (the cluster compacted past it) ends the merged stream with one ERROR event
 *   carrying a 410 Status: the client relists.
 * - `timeoutSeconds` ends the stream cleanly; a client that goes away closes every upstream watch at once.
 * - Table watches: columns merged up front (a one-row Table list per cluster), so the first event can carry
 *   the merged columnDefinitions and the Cluster column.
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { rewriteFieldSelectorNames, SelectorError, splitClusterSelector } from '../kube/selectors.ts';
import { failure, serviceUnavailable, statusResponse } from '../kube/status.ts';
import { planResourceVersion, prepareMembership, type UpstreamRVParams } from '../merge/rv.ts';
import { type ColumnDefinition, type MergedColumns, mergeColumns } from '../merge/table.ts';
import { type MergeStep, type WatchEvent, WatchMerger } from '../merge/watchmerge.ts';
import { queryBool, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { UpstreamError } from '../upstreams/client.ts';
import { fanOut, fleetMembership, splitForBudget, type Target, warningHeader } from '../upstreams/fanout.ts';
import { relayWatch } from '../upstreams/relay.ts';
import { readStatus } from './respond.ts';

/** query parameters the fleet sets per cluster */
const PLANNED = new Set([
  'labelSelector',
  'fieldSelector',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
  'limit',
  'continue',
]);

const enc = new TextEncoder();

/** how long a watch may stay silent before it writes a heartbeat */
const HEARTBEAT_MS = 5_000;

/** Reads newline-delimited JSON watch events from a body. */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent;
        nl = buf.indexOf('\n');
      }
    }
    const rest = (buf + dec.decode()).trim();
    if (rest) yield JSON.parse(rest) as WatchEvent;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

export function watchRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  return watchStream(c.req.raw, deps, info, targets, plainNameCluster);
}

/**
 * The merged watch of `req` over `targets`. Also what a relay invocation runs for its group of clusters
 * (src/upstreams/relay.ts), so the calling invocation merges the groups' merged streams the same way.
 */
export async function watchStream(
  req: Request,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const q = new URL(req.url).searchParams;
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const membership = prepareMembership(await fleetMembership(deps, req.signal));

  let chosen: Target[];
  let labelForward: string;
  let fieldFor: (t: Target) => string;
  try {
    const split = splitClusterSelector(
      q.get('labelSelector'),
      targets.map((t) => t.cluster),
    );
    labelForward = split.forward;
    const names = rewriteFieldSelectorNames(q.get('fieldSelector'), { plainNameCluster });
    chosen = names.matchesNothing
      ? []
      : targets.filter(
          (t) =>
            split.clusters.includes(t.cluster) &&
            (names.cluster === undefined || names.cluster === t.cluster),
        );
    fieldFor = (t) => (names.matchesNothing ? '' : names.forwardFor(t.cluster));
  } catch (e) {
    if (e instanceof SelectorError) return statusResponse(e.status);
    throw e;
  }

  const sendInitialEvents = queryBool(q, 'sendInitialEvents');
  const allowBookmarks = queryBool(q, 'allowWatchBookmarks');
  // WatchList sends resourceVersionMatch=NotOlderThan even with no resourceVersion ("" = most recent):
  // valid for sendInitialEvents, so each cluster is asked the same way
  const rvParam = q.get('resourceVersion') ?? '';
  const matchParam = q.get('resourceVersionMatch');
  const plan =
    sendInitialEvents && rvParam === '' && matchParam === 'NotOlderThan'
      ? {
          ok: true as const,
          perCluster: new Map<string, UpstreamRVParams>(
            membership.names.map((n) => [n, { resourceVersionMatch: 'NotOlderThan' as const }]),
          ),
        }
      : planResourceVersion('watch', membership, rvParam, matchParam);
  const headers = new Headers({ 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  // streamed: a runtime that compresses would hold events back (RUNTIME-NOTES)
  headers.set('Content-Encoding', 'identity');
  if (!plan.ok) {
    if (plan.kind === 'invalid') return statusResponse(plan.status);
    // a composite from another membership or garbage: the watch answers 200 and one ERROR event, as kube does
    return new Response(`${JSON.stringify({ type: 'ERROR', object: plan.status })}\n`, {
      status: 200,
      headers,
    });
  }

  const upstreamHeaders = (accept: string) => {
    const h = new Headers(req.headers);
    h.set('Accept', accept);
    h.set('Accept-Encoding', 'identity');
    return h;
  };
  const baseQuery = () => {
    const out = new URLSearchParams();
    for (const [k, v] of q) if (!PLANNED.has(k)) out.append(k, v);
    return out;
  };
  const ac = new AbortController();
  const abortAll = () => ac.abort();
  // until the stream exists, a client that leaves just aborts what is in flight
  req.signal.addEventListener('abort', abortAll, { once: true });

  // Table watches: merged columns before the first event (a one-row Table per cluster; fanOut splits
  // the probe when it is wider than the connection budget)
  let table: MergedColumns | undefined;
  if (neg.shape === 'table' && chosen.length) {
    const outcomes = await fanOut(deps, chosen, () => {
      const qs = baseQuery();
      qs.set('limit', '1');
      if (labelForward) qs.set('labelSelector', labelForward);
      return {
        method: 'GET',
        path: `${info.kubePath}?${qs}`,
        headers: upstreamHeaders(neg.accept),
        signal: ac.signal,
      };
    });
    const cols = await Promise.all(
      outcomes.map(async (o) => {
        if (!o.ok) return undefined;
        if (!o.res.ok) {
          await o.res.body?.cancel();
          return undefined;
        }
        try {
          return ((await o.res.json()) as { columnDefinitions?: [] }).columnDefinitions;
        } catch {
          return undefined;
        }
      }),
    );
    table = mergeColumns(cols);
  }

  const perCluster = plan.perCluster;
  const merger = new WatchMerger({
    view: { federation: deps.config.federation },
    membership,
    // "0" (any) and "" (latest) start from each cluster's current state: the first event fills the entry
    rvs: new Map(
      membership.names.map((n) => {
        const rv = perCluster.get(n)?.resourceVersion ?? '';
        return [n, rv === '0' ? '' : rv];
      }),
    ),
    clusters: chosen.map((t) => t.cluster),
    table,
    allowBookmarks,
    sendInitialEvents,
  });

  /**
   * What the merged stream reads from: one cluster's upstream watch, or, when the clusters are more than
   * one request may hold connections to (Workers), a group's merged watch through the fleet's own relay.
   */
  interface Source {
    label: string;
    clusters: string[];
    open(resume: boolean): Promise<Response>;
    event(ev: WatchEvent): MergeStep;
    /** nothing will come from it (not served, forbidden): stop waiting for its initial events */
    gone(): MergeStep;
    /** WatchList on a cluster without it: list, then watch from the list's RV */
    listThenWatch?(): Promise<void>;
  }

  const clusterSource = (t: Target): Source => ({
    label: `cluster ${t.cluster}`,
    clusters: [t.cluster],
    open(resume) {
      const qs = baseQuery();
      qs.set('watch', 'true');
      if (labelForward) qs.set('labelSelector', labelForward);
      const f = fieldFor(t);
      if (f) qs.set('fieldSelector', f);
      if (resume) {
        const rv = merger.clusterRV(t.cluster);
        if (rv) qs.set('resourceVersion', rv);
      } else {
        const p: UpstreamRVParams = perCluster.get(t.cluster) ?? {};
        if (p.resourceVersion !== undefined) qs.set('resourceVersion', p.resourceVersion);
        if (p.resourceVersionMatch !== undefined) qs.set('resourceVersionMatch', p.resourceVersionMatch);
        if (sendInitialEvents) qs.set('sendInitialEvents', 'true');
      }
      // bookmarks keep each cluster's RV fresh even when the client did not ask for them
      qs.set('allowWatchBookmarks', 'true');
      return deps.client.send(t.endpoint, {
        method: 'GET',
        path: `${info.kubePath}?${qs}`,
        headers: upstreamHeaders(neg.accept),
        signal: ac.signal,
      });
    },
    event: (ev) => merger.onEvent(t.cluster, ev),
    gone: () => merger.clusterGone(t.cluster),
    listThenWatch: () => listThenWatch(t),
  });

  const groupSource = (group: Target[]): Source => {
    const clusters = group.map((t) => t.cluster);
    let columns: ColumnDefinition[] | undefined;
    return {
      label: `clusters ${clusters.join(', ')}`,
      clusters,
      open(resume) {
        // the group's own merged watch: the client's query, resumed from this stream's composite RV
        const qs = new URLSearchParams(q);
        qs.delete('timeoutSeconds');
        qs.delete('labelSelector');
        if (labelForward) qs.set('labelSelector', labelForward);
        qs.set('watch', 'true');
        qs.set('allowWatchBookmarks', 'true');
        if (resume) {
          qs.set('resourceVersion', merger.resourceVersion());
          qs.delete('resourceVersionMatch');
          qs.delete('sendInitialEvents');
        }
        return relayWatch(
          deps.relay!,
          clusters,
          `${info.kubePath}?${qs}`,
          deps.client.forwardable(upstreamHeaders(req.headers.get('accept') ?? 'application/json')),
          deps.client.caller,
          plainNameCluster,
          ac.signal,
        );
      },
      event(ev) {
        if (ev.object?.kind === 'Table' && Array.isArray(ev.object.columnDefinitions))
          columns = ev.object.columnDefinitions as ColumnDefinition[];
        return merger.onGroupEvent(clusters, ev, columns);
      },
      gone() {
        let step: MergeStep = { kind: 'emit', lines: [] };
        for (const c of clusters) {
          const s2 = merger.clusterGone(c);
          if (s2.kind === 'emit' && s2.lines.length) step = s2;
        }
        return step;
      },
    };
  };

  const groups = splitForBudget(deps, chosen);
  const sources: Source[] = groups ? groups.map(groupSource) : chosen.map(clusterSource);

  // start: every source answers (or fails) before the response starts
  const starts = await Promise.all(
    sources.map(async (t) => {
      try {
        const res = await t.open(false);
        if (res.ok) return { t, res };
        const status = await readStatus(res);
        return {
          t,
          status: status?.code ?? res.status,
          reason: status?.message ?? `HTTP ${res.status}`,
          statusBody: status,
        };
      } catch (err) {
        if (err instanceof UpstreamError)
          return { t, status: 0, reason: err.kind === 'timeout' ? 'timed out' : err.detail };
        throw err;
      }
    }),
  );
  const warnings: string[] = [];
  for (const s of starts)
    if (
      !('res' in s) &&
      s.status !== 404 &&
      !(sendInitialEvents && s.status >= 400 && s.status < 500 && s.status !== 401 && s.status !== 403)
    )
      warnings.push(`${s.t.label}: ${s.reason}`);
  if (warnings.length && deps.config.strict) {
    abortAll();
    return statusResponse(serviceUnavailable(`strict mode: ${warnings.join('; ')}`));
  }
  const served = starts.filter((s) => 'res' in s || s.status !== 404);
  if (served.length === 0 && chosen.length > 0 && starts.every((s) => !('res' in s) && s.status === 404)) {
    abortAll();
    return statusResponse(
      // no cluster serves it: kube's 404 (found by the security fuzz: this was a 503)
      (starts[0] as { statusBody?: never }).statusBody ??
        failure(404, 'NotFound', 'the server could not find the requested resource'),
    );
  }
  for (const w of warnings) headers.append('Warning', warningHeader(w));
  // a group's own warnings (its clusters that failed) are the client's too
  if (groups)
    for (const s of starts) {
      const group = 'res' in s ? s.res : undefined;
      for (const w of group?.headers.get('warning')?.split(/,\s*(?=299 )/) ?? [])
        headers.append('Warning', w);
    }

  let closed = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    clearInterval(heartbeat);
    req.signal.removeEventListener('abort', abortAll);
    req.signal.removeEventListener('abort', close);
    abortAll();
    try {
      controller.close();
    } catch {
      // already closed or errored
    }
  };
  // ticks of the heartbeat timer since the last write; counted, not timed: workerd's clock stands still
  // between I/O events, so Date.now() cannot measure idleness there
  let idleTicks = 0;
  const emit = (step: MergeStep) => {
    if (closed) return;
    if (step.kind === 'expired' || step.lines.length) idleTicks = 0;
    if (step.kind === 'expired') {
      controller.enqueue(enc.encode(step.line));
      close();
      return;
    }
    for (const line of step.lines) controller.enqueue(enc.encode(line));
    // a client that stops reading: kube ends such a watch rather than buffering without bound
    if ((controller.desiredSize ?? 0) < -10_000) close();
  };

  const run = async (t: Source, first: Response | undefined) => {
    let res = first;
    let backoff = 100;
    while (!closed) {
      if (!res) {
        try {
          res = await t.open(true);
        } catch {
          res = undefined;
        }
        if (res && !res.ok) {
          const status = await readStatus(res);
          res = undefined;
          if (status?.code === 410) {
            emit(t.event({ type: 'ERROR', object: status }));
            return;
          }
        }
        if (!res) {
          await new Promise((r) => setTimeout(r, backoff));
          backoff = Math.min(backoff * 2, 5_000);
          continue;
        }
      }
      try {
        for await (const ev of events(res.body!)) {
          if (closed) return;
          backoff = 100;
          emit(t.event(ev));
          if (ev.type === 'ERROR') break;
        }
      } catch {
        // the upstream stream broke: resume below
      }
      res = undefined;
    }
  };

  const listThenWatch = async (t: Target) => {
    const qs = baseQuery();
    if (labelForward) qs.set('labelSelector', labelForward);
    const f = fieldFor(t);
    if (f) qs.set('fieldSelector', f);
    let res: Response;
    try {
      res = await deps.client.send(t.endpoint, {
        method: 'GET',
        path: `${info.kubePath}?${qs}`,
        headers: upstreamHeaders('application/json'),
        signal: ac.signal,
      });
    } catch {
      emit(merger.clusterGone(t.cluster));
      return;
    }
    if (!res.ok) {
      await res.body?.cancel();
      emit(merger.clusterGone(t.cluster));
      return;
    }
    const list = (await res.json()) as {
      metadata?: { resourceVersion?: string };
      items?: Array<Record<string, any>>;
    };
    for (const item of list.items ?? []) emit(merger.onEvent(t.cluster, { type: 'ADDED', object: item }));
    emit(merger.initialFromList(t.cluster, list.metadata?.resourceVersion ?? ''));
  };

  // the client left (Node: at once; workerd: on the next write): every upstream watch closes
  req.signal.addEventListener('abort', close, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(ctl) {
      controller = ctl;
      for (const s of starts) {
        if ('res' in s) void run(s.t, s.res);
        else if (s.status === 404 || s.status === 401 || s.status === 403) {
          // not served there, or not for this caller: nothing will come from it
          emit(s.t.gone());
        } else if (
          sendInitialEvents &&
          s.t.listThenWatch &&
          s.status >= 400 &&
          s.status < 500 &&
          s.status !== 410
        ) {
          // no WatchList on this cluster: list, then watch from the list's RV
          const src = s.t;
          void src.listThenWatch!().then(() => run(src, undefined));
        } else if (s.status === 410) {
          emit(s.t.event({ type: 'ERROR', object: s.statusBody ?? { code: 410 } }));
        } else {
          // down at start: it joins when it is back; a WatchList does not wait for it
          if (sendInitialEvents) emit(s.t.gone());
          void run(s.t, undefined);
        }
      }
      if (chosen.length === 0) emit(merger.clusterGone(''));
      const timeout = Number(q.get('timeoutSeconds'));
      if (Number.isFinite(timeout) && timeout > 0) timer = setTimeout(close, timeout * 1000);
      // An idle watch still writes now and then: a runtime that cannot tell that the client left (workerd
      // notices on write) would otherwise hold every upstream watch open forever. A bookmark when the
      // client takes them, else a bare newline, which JSON watch decoders skip as whitespace.
      heartbeat = setInterval(() => {
        if (closed || ++idleTicks < 5) return;
        const line = allowBookmarks ? merger.heartbeat() : '\n';
        idleTicks = 0;
        try {
          controller.enqueue(enc.encode(line ?? '\n'));
        } catch {
          close();
        }
      }, HEARTBEAT_MS / 5);
    },
    cancel() {
      close();
    },
  });
  return new Response(body, { status: 200, headers });
}

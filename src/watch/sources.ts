/**
 * What a merged watch reads from: one cluster's upstream watch, or, when the clusters are more than one
 * request may hold connections to (Workers), a group's merged watch through the fleet's own relay
 * (src/upstreams/relay.ts). Each source opens its stream (planned start or resume) and hands its events
 * to the merger; the resume loop (hold.ts) decides when to open.
 */
import type { UpstreamIdentity } from '../auth/identity.ts';
import type { ColumnDefinition } from '../merge/table/index.ts';
import type { RelayFetcher } from '../types.ts';
import type { UpstreamClient } from '../upstreams/client.ts';
import type { Target } from '../upstreams/fanout.ts';
import { relayWatch } from '../upstreams/relay.ts';
import type { MergeStep, WatchEvent, WatchMerger } from './merge.ts';
import type { Upstreams } from './upstreams.ts';

export interface Source {
  readonly label: string;
  readonly clusters: string[];
  /**
   * opens the stream: the planned start, or (`resume`) a resume from where it stood; `signal` aborts this
   * open (default: the watch's signal)
   */
  open(resume: boolean, signal?: AbortSignal): Promise<Response>;
  event(ev: WatchEvent): MergeStep;
  /** nothing will come from it (not served, forbidden, cannot be held): stop waiting for its initial events */
  gone(): MergeStep;
  /** WatchList on a cluster without it: list, then watch from the list's RV */
  listThenWatch?(emit: (step: MergeStep) => void): Promise<void>;
  /** the cluster refused the WatchList form of a plain watch: from now on, the plain watch */
  downgrade?(): void;
  /** the source cannot be held for now (`why`): tell the client */
  unavailable(why: string): MergeStep;
  /** the source, told unavailable, delivers again: tell the client */
  resumed(): MergeStep;
}

/**
 * What the sources and the runner read of the watch's plan. src/watch/plan.ts makes it (its `WatchPlan`
 * has this shape); upstreams declare what they need instead of importing a plan.
 */
export interface PlannedWatch {
  /** the clusters asked, in fleet order */
  chosen: Target[];
  sendInitialEvents: boolean;
  allowBookmarks: boolean;
  upgradesLegacy: boolean;
  /** when the stream ends by itself (ms); undefined: never */
  timeoutMs: number | undefined;
  watchQuery(cluster: string, resumeRV?: string, legacy?: boolean): URLSearchParams;
  listQuery(cluster: string): URLSearchParams;
  groupQuery(resumeRV?: string): URLSearchParams;
  joinQuery(cluster: string): URLSearchParams;
  choose(targets: readonly Target[]): Target[];
}

/** What every source of one merged watch shares. */
export interface WatchContext {
  plan: PlannedWatch;
  merger: WatchMerger;
  client: UpstreamClient;
  relay: RelayFetcher | undefined;
  kubePath: string;
  /** the client's request headers (the client filters what goes upstream) */
  headers: Headers;
  /** the Accept each cluster gets (negotiated) */
  accept: string;
  plainNameCluster: string | undefined;
  /** aborts every upstream request of this watch (its signal read when a request is made) */
  upstreams: Pick<Upstreams, 'signal'>;
}

/**
 * Opens `src` under a signal of this open's own that follows `watch`: once answered, nothing of the open
 * stays on the watch's signal (an idle upstream watch keeps no listener or derived signal of it; its
 * reading is ended by the merged stream's close instead).
 */
export function openOwn(src: Source, resume: boolean, watch: AbortSignal): Promise<Response> {
  if (watch.aborted) return src.open(resume, watch);
  const own = new AbortController();
  const abort = () => own.abort(watch.reason);
  watch.addEventListener('abort', abort, { once: true });
  return src.open(resume, own.signal).finally(() => watch.removeEventListener('abort', abort));
}

/** The client's headers as one upstream request of the watch sends them, with `accept`. */
export function upstreamHeaders(client: Headers, accept: string): Headers {
  const h = new Headers(client);
  h.set('Accept', accept);
  // streamed event by event: a compressed upstream body would hold events back
  h.set('Accept-Encoding', 'identity');
  return h;
}

/** One cluster's upstream watch; `joined`: the cluster joined the fleet mid-watch (plan.joinQuery). */
export function clusterSource(ctx: WatchContext, t: Target, joined = false): Source {
  return new ClusterSource(ctx, t, joined);
}

/** A class, not an object of closures: every merged watch holds one per cluster for its whole life. */
class ClusterSource implements Source {
  private legacy = false;

  constructor(
    private readonly ctx: WatchContext,
    private readonly t: Target,
    private readonly joined: boolean,
  ) {}

  // made when asked (at the start, and when the source fails), not kept by every idle watch
  get label(): string {
    return `cluster ${this.t.cluster}`;
  }

  get clusters(): string[] {
    return [this.t.cluster];
  }

  open(resume: boolean, signal?: AbortSignal): Promise<Response> {
    const { ctx, t } = this;
    const { merger, plan } = ctx;
    // a break during the initial events restarts them: their RVs are in key order, not a resume point
    const initial = merger.inInitial(t.cluster);
    if (resume && initial) merger.restartInitial(t.cluster);
    const resumeRV = resume && !initial ? merger.clusterRV(t.cluster) : undefined;
    const qs =
      this.joined && resumeRV === undefined
        ? plan.joinQuery(t.cluster)
        : plan.watchQuery(t.cluster, resumeRV, this.legacy);
    return ctx.client.send(t.endpoint, {
      method: 'GET',
      path: `${ctx.kubePath}?${qs}`,
      headers: upstreamHeaders(ctx.headers, ctx.accept),
      signal: signal ?? ctx.upstreams.signal,
    });
  }

  event(ev: WatchEvent): MergeStep {
    return this.ctx.merger.onEvent(this.t.cluster, ev);
  }

  gone(): MergeStep {
    return this.ctx.merger.clusterGone(this.t.cluster);
  }

  listThenWatch(emit: (step: MergeStep) => void): Promise<void> {
    return listThenWatch(this.ctx, this.t, emit);
  }

  downgrade(): void {
    this.legacy = true;
    this.ctx.merger.untrackInitial(this.t.cluster);
  }

  unavailable(why: string): MergeStep {
    return this.ctx.merger.unavailable(`cluster ${this.t.cluster}: ${why}`);
  }

  resumed(): MergeStep {
    return this.ctx.merger.resumed(`cluster ${this.t.cluster}`);
  }
}

export function groupSource(ctx: WatchContext, group: Target[], as: UpstreamIdentity | undefined): Source {
  const { merger, plan } = ctx;
  const clusters = group.map((t) => t.cluster);
  // the group's own Table columns, from its first event
  let columns: ColumnDefinition[] | undefined;
  return {
    label: `clusters ${clusters.join(', ')}`,
    clusters,
    open(resume, signal) {
      // as for one cluster: a break during the group's initial events restarts them
      const key = clusters.join(',');
      const initial = merger.inInitial(key);
      if (resume && initial) merger.restartInitial(key);
      const qs = plan.groupQuery(resume && !initial ? merger.resourceVersion() : undefined);
      return relayWatch(
        ctx.relay!,
        clusters,
        `${ctx.kubePath}?${qs}`,
        ctx.client.forwardable(upstreamHeaders(ctx.headers, ctx.headers.get('accept') ?? 'application/json')),
        as,
        ctx.plainNameCluster,
        signal ?? ctx.upstreams.signal,
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
        const s = merger.clusterGone(c);
        if (s.kind === 'emit' && s.lines.length) step = s;
      }
      return step;
    },
    unavailable: (why) => merger.unavailable(`clusters ${clusters.join(', ')}: ${why}`),
    resumed: () => merger.resumed(`clusters ${clusters.join(', ')}`),
  };
}

/** WatchList on a cluster that does not support it: its initial events from a list, then the watch. */
async function listThenWatch(ctx: WatchContext, t: Target, emit: (step: MergeStep) => void): Promise<void> {
  const { merger } = ctx;
  let res: Response;
  try {
    res = await ctx.client.send(t.endpoint, {
      method: 'GET',
      path: `${ctx.kubePath}?${ctx.plan.listQuery(t.cluster)}`,
      headers: upstreamHeaders(ctx.headers, 'application/json'),
      signal: ctx.upstreams.signal,
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
  let list: { metadata?: { resourceVersion?: string }; items?: Array<Record<string, any>> };
  try {
    list = await res.json();
  } catch {
    emit(merger.clusterGone(t.cluster));
    return;
  }
  for (const item of list.items ?? []) emit(merger.onEvent(t.cluster, { type: 'ADDED', object: item }));
  emit(merger.initialFromList(t.cluster, list.metadata?.resourceVersion ?? ''));
}

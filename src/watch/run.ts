/**
 * The running merged watch: the response body, with every source set going by what it answered at the
 * start, and the one close (client gone, timeout, 410, slow client) that ends every upstream watch.
 */

import { startHold, type WatchCounts } from './hold.ts';
import { type FollowOptions, followMembership } from './membership.ts';
import type { WatchMerger } from './merge.ts';
import { WatchOutput } from './output.ts';
import type { PlannedWatch, Source } from './sources.ts';
import { groupNotices, lateFailure, type Start, startInTurn, startSource } from './start.ts';
import type { Upstreams } from './upstreams.ts';

export interface RunOptions {
  plan: PlannedWatch;
  merger: WatchMerger;
  starts: Start[];
  /** starts still under way when the head went out: each is set going when it answers */
  late?: Array<Promise<Start>>;
  /** a late start failed: its clusters are counted (the route's /metrics) */
  onLateFailure?: (clusters: string[]) => void;
  /** the sources are relay groups (their answers' Warning headers are their failed clusters') */
  grouped?: boolean;
  /** counts the upstream streams and their resumes (the route's /metrics) */
  counts?: WatchCounts | undefined;
  /** the client's request: its abort (Node: at once; workerd: on the next write) closes everything */
  clientSignal: AbortSignal;
  /** aborts every upstream request of the watch */
  upstreams: Upstreams;
  /** follow the fleet's membership (the route's watch; a relay group's is followed by its caller) */
  follow?: Omit<FollowOptions, 'emit' | 'hold'>;
}

/** The merged watch's body; it runs until the client leaves, the timeout, or a 410. */
export function runMergedWatch(o: RunOptions): ReadableStream<Uint8Array> {
  // what the stream keeps: never `o` itself, whose starts hold the answers' headers
  const run = new Running(o.plan, o.merger, o.upstreams, o.clientSignal);
  const out = new WatchOutput(run, startAll(o));
  run.out = out;
  if (o.clientSignal.aborted) out.close();
  else if (!out.closed) o.clientSignal.addEventListener('abort', run, { once: true });
  return out.takeBody();
}

/**
 * The output's options and the client signal's listener in one object, not three closures and their
 * contexts: every open merged watch keeps it for its whole life.
 */
class Running {
  readonly timeoutMs: number | undefined;
  out: WatchOutput | undefined;

  constructor(
    private readonly plan: PlannedWatch,
    private readonly merger: WatchMerger,
    private readonly upstreams: Upstreams,
    private readonly clientSignal: AbortSignal,
  ) {
    this.timeoutMs = plan.timeoutMs;
  }

  /** what an idle stream writes (WatchOutputOptions) */
  heartbeatLine(): string | undefined {
    return this.plan.allowBookmarks ? this.merger.heartbeat() : undefined;
  }

  /** the stream closed, for whatever reason: every upstream watch ends (WatchOutputOptions) */
  onClose(): void {
    this.clientSignal.removeEventListener('abort', this);
    this.upstreams.abort();
  }

  /** the client left (its request's abort) */
  handleEvent(): void {
    this.out?.close();
  }
}

/** Sets every source going, once the body exists (WatchOutput runs it once, then lets it go). */
function startAll(o: RunOptions): (w: WatchOutput) => void {
  return (w) => {
    const { plan, merger, upstreams } = o;
    const holding = { upstreams, sendInitialEvents: plan.sendInitialEvents, counts: o.counts };
    const hold = (src: Source, first: Response | undefined) => startHold(src, first, w, holding);
    const handlers = {
      sendInitialEvents: plan.sendInitialEvents,
      upgradesLegacy: plan.upgradesLegacy,
      emit: (step: Parameters<WatchOutput['emit']>[0]) => w.emit(step),
      hold,
    };
    startInTurn(o.starts, handlers, () => w.closed);
    const watchList = plan.sendInitialEvents || plan.upgradesLegacy;
    for (const p of o.late ?? [])
      p.then(
        (s) => {
          if (w.closed) {
            if ('res' in s) void s.res.body?.cancel().catch(() => {});
            return;
          }
          // too late for a Warning header: the client hears of it as a bookmark notice
          const why = lateFailure(s, watchList);
          if (why !== undefined) {
            w.emit(s.src.unavailable(`${why}; retrying`));
            o.onLateFailure?.(s.src.clusters);
          }
          // a relay group's Warning headers, too late as headers: its failed clusters, as notices
          const notices = o.grouped ? groupNotices(s) : [];
          for (const n of notices) w.emit(merger.unavailable(n.text));
          const named = notices.flatMap((n) => (n.cluster ? [n.cluster] : []));
          if (named.length) o.onLateFailure?.(named);
          startSource(s, handlers);
        },
        () => {},
      );
    if (o.follow) followMembership({ ...o.follow, emit: handlers.emit, hold }, upstreams.signal);
    // no cluster chosen: a WatchList's initial phase is over at once
    if (plan.chosen.length === 0) w.emit(merger.clusterGone(''));
  };
}

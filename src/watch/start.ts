/**
 * The start of a merged watch: every source is opened at once and the response starts when each has
 * answered, or (outside strict mode) at the first answered 200 ({@link openForHead}). What the sources answered decides the response (Warning headers for those that failed, a 503
 * in strict mode, the list's error when every one failed for good) and how each source is then held.
 */
import { readStatus, type Status } from '../kube/status.ts';
import type { ColumnDefinition } from '../merge/table/index.ts';
import type { FanOutDeps } from '../types.ts';
import { UpstreamError } from '../upstreams/client.ts';
import { fanOut, type Target } from '../upstreams/fanout.ts';
import type { WatchColumns } from './columns.ts';
import type { MergeStep } from './merge.ts';
import { openOwn, type Source } from './sources.ts';

export type Start =
  | { src: Source; res: Response }
  | { src: Source; status: number; reason: string; statusBody?: Status | undefined };

/** How the plan asked each cluster's start (src/watch/plan.ts WatchPlan has this shape). */
export interface AskedStarts {
  /** the client asked a WatchList */
  sendInitialEvents: boolean;
  /** `cluster`'s start is a WatchList: the client's, or the fleet's own choice for a plain watch */
  initialEventsOf(cluster: string): boolean;
}

async function openOne(src: Source, signal: AbortSignal | undefined): Promise<Start> {
  try {
    const res = await (signal ? openOwn(src, false, signal) : src.open(false));
    if (res.ok) return { src, res };
    const status = await readStatus(res);
    return {
      src,
      status: status?.code ?? res.status,
      reason: status?.message ?? `HTTP ${res.status}`,
      statusBody: status,
    };
  } catch (err) {
    if (err instanceof UpstreamError)
      return { src, status: 0, reason: err.kind === 'timeout' ? 'timed out' : err.detail };
    throw err;
  }
}

/** starts that are the plain watch asked again after the fleet's own WatchList was refused */
const retried = new WeakSet<Start>();

/**
 * Opens every source at once (each under a signal of its own that follows `signal`, see openOwn). With
 * `asked` (a plain watch the fleet asks some clusters as a WatchList: from RV "" or "0", or a cluster a
 * composite RV has no entry for), a cluster that refuses that form is asked at once the plain watch the
 * client asked (the source downgraded), before the response is decided: the fleet's own choice is nothing
 * to warn the client about, while the plain watch's own failure is (see {@link startWarnings}).
 */
export async function openAll(
  sources: Source[],
  signal?: AbortSignal,
  asked?: AskedStarts,
): Promise<Start[]> {
  return Promise.all(sources.map((src) => openStart(src, signal, asked)));
}

/** One source's start as {@link openAll} makes it (the plain watch asked again after a refused WatchList). */
async function openStart(src: Source, signal?: AbortSignal, asked?: AskedStarts): Promise<Start> {
  const s = await openOne(src, signal);
  if (!asked || asked.sendInitialEvents) return s;
  if ('res' in s || !s.src.downgrade || !refusedWatchList(s.status) || s.status === 410) return s;
  if (!s.src.clusters.every((c) => asked.initialEventsOf(c))) return s;
  s.src.downgrade();
  const again = await openOne(s.src, signal);
  retried.add(again);
  return again;
}

/**
 * How long the head waits for the other sources once one answered 200 (outside strict mode): by default
 * only to the end of the I/O turn that read that answer (answers read in the same turn are in), since on
 * the real bed a warm fleet's sources answer 3-20 ms apart and every ms waited here is the first event's
 * (docs/benchmarks.md "The head at the first 200"). Later failures go to the stream as notices and
 * /metrics (run.ts, {@link lateFailure}) instead of Warning headers.
 */
export const HEAD_GRACE_MS = 0;

/** The starts the head is decided on, and those still under way when it goes out (they join the stream). */
export interface HeadStarts {
  starts: Start[];
  late: Array<Promise<Start>>;
}

/**
 * Opens every source as {@link openAll} does, but resolves once one source answered 200 and `waitMs` more
 * passed (0: the next task), or every source answered, whichever is first. `waitMs` Infinity (strict
 * mode): every source.
 * When none answered 200, every start is awaited, so the all-failed answer stays what it was.
 */
export function openForHead(
  sources: Source[],
  waitMs: number,
  signal?: AbortSignal,
  asked?: AskedStarts,
): Promise<HeadStarts> {
  const opens = sources.map((src) => openStart(src, signal, asked));
  if (!Number.isFinite(waitMs)) return Promise.all(opens).then((starts) => ({ starts, late: [] }));
  return new Promise<HeadStarts>((resolve, reject) => {
    const got: Array<Start | undefined> = new Array(opens.length);
    let left = opens.length;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let armed = false;
    let done = false;
    const decide = () => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      const starts: Start[] = [];
      const late: Array<Promise<Start>> = [];
      for (let i = 0; i < opens.length; i++) {
        const s = got[i];
        if (s) starts.push(s);
        else late.push(opens[i]!);
      }
      resolve({ starts, late });
    };
    if (left === 0) decide();
    opens.forEach((p, i) => {
      p.then((s) => {
        got[i] = s;
        left--;
        if (left === 0) decide();
        else if ('res' in s && !armed) {
          armed = true;
          // no grace: the next task, once the answers this I/O turn read are in
          if (waitMs > 0) timer = setTimeout(decide, waitMs);
          else nextTask(decide);
        }
      }, reject);
    });
  });
}

/**
 * What a start that answered after the head went out tells the client (no Warning header can be sent
 * any longer): its failure as a notice, or undefined when it is not worth one (see {@link startWarnings}).
 */
export function lateFailure(s: Start, watchList: boolean): string | undefined {
  return 'res' in s || !startWarnings([s], watchList).length ? undefined : s.reason;
}

/** a 4xx other than 401/403 to a WatchList: the cluster may not support it (not worth a Warning) */
function refusedWatchList(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/**
 * What the client is warned about: sources that failed, except "not served there" and WatchList
 * fallbacks (`watchList`: every cluster was asked a WatchList, the client's or the fleet's). A source
 * asked again as the plain watch after refusing the fleet's WatchList (openAll) is warned about when that
 * plain watch fails too: that failure is the cluster's own.
 */
export function startWarnings(starts: Start[], watchList: boolean): string[] {
  const out: string[] = [];
  for (const s of starts)
    if (!('res' in s) && s.status !== 404 && !(watchList && refusedWatchList(s.status) && !retried.has(s)))
      out.push(`${s.src.label}: ${s.reason}`);
  return out;
}

export type FailedStart = Extract<Start, { status: number }>;

/**
 * The starts, when every one failed for good: no answer from the cluster itself (transport, timeout, a
 * 5xx), the resource not served there (404), or not for this caller (401/403). Undefined when any start
 * answered, or failed in a way the stream still serves (a 410's ERROR event, a refused WatchList's
 * fallback, a 4xx retried as the plain watch). A stream of such starts would carry no event and only
 * retry in the background: the route answers the error the list in the same state answers instead
 * (watch/route.ts), so a client backs off and can say why, instead of re-watching in a loop.
 */
export function failedForGood(starts: Start[]): FailedStart[] | undefined {
  if (starts.length === 0) return undefined;
  const failed: FailedStart[] = [];
  for (const s of starts) {
    if ('res' in s) return undefined;
    if (!(s.status === 0 || s.status >= 500 || s.status === 404 || s.status === 401 || s.status === 403))
      return undefined;
    failed.push(s);
  }
  return failed;
}

/**
 * A relay group's warnings as their texts, each with the cluster it names (the group's Warning headers
 * are `warningHeader` of `cluster NAME: reason`, see startWarnings): what a group that answered after the
 * head went out tells the client as notices instead (run.ts).
 */
export function groupNotices(s: Start): Array<{ text: string; cluster: string | undefined }> {
  return groupWarnings([s]).map((w) => {
    const q = /^299 [^ ]+ "((?:[^"\\]|\\.)*)"/.exec(w);
    const text = q ? q[1]!.replace(/\\(.)/g, '$1') : w;
    return { text, cluster: /^cluster ([^:,\s]+):/.exec(text)?.[1] };
  });
}

/** A relay group's own warnings (its clusters that failed) are the client's too. */
export function groupWarnings(starts: Start[]): string[] {
  return starts.flatMap((s) =>
    'res' in s ? (s.res.headers.get('warning')?.split(/,\s*(?=299 )/) ?? []) : [],
  );
}

export interface StartHandlers {
  sendInitialEvents: boolean;
  /**
   * the plan asks plain watches from RV "" or "0" as WatchLists. Not needed to decide a fallback: any
   * cluster source may be asked as a WatchList (one a composite RV has no entry for, too), and for one
   * that was not, `downgrade` changes nothing but to retry it as before.
   */
  upgradesLegacy: boolean;
  emit(step: MergeStep): void;
  /** hold the source from this answer (or from a resume, when undefined) */
  hold(src: Source, first: Response | undefined): void;
}

/** Sets one source going after the start, by what it answered. */
export function startSource(s: Start, h: StartHandlers): void {
  if ('res' in s) {
    h.hold(s.src, s.res);
    return;
  }
  const src = s.src;
  if (s.status === 404 || s.status === 401 || s.status === 403) {
    // not served there, or not for this caller: nothing will come from it
    h.emit(src.gone());
  } else if (h.sendInitialEvents && src.listThenWatch && refusedWatchList(s.status) && s.status !== 410) {
    // no WatchList on this cluster: list, then watch from the list's RV
    void src.listThenWatch(h.emit).then(() => h.hold(src, undefined));
  } else if (src.downgrade && refusedWatchList(s.status) && s.status !== 410) {
    // a plain watch asked as a WatchList, refused: the plain watch then (cuts during its initial events
    // cannot be told apart there)
    src.downgrade();
    h.hold(src, undefined);
  } else if (s.status === 410) {
    h.emit(src.event({ type: 'ERROR', object: s.statusBody ?? { code: 410 } }));
  } else {
    // down at start: it joins when it is back; a WatchList does not wait for it
    if (h.sendInitialEvents) h.emit(src.gone());
    h.hold(src, undefined);
  }
}

/**
 * Sets the sources going after the head, each in a task of its own (`closed`: the stream ended before
 * its turn: an answered body is let go). An answered source's reading hands on at once every chunk that
 * came meanwhile, so started together inside the body's start they held the head and the first event
 * until every member's replay was merged (50-120 ms of a 3 × 300-event start on the real bed): now the
 * head is written first, and one source's events go out (the output's batch is a microtask) before the
 * next source's are read. Order per cluster, the head's decision and a WatchList's end are unchanged.
 */
export function startInTurn(starts: Start[], h: StartHandlers, closed: () => boolean): void {
  for (const s of starts)
    nextTask(() => {
      if (!closed()) startSource(s, h);
      else if ('res' in s) void s.res.body?.cancel().catch(() => {});
    });
}

const immediate = (globalThis as { setImmediate?: (f: () => void) => unknown }).setImmediate;

/**
 * The next task: setImmediate where there is one (Node), right after the I/O just read; setTimeout(0)
 * waits for the timers' turn (1 ms at least, more on a busy loop): every merged watch's first event
 * waited for it (real bed: head decided → first write 1-22 ms, docs/benchmarks.md).
 */
export const nextTask: (f: () => void) => void = immediate
  ? (f) => {
      immediate(f);
    }
  : (f) => {
      setTimeout(f, 0);
    };

/**
 * Table watches: each cluster's columns (a one-row Table list per cluster; fanOut splits the probe when it
 * is wider than the connection budget), learned into `into` when they come. Not awaited before the head
 * (outside strict mode): a cluster's own first watch event carries its columns too (watch/columns.ts).
 */
export async function probeColumns(
  deps: FanOutDeps,
  chosen: Target[],
  path: string,
  headers: Headers,
  signal: AbortSignal,
  into: WatchColumns,
): Promise<void> {
  const outcomes = await fanOut(deps, chosen, () => ({ method: 'GET', path, headers, signal }));
  await Promise.all(
    outcomes.map(async (o, at) => {
      if (!o.ok) return;
      if (!o.res.ok) {
        await o.res.body?.cancel();
        return;
      }
      try {
        const cols = ((await o.res.json()) as { columnDefinitions?: ColumnDefinition[] }).columnDefinitions;
        if (Array.isArray(cols) && !into.has(at)) into.learn(at, cols);
      } catch {}
    }),
  );
}

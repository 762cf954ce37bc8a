/**
 * The plan of a merged watch: which clusters are asked, the query each cluster's upstream watch gets on
 * open and on resume, the RV each starts from, and how long the stream may last. Pure: no I/O; a request
 * that cannot be planned answers a Status (a 400 as a response, a foreign or garbage composite RV as the
 * one ERROR event kube answers with a 200).
 */
import type { Status } from '../kube/status.ts';
import { type Membership, planResourceVersion, type UpstreamRVParams } from '../merge/rv/index.ts';
import { type ClusterChoice, chooseClusters } from '../plan/targets.ts';
import { queryBool } from '../request/info.ts';

/**
 * Query parameters the fleet sets per cluster; the rest of the client's query goes upstream as sent.
 * `shardSelector` (KEP-5866) is the fleet's to honour or not, and it does not: left out, so no cluster
 * filters what the client then believes is unfiltered (a client that sees no `shardInfo` filters itself).
 */
const PLANNED = new Set([
  'shardSelector',
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

/**
 * The longest `timeoutSeconds` a timer can hold: Node and browsers fire at once past 2^31−1 ms, so a
 * larger value would end the watch immediately instead of never.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface WatchPlan<T extends { cluster: string }> {
  /** the clusters asked, in fleet order */
  chosen: T[];
  /** WatchList: initial events, then one fleet bookmark with `k8s.io/initial-events-end` */
  sendInitialEvents: boolean;
  /** the client takes bookmarks */
  allowBookmarks: boolean;
  /** each cluster's starting RV for the merger ("" = unknown until its first event) */
  startRVs: Map<string, string>;
  /** when the stream ends by itself (ms), already clamped to what a timer can hold; undefined: never */
  timeoutMs: number | undefined;
  /** the label selector every cluster gets ('' for none) */
  labelForward: string;
  /**
   * Each cluster's start sends initial events that end in an `initial-events-end` bookmark, so a cut
   * during them can be told from one after them: WatchList, and a watch from RV "" or "0" (the fleet asks
   * the cluster for WatchList then, and falls back to the plain watch where the cluster refuses it).
   */
  initialEvents: boolean;
  /** a watch from RV "" or "0" the fleet asks of each cluster as a WatchList (see `initialEvents`) */
  upgradesLegacy: boolean;
  /**
   * Whether `cluster`'s start sends initial events that end in an `initial-events-end` bookmark: every
   * cluster of a WatchList or of an upgraded watch (`upgradesLegacy`), and, in a plain watch from a
   * composite RV, a cluster whose entry is empty (the list the RV came from left it out): its start is
   * the cluster's current state, as ADDED events in key order, so it is asked as a WatchList too, or a
   * cut during them would resume from a mid-snapshot RV and lose objects.
   */
  initialEventsOf(cluster: string): boolean;
  /**
   * The query of `cluster`'s upstream watch: the planned start, or a resume from `resumeRV`. `legacy`:
   * the start as the client asked it, for a cluster that refused the WatchList form.
   */
  watchQuery(cluster: string, resumeRV?: string, legacy?: boolean): URLSearchParams;
  /** the query of a one-row Table list (the column probe of a Table watch) */
  probeQuery(): URLSearchParams;
  /** the query of a plain list of `cluster` (WatchList on a cluster without it: list, then watch) */
  listQuery(cluster: string): URLSearchParams;
  /** the query of a relay group's own merged watch: the client's, or a resume from `resumeRV` */
  groupQuery(resumeRV?: string): URLSearchParams;
  /**
   * The start of a cluster that joined the fleet mid-watch: a WatchList from the most recent state, so its
   * objects come as ADDED and their end is known (the client's own start no longer applies to it).
   */
  joinQuery(cluster: string): URLSearchParams;
  /** Which of `targets` (the fleet after a membership change) this watch's cluster selectors choose. */
  choose(targets: readonly T[]): T[];
}

export type WatchPlanResult<T extends { cluster: string }> =
  | { ok: true; plan: WatchPlan<T> }
  /** answer this Status as the response */
  | { ok: false; respond: Status }
  /** answer 200 with this Status as the one ERROR event (kube's answer to an unusable RV) */
  | { ok: false; errorEvent: Status };

export interface WatchPlanInput<T extends { cluster: string }> {
  query: URLSearchParams;
  /** the clusters of the clusterspace, in fleet order */
  targets: readonly T[];
  /** the fleet's membership, prepared (src/merge/rv/index.ts) */
  membership: Membership;
  plainNameCluster: string | undefined;
}

/** The timer delay for `timeoutSeconds`: undefined for none/invalid, at most what a timer can hold. */
export function watchTimeoutMs(param: string | null): number | undefined {
  const s = Number(param);
  if (!Number.isFinite(s) || s <= 0) return undefined;
  return Math.min(s * 1000, MAX_TIMEOUT_MS);
}

/** Each cluster's RV parameters: the client's RV (a composite decoded), or WatchList's "most recent". */
function planRVs(q: URLSearchParams, membership: Membership, sendInitialEvents: boolean) {
  const rvParam = q.get('resourceVersion') ?? '';
  const matchParam = q.get('resourceVersionMatch');
  // WatchList sends resourceVersionMatch=NotOlderThan even with no resourceVersion ("" = most recent):
  // valid for sendInitialEvents, so each cluster is asked the same way
  if (sendInitialEvents && rvParam === '' && matchParam === 'NotOlderThan')
    return {
      ok: true as const,
      perCluster: new Map<string, UpstreamRVParams>(
        membership.names.map((n) => [n, { resourceVersionMatch: 'NotOlderThan' as const }]),
      ),
    };
  return planResourceVersion('watch', membership, rvParam, matchParam);
}

/**
 * The plan, a class rather than an object of closures: every open merged watch keeps its plan for its
 * whole life (its sources resume from it), so what it holds is paid once per watch. It keeps strings and
 * two small maps, not the client's URLSearchParams, and a field-selector function only when the client
 * sent a field selector.
 */
class Plan<T extends { cluster: string }> implements WatchPlan<T> {
  constructor(
    readonly chosen: T[],
    readonly sendInitialEvents: boolean,
    readonly allowBookmarks: boolean,
    /** the fleet's member names (the membership's, shared: not the plan's own) */
    private readonly names: readonly string[],
    readonly timeoutMs: number | undefined,
    readonly labelForward: string,
    readonly upgradesLegacy: boolean,
    /** a plain watch (no WatchList parameter): an empty composite entry starts that cluster as a WatchList */
    private readonly plainStart: boolean,
    private readonly perCluster: Map<string, UpstreamRVParams>,
    /** the client's query, serialised */
    private readonly query: string,
    /** the field selector `cluster` gets; undefined: the client sent none */
    private readonly fieldFor: ((cluster: string) => string) | undefined,
    private readonly selectors: {
      labelSelector: string | null;
      fieldSelector: string | null;
      plainNameCluster: string | undefined;
    },
  ) {}

  /** made when asked (the merger's start), not kept by every open watch */
  get startRVs(): Map<string, string> {
    // "0" (any) and "" (latest) start from each cluster's current state: the first event fills the entry
    return new Map(
      this.names.map((n) => {
        const r = this.perCluster.get(n)?.resourceVersion ?? '';
        return [n, r === '0' ? '' : r];
      }),
    );
  }

  /** the client's query without what the fleet plans, with the forwarded label selector */
  private base(): URLSearchParams {
    const out = new URLSearchParams();
    for (const [k, v] of new URLSearchParams(this.query)) if (!PLANNED.has(k)) out.append(k, v);
    if (this.labelForward) out.set('labelSelector', this.labelForward);
    return out;
  }

  get initialEvents(): boolean {
    return this.sendInitialEvents || this.upgradesLegacy;
  }

  private upgrades(cluster: string): boolean {
    return (
      this.upgradesLegacy || (this.plainStart && (this.perCluster.get(cluster)?.resourceVersion ?? '') === '')
    );
  }

  initialEventsOf(cluster: string): boolean {
    return this.sendInitialEvents || this.upgrades(cluster);
  }

  private selected(cluster: string): URLSearchParams {
    const qs = this.base();
    const f = this.fieldFor?.(cluster);
    if (f) qs.set('fieldSelector', f);
    return qs;
  }

  watchQuery(cluster: string, resumeRV?: string, legacy?: boolean): URLSearchParams {
    const qs = this.selected(cluster);
    qs.set('watch', 'true');
    if (resumeRV !== undefined) {
      if (resumeRV) qs.set('resourceVersion', resumeRV);
    } else {
      const p: UpstreamRVParams = this.perCluster.get(cluster) ?? {};
      if (p.resourceVersion !== undefined) qs.set('resourceVersion', p.resourceVersion);
      if (p.resourceVersionMatch !== undefined) qs.set('resourceVersionMatch', p.resourceVersionMatch);
      if (this.sendInitialEvents) qs.set('sendInitialEvents', 'true');
      if (this.upgrades(cluster) && !legacy) {
        qs.set('sendInitialEvents', 'true');
        qs.set('resourceVersionMatch', 'NotOlderThan');
      }
    }
    // bookmarks keep each cluster's RV fresh even when the client did not ask for them
    qs.set('allowWatchBookmarks', 'true');
    return qs;
  }

  joinQuery(cluster: string): URLSearchParams {
    const qs = this.selected(cluster);
    qs.set('watch', 'true');
    qs.set('sendInitialEvents', 'true');
    qs.set('resourceVersionMatch', 'NotOlderThan');
    qs.set('allowWatchBookmarks', 'true');
    return qs;
  }

  probeQuery(): URLSearchParams {
    const qs = this.base();
    qs.set('limit', '1');
    return qs;
  }

  listQuery(cluster: string): URLSearchParams {
    return this.selected(cluster);
  }

  groupQuery(resumeRV?: string): URLSearchParams {
    // the group's own merged watch: the client's query (the group plans its own clusters' selectors)
    const qs = new URLSearchParams(this.query);
    qs.delete('timeoutSeconds');
    qs.delete('labelSelector');
    if (this.labelForward) qs.set('labelSelector', this.labelForward);
    qs.set('watch', 'true');
    qs.set('allowWatchBookmarks', 'true');
    if (resumeRV !== undefined) {
      qs.set('resourceVersion', resumeRV);
      qs.delete('resourceVersionMatch');
      qs.delete('sendInitialEvents');
    } else if (this.upgradesLegacy) {
      // the group as a WatchList too, so the end of its initial events is known here
      qs.set('sendInitialEvents', 'true');
      qs.set('resourceVersionMatch', 'NotOlderThan');
    }
    return qs;
  }

  choose(targets: readonly T[]): T[] {
    // the same selectors as at the start: they parsed then, so they parse now
    const again = chooseClusters({ ...this.selectors, targets });
    return 'code' in again ? [] : again.chosen;
  }
}

export function planWatch<T extends { cluster: string }>(input: WatchPlanInput<T>): WatchPlanResult<T> {
  const q = input.query;
  const selectors = {
    labelSelector: q.get('labelSelector'),
    fieldSelector: q.get('fieldSelector'),
    plainNameCluster: input.plainNameCluster,
  };
  const choice: ClusterChoice<T> | Status = chooseClusters({ ...selectors, targets: input.targets });
  if ('code' in choice) return { ok: false, respond: choice };
  const sendInitialEvents = queryBool(q, 'sendInitialEvents');
  const rv = planRVs(q, input.membership, sendInitialEvents);
  if (!rv.ok)
    return rv.kind === 'invalid' ? { ok: false, respond: rv.status } : { ok: false, errorEvent: rv.status };
  const perCluster = rv.perCluster;
  const rvParam = q.get('resourceVersion') ?? '';
  // a plain watch from "" (latest) or "0" (any) starts with the current state as ADDED events, which a
  // WatchList marks the end of; kube allows it for RV "" and "0" with NotOlderThan
  const upgradesLegacy =
    !sendInitialEvents &&
    q.get('sendInitialEvents') === null &&
    q.get('resourceVersionMatch') === null &&
    (rvParam === '' || rvParam === '0');
  // a plain watch from a composite RV whose entry for a cluster is empty starts that cluster from ""
  const plainStart =
    !sendInitialEvents && q.get('sendInitialEvents') === null && q.get('resourceVersionMatch') === null;
  const plan = new Plan<T>(
    choice.chosen,
    sendInitialEvents,
    queryBool(q, 'allowWatchBookmarks'),
    input.membership.names,
    watchTimeoutMs(q.get('timeoutSeconds')),
    choice.labelForward,
    upgradesLegacy,
    plainStart,
    perCluster,
    q.toString(),
    selectors.fieldSelector ? choice.fieldFor : undefined,
    selectors,
  );
  return { ok: true, plan };
}

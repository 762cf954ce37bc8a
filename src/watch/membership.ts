/**
 * A merged watch follows the fleet's membership while it runs (Karmada Cluster objects added or removed;
 * src/upstreams/membership.ts caches them for `refreshSeconds`, so that is how often it looks).
 *
 * - A cluster that joins and that the watch's cluster selectors choose streams its objects as ADDED (a
 *   WatchList of that cluster from its most recent state, or a list where it has no WatchList), then its
 *   watch. Nothing else about the stream changes: other clusters go on where they stood.
 * - A cluster of the watch that leaves ends the stream with one ERROR event carrying a 410 Expired: its
 *   objects are gone from the fleet, and a relist is the one way every client (client-go, client-node,
 *   the Python client) drops them, without the fleet keeping a record of every object it sent.
 * - Clusters that join or leave outside the watch's choice change only how its resourceVersions are
 *   encoded (a composite is made for one membership, src/merge/rv/index.ts).
 *
 * RVs minted before the change no longer decode (a resume with one is answered 410 and the client
 * relists); the merger switches to the new membership once the joined clusters' objects are all in, and
 * says so with a bookmark, so what the client holds after that resumes. Karmada's own proxy closes every
 * watch on any membership change; here only a leaving cluster of the watch does.
 *
 * Two kinds of watch end on any change that concerns them instead: Table watches (a joined cluster's
 * columns were not in the merged columns sent with the first event) and watches split into relay groups
 * (each group's composite is made for the membership the group started with).
 */
import { prepareMembership } from '../merge/rv/index.ts';
import type { Target } from '../upstreams/fanout.ts';
import type { MergeStep } from './merge.ts';
import { clusterSource, type Source, type WatchContext } from './sources.ts';
import { openAll, type Start } from './start.ts';

export interface FollowOptions {
  ctx: WatchContext;
  /** the fleet's clusters now (all of them, in fleet order) */
  fleet: (signal: AbortSignal) => Promise<Target[]>;
  /** the fleet's cluster names the stream started with */
  names: readonly string[];
  everyMs: number;
  /** a Table watch: a joined cluster ends it (its columns are not the merged ones sent) */
  table: boolean;
  /** split into relay groups: any change ends it (each group's composite is of its own start) */
  grouped: boolean;
  emit(step: MergeStep): void;
  /** hold a source from this answer (or from a resume, when undefined) */
  hold(src: Source, first: Response | undefined): void;
}

/** What a membership change means for one watch. */
export interface MembershipChange {
  /** the new membership's names (every cluster of the fleet) */
  names: string[];
  /** clusters of the watch that left */
  left: string[];
  /** new clusters the watch's selectors choose */
  joined: Target[];
}

/** Compares the fleet now with what the watch knew (`names`, `chosen`); undefined when nothing changed. */
export function membershipChange(
  names: readonly string[],
  chosen: ReadonlySet<string>,
  now: readonly Target[],
  choose: (targets: readonly Target[]) => Target[],
): MembershipChange | undefined {
  const before = new Set(names);
  const after = new Set(now.map((t) => t.cluster));
  if (before.size === after.size && [...before].every((n) => after.has(n))) return undefined;
  return {
    names: [...after],
    left: [...chosen].filter((c) => !after.has(c)),
    joined: choose(now).filter((t) => !before.has(t.cluster)),
  };
}

/** Sets a joined cluster going by what its start answered (cf. startSource for the clusters at start). */
function startJoined(s: Start, o: FollowOptions): void {
  const src = s.src;
  if ('res' in s) {
    o.hold(src, s.res);
  } else if (s.status === 404 || s.status === 401 || s.status === 403) {
    o.emit(src.gone());
  } else if (src.listThenWatch && s.status >= 400 && s.status < 500) {
    // no WatchList there: its objects from a list, then its watch from the list's RV
    void src.listThenWatch(o.emit).then(() => o.hold(src, undefined));
  } else {
    // down as it joins: not waited for (its RV stays unknown); its objects come when it is back
    o.emit(src.gone());
    o.hold(src, undefined);
  }
}

/**
 * A member's endpoint says whether Karmada calls it Ready (not Ready: the client answers for it without
 * dialling, upstreams/endpoint.ts `notReady`), so a watch that holds the endpoint it started with would
 * keep failing a member that is Ready again, and never resume it. Each look hands the held targets the
 * endpoints of the fleet now.
 */
export function refreshEndpoints(held: ReadonlyMap<string, Target>, now: readonly Target[]): void {
  for (const t of now) {
    const h = held.get(t.cluster);
    if (h && h.endpoint !== t.endpoint) h.endpoint = t.endpoint;
  }
}

/** Follows the membership until `signal` aborts. */
export function followMembership(o: FollowOptions, signal: AbortSignal): void {
  let names = [...o.names];
  const chosen = new Set(o.ctx.plan.chosen.map((t) => t.cluster));
  // the targets this watch's sources hold, by cluster: they resume with the endpoint the fleet has now
  const held = new Map(o.ctx.plan.chosen.map((t) => [t.cluster, t] as const));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
  };
  signal.addEventListener('abort', stop, { once: true });

  const look = async () => {
    let now: Target[];
    try {
      now = await o.fleet(signal);
    } catch {
      // the control plane cannot be asked right now: the membership stands as it was
      return;
    }
    if (signal.aborted) return;
    refreshEndpoints(held, now);
    const change = membershipChange(names, chosen, now, (t) => o.ctx.plan.choose(t));
    if (!change) return;
    if (change.left.length) {
      o.emit(o.ctx.merger.relist(`cluster ${change.left.join(', ')} left the fleet: relist`));
      return;
    }
    if (o.grouped || (o.table && change.joined.length)) {
      o.emit(o.ctx.merger.relist("the fleet's clusters changed: relist"));
      return;
    }
    names = change.names;
    for (const t of change.joined) chosen.add(t.cluster);
    o.emit(
      o.ctx.merger.changeMembership(
        prepareMembership(names),
        change.joined.map((t) => t.cluster),
      ),
    );
    for (const t of change.joined) held.set(t.cluster, t);
    const sources = change.joined.map((t) => clusterSource(o.ctx, t, true));
    for (const s of await openAll(sources, signal)) startJoined(s, o);
  };
  const schedule = () => {
    if (signal.aborted) return;
    // a join whose start throws (the watch aborted meanwhile) must not become an unhandled rejection
    timer = setTimeout(
      () =>
        void look()
          .catch(() => {})
          .finally(schedule),
      o.everyMs,
    );
  };
  schedule();
}

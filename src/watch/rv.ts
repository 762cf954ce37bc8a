/**
 * A merged watch's resourceVersion so far: the last RV delivered from each cluster, the membership the
 * composite is encoded for, and the splicer that writes an object's composite with its own RV in it.
 */
import { decodeComposite, type Membership, type Splicer } from '../merge/rv/index.ts';
import { LiveComposite } from '../merge/rv/live.ts';

export class StreamRV {
  /** every cluster's entry, members of the composite's membership or not (clusters joining mid-watch) */
  private readonly rvs: Map<string, string>;
  /**
   * the composite's entries as its bytes (merge/rv/live.ts): an event's splicer is a pair of views around
   * its cluster's entry, not a walk of the membership whenever the event's cluster differs from the last's
   */
  private live: LiveComposite;

  constructor(
    rvs: Iterable<readonly [string, string]> | undefined,
    /** the membership the composite RVs are encoded for (changes when clusters join or leave mid-watch) */
    membership: Membership,
  ) {
    this.rvs = new Map(rvs);
    this.live = new LiveComposite(membership, this.rvs);
  }

  /**
   * made before the next change (a lazy bookmark's line: it says the RV of when it was offered), unless
   * the change comes with a step that supersedes it
   */
  private before: (() => void) | undefined;

  /** `make` runs before the RV next changes (see `set`), instead of any earlier one not run yet */
  hold(make: () => void): void {
    this.before = make;
  }

  /**
   * `cluster`'s entry becomes `rv`; `superseding`: the step under way has lines or a bookmark, so the
   * writer drops the bookmark held (nothing to make of it)
   */
  set(cluster: string, rv: string, superseding = false): void {
    if (this.rvs.get(cluster) === rv) return;
    const before = this.before;
    if (before) {
      this.before = undefined;
      if (!superseding) before();
    }
    this.rvs.set(cluster, rv);
    this.live.set(cluster, rv);
  }

  /** the RV to resume `cluster`'s upstream watch from ("" when nothing was seen) */
  get(cluster: string): string {
    return this.rvs.get(cluster) ?? '';
  }

  /** the composite of an object of `cluster` with its own RV `own` spliced in (compositeWith) */
  withOwn(cluster: string): Splicer {
    return this.live.splicer(cluster);
  }

  /**
   * How an event of `cluster` gets its RV: its own spliced in; with `keepPhaseStart` (initial events,
   * watchinitial.ts), the cluster's entry where its phase started, so that a client resuming from it gets
   * the snapshot again. Not for a WatchList's own initial events: client-go restarts a WatchList cut before
   * its initial-events-end bookmark from its last synced RV, never from one of them, and any WatchList
   * resumed gets every snapshot again; their own RV is what a client writing a cached object back sends as
   * its precondition (client-go 1.35's informers sync by WatchList).
   */
  writer(cluster: string, keepPhaseStart: boolean): Splicer {
    const withOwn = this.withOwn(cluster);
    return keepPhaseStart ? () => withOwn(this.get(cluster)) : withOwn;
  }

  /** the composite of everything delivered so far */
  encode(): string {
    return this.live.encode();
  }

  /** a composite of this membership read back (a relay group's events carry one) */
  decode(rv: string): ReturnType<typeof decodeComposite> {
    return decodeComposite(rv, this.live.membership);
  }

  /** the composites from now on are encoded for `next` */
  adopt(next: Membership): void {
    this.before?.();
    this.before = undefined;
    this.live = new LiveComposite(next, this.rvs);
  }
}

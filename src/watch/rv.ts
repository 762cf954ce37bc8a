/**
 * A merged watch's resourceVersion so far: the last RV delivered from each cluster, the membership the
 * composite is encoded for, and the splicer that writes an object's composite with its own RV in it.
 */
import {
  compositeWith,
  decodeComposite,
  encodeComposite,
  type Membership,
  type Splicer,
} from '../merge/rv/index.ts';

export class StreamRV {
  private readonly rvs: Map<string, string>;
  /**
   * The composite-RV splicer of the last cluster an object came from (compositeWith): valid until another
   * cluster's entry or the membership changes, so a burst of one cluster's events builds it once, not
   * once an event
   */
  private spliceCluster: string | undefined;
  private splice: Splicer | undefined;

  constructor(
    rvs: Iterable<readonly [string, string]> | undefined,
    /** the membership the composite RVs are encoded for (changes when clusters join or leave mid-watch) */
    private membership: Membership,
  ) {
    this.rvs = new Map(rvs);
  }

  /** `cluster`'s entry becomes `rv` (the splicer of any other cluster is stale then) */
  set(cluster: string, rv: string): void {
    if (this.rvs.get(cluster) === rv) return;
    this.rvs.set(cluster, rv);
    if (this.spliceCluster !== cluster) this.splice = undefined;
  }

  /** the RV to resume `cluster`'s upstream watch from ("" when nothing was seen) */
  get(cluster: string): string {
    return this.rvs.get(cluster) ?? '';
  }

  /** the composite of an object of `cluster` with its own RV `own` spliced in (compositeWith, cached) */
  withOwn(cluster: string): Splicer {
    if (this.splice === undefined || this.spliceCluster !== cluster) {
      this.splice = compositeWith(this.membership, this.rvs, cluster);
      this.spliceCluster = cluster;
    }
    return this.splice;
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
    return encodeComposite(this.membership, this.rvs);
  }

  /** a composite of this membership read back (a relay group's events carry one) */
  decode(rv: string): ReturnType<typeof decodeComposite> {
    return decodeComposite(rv, this.membership);
  }

  /** the composites from now on are encoded for `next` */
  adopt(next: Membership): void {
    this.membership = next;
    this.splice = undefined;
  }
}

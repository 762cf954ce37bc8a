/**
 * The merged watch, event by event: pure state and rewriting, no I/O (src/watch/route.ts does the I/O).
 *
 * Each cluster's watch events are rewritten into the fleet view (names, markers, rows under the merged
 * columns) and every object, and every bookmark, carries the composite RV of the stream so far: the last
 * RV delivered from each cluster. A client that resumes from any RV it was given therefore resumes each
 * cluster exactly where it stood: nothing missed, nothing replayed.
 *
 * WatchList (sendInitialEvents): the clusters' own "initial events end" bookmarks are held back; one fleet
 * bookmark with the annotation follows once every cluster has sent its initial events. A cluster whose
 * upstream watch breaks during its initial events restarts them (watchinitial.ts says what of the new
 * snapshot the client still needs).
 *
 * Bookmarks of the clusters are coalesced: each step carries at most the latest merged bookmark, which the
 * writer sends when the stream has been quiet for a while (an event written later makes it redundant), so
 * a fleet of N clusters costs one merged bookmark at a time, not N.
 */

import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { expired, type Status } from '../kube/status.ts';
import { toFleetObject } from '../merge/objects/index.ts';
import type { Membership } from '../merge/rv/index.ts';
import type { ColumnDefinition } from '../merge/table/index.ts';
import { RawWatchEvent, rawObject, rawStub, WatchLineWriter } from './bytes.ts';
import {
  bookmarkLine,
  INITIAL_EVENTS_END,
  JOINED_ANNOTATION,
  LazyLine,
  type MergeStep,
  RESUMED_ANNOTATION,
  rvOf,
  UNAVAILABLE_ANNOTATION,
  type WatchEvent,
  type WatchMergeOptions,
  watchLine,
} from './event.ts';
import { InitialPhase } from './initial.ts';
import { StreamRV } from './rv.ts';
import { fleetTableEvent, groupTableEvent } from './table.ts';

/** the merged watch's vocabulary (events, steps, options, annotations), for callers of the merger */
export * from './event.ts';

export class WatchMerger {
  /** the stream's composite RV so far */
  private readonly rv: StreamRV;
  /**
   * WatchList: the clusters whose initial events are not all in; the initial phases by cluster (or relay
   * group); what the client is told on the next bookmark it may get, by annotation (clusters unavailable,
   * back, joined). Each made at its first use: most merged watches never need one, and an idle watch
   * holds its merger for its whole life.
   */
  private pendingInit: Set<string> | undefined;
  private initial: Map<string, InitialPhase> | undefined;
  private notices: Map<string, string[]> | undefined;
  /** the membership adopted once every joining cluster's objects are in (see changeMembership) */
  private joining: { next: Membership; clusters: Set<string>; done: string[] } | undefined;
  private initSent = false;
  private tableHeaderSent = false;
  /** kind/apiVersion of the watched objects, for fleet bookmarks */
  private shape: { kind?: string; apiVersion?: string } = {};
  /** object events read from their bytes (watchbytes.ts) are written by this */
  private readonly lineWriter: WatchLineWriter;

  constructor(private readonly o: WatchMergeOptions) {
    this.rv = new StreamRV(o.rvs, o.membership);
    this.lineWriter = new WatchLineWriter(o.view);
    if (o.sendInitialEvents && o.clusters.length) this.pendingInit = new Set(o.clusters);
    if (!o.table && o.initialPhases?.length) {
      this.initial = new Map();
      for (const c of o.initialPhases) this.initial.set(c, new InitialPhase());
    }
  }

  private phaseOf(what: string): InitialPhase | undefined {
    return this.initial?.get(what);
  }

  /** True while `cluster`'s initial events are not all in: a break restarts them (restartInitial). */
  inInitial(cluster: string): boolean {
    return this.initial?.has(cluster) ?? false;
  }

  /** `cluster`'s upstream watch broke during its initial events: the next one starts them again. */
  restartInitial(cluster: string): void {
    this.phaseOf(cluster)?.restart();
  }

  /** `cluster`'s watch will not end its initial events with a bookmark (it does not support WatchList). */
  untrackInitial(cluster: string): void {
    this.initial?.delete(cluster);
  }

  /**
   * `what` (a cluster or group) cannot be held right now: the client is told in a bookmark annotated
   * with UNAVAILABLE_ANNOTATION, as soon as one can be made (the objects' kind known, initial events over).
   */
  unavailable(what: string): MergeStep {
    return this.notice(UNAVAILABLE_ANNOTATION, what);
  }

  /** `what`, told unavailable, delivers again: the client is told as for `unavailable`. */
  resumed(what: string): MergeStep {
    return this.notice(RESUMED_ANNOTATION, what);
  }

  private notice(annotation: string, what: string): MergeStep {
    return { kind: 'emit', lines: this.queue(annotation, what) ? this.takeNotices() : [] };
  }

  private queue(annotation: string, what: string): number {
    this.notices ??= new Map();
    return this.notices.set(annotation, [...(this.notices.get(annotation) ?? []), what]).size;
  }

  /**
   * The fleet's membership changed mid-watch to `next`; `joined` are the clusters of this watch that are
   * new (their objects are about to stream as initial events, ending in an initial-events-end bookmark,
   * or from a list: `initialFromList`). Until every joined cluster's objects are in, the stream keeps
   * encoding for the old membership: a client that resumes from an RV of that span gets a 410 and
   * relists, instead of resuming a joined cluster from the middle of its initial events (which are in key
   * order, not RV order, and would lose objects). Then `next` is adopted, with a bookmark saying so.
   */
  changeMembership(next: Membership, joined: readonly string[]): MergeStep {
    for (const c of joined) {
      this.rv.set(c, '');
      this.initial ??= new Map();
      this.initial.set(c, new InitialPhase());
      // a WatchList client still in its initial phase waits for the joined cluster too
      if (this.o.sendInitialEvents && !this.initSent) {
        this.pendingInit ??= new Set();
        this.pendingInit.add(c);
      }
    }
    // a change while clusters still join: they are waited for too
    const j = this.joining;
    this.joining = { next, clusters: new Set([...(j?.clusters ?? []), ...joined]), done: j?.done ?? [] };
    return { kind: 'emit', lines: this.joinEnded(undefined) };
  }

  /** `cluster` (undefined: none) has sent its objects: adopt the new membership once every joined one has */
  private joinEnded(cluster: string | undefined): string[] {
    const j = this.joining;
    if (!j) return [];
    if (cluster !== undefined) {
      if (!j.clusters.delete(cluster)) return [];
      j.done.push(cluster);
    }
    if (j.clusters.size > 0) return [];
    this.joining = undefined;
    this.rv.adopt(j.next);
    if (j.done.length) this.queue(JOINED_ANNOTATION, j.done.join(', '));
    const lines = this.takeNotices();
    // a fresh RV of the new membership, so the client's next resume decodes
    if (!lines.length && this.o.allowBookmarks && this.heartbeat() !== undefined)
      lines.push(this.bookmark(false));
    return lines;
  }

  /** The stream's last event: a 410 Expired ERROR (`why`), after which every client relists. */
  relist(why: string): MergeStep {
    return { kind: 'expired', line: watchLine('ERROR', expired(why)) };
  }

  /** The composite RV of everything delivered so far. */
  resourceVersion(): string {
    return this.rv.encode();
  }

  /** The RV to resume `cluster`'s upstream watch from ("" when nothing was seen). */
  clusterRV(cluster: string): string {
    return this.rv.get(cluster);
  }

  /** A cluster that will send no initial events (down, not serving the resource): stop waiting for it. */
  clusterGone(cluster: string): MergeStep {
    this.pendingInit?.delete(cluster);
    return {
      kind: 'emit',
      lines: [...this.maybeInitEnd(), ...this.joinEnded(cluster), ...this.takeNotices()],
    };
  }

  /**
   * A cluster served WatchList by list-then-watch (it does not support sendInitialEvents): its initial
   * events came from a list at `rv`.
   */
  initialFromList(cluster: string, rv: string): MergeStep {
    if (rv) this.rv.set(cluster, rv);
    this.initial?.delete(cluster);
    return this.clusterGone(cluster);
  }

  /** One upstream event of `cluster`. */
  onEvent(cluster: string, ev: WatchEvent): MergeStep {
    const step = ev instanceof RawWatchEvent && !this.o.table ? this.rawEvent(cluster, ev) : undefined;
    if (step) return step;
    const obj = ev.object ?? {};
    if (ev.type === 'ERROR') {
      const status = obj as Status;
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone')
        return this.relist(`cluster ${cluster}: ${status.message ?? 'resource version too old'}`);
      // any other ERROR ends this cluster's stream; the caller resumes it
      return { kind: 'emit', lines: [] };
    }
    const rv = rvOf(obj);
    if (obj.kind && obj.kind !== 'Table') this.shape = { kind: obj.kind, apiVersion: obj.apiVersion };
    if (ev.type === 'BOOKMARK') return this.clusterBookmark(cluster, obj, rv);
    let type = ev.type;
    const phase = this.phaseOf(cluster);
    if (phase) {
      const verdict = phase.event(type, obj);
      if (!verdict.send) return { kind: 'emit', lines: this.takeNotices() };
      type = verdict.type;
    } else if (rv) this.rv.set(cluster, rv, true);
    return { kind: 'emit', lines: [...this.takeNotices(), this.objectLine(cluster, type, obj, !!phase)] };
  }

  /**
   * An object event read from its bytes, merged as by parsing; undefined (nothing changed): parse it. The
   * line is written before any state changes, so a fallback never records an event twice.
   */
  private rawEvent(cluster: string, ev: RawWatchEvent): MergeStep | undefined {
    const type = ev.type;
    const o = type === 'ERROR' || type === 'BOOKMARK' ? undefined : rawObject(ev, this.shape);
    if (!o) return undefined;
    this.shape = o.shape;
    const phase = this.phaseOf(cluster);
    const rvFor = this.rv.writer(cluster, !!phase && !(this.o.sendInitialEvents && !this.initSent));
    let line = this.lineWriter.line(ev, cluster, type, rvFor);
    if (!line) return undefined;
    if (phase) {
      const stub = rawStub(ev, o);
      if (!stub) return undefined;
      const verdict = phase.event(type, stub);
      if (!verdict.send) return { kind: 'emit', lines: this.takeNotices() };
      // the same object written again (it was just written: it is one the byte path writes)
      if (verdict.type !== type) line = this.lineWriter.line(ev, cluster, verdict.type, rvFor)!;
    } else if (o.rv) this.rv.set(cluster, o.rv, true);
    return { kind: 'emit', lines: this.notices ? [...this.takeNotices(), line] : [line] };
  }

  private clusterBookmark(cluster: string, obj: Record<string, any>, rv: string | undefined): MergeStep {
    const initialEnd = obj.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true';
    // while some cluster still sends initial events, the only bookmark allowed is the final one
    const offers = !initialEnd && this.o.allowBookmarks && !(this.o.sendInitialEvents && !this.initSent);
    if (rv) this.rv.set(cluster, rv, offers);
    if (initialEnd) {
      // the cluster's snapshot is complete: what a restarted one no longer holds goes as DELETED
      const gone = this.phaseOf(cluster)?.end() ?? [];
      this.initial?.delete(cluster);
      const lines = gone.map((stub) => {
        // deleted somewhere between the snapshots: at the latest by the new snapshot's RV
        if (rv) stub.metadata.resourceVersion = rv;
        return this.objectLine(cluster, 'DELETED', stub);
      });
      if (this.pendingInit?.has(cluster)) {
        this.pendingInit.delete(cluster);
        lines.push(...this.maybeInitEnd());
      }
      lines.push(...this.joinEnded(cluster), ...this.takeNotices());
      return { kind: 'emit', lines };
    }
    if (!offers) return { kind: 'emit', lines: this.takeNotices() };
    return { kind: 'emit', lines: this.takeNotices(), bookmark: this.offered() };
  }

  /**
   * The merged bookmark offered for coalescing, made only if the writer sends it: at the RV of now, which
   * it still is when made (the stream's RV changes only with a step that supersedes it, or makes it first)
   */
  private offered(): LazyLine {
    const shape = this.shape;
    const line = new LazyLine(() =>
      bookmarkLine(this.rv.encode(), this.o.table ? undefined : shape, false, undefined),
    );
    this.rv.hold(() => line.toString());
    return line;
  }

  /** One object event of `cluster` in the fleet view, with the stream's RV (`initial`: see watchinitial.ts). */
  private objectLine(cluster: string, type: string, obj: Record<string, any>, initial = false): string {
    const rvFor = this.rv.writer(cluster, initial && !(this.o.sendInitialEvents && !this.initSent));
    if (this.o.table && obj.kind === 'Table') {
      const at = this.o.clusters.indexOf(cluster);
      // a cluster's first Table carries its columns: known at once, whatever its probe does
      if (Array.isArray(obj.columnDefinitions)) this.o.table.learn(at, obj.columnDefinitions);
      const rv = this.resourceVersion();
      const add = this.o.tableRow;
      const rows = add && Array.isArray(obj.rows) ? obj.rows.map((r: any) => add(r, cluster)) : undefined;
      const out = fleetTableEvent(
        this.o.view,
        rows ? { ...obj, rows } : obj,
        this.o.table.header(),
        at,
        cluster,
        rvFor,
        rv,
        !this.tableHeaderSent,
      );
      this.tableHeaderSent = true;
      return watchLine(type, out);
    }
    toFleetObject(this.o.view, obj, cluster, rvFor);
    return watchLine(type, obj);
  }

  /**
   * One event of a group's merged watch (a fleet relay invocation watching some of the clusters): the
   * object is already in the fleet view; its composite RV carries the group's clusters' progress, which
   * is taken into this stream's, and the event goes on with this stream's composite. `columns` are the
   * group's own Table columns (from its first event), mapped onto this stream's by name.
   */
  onGroupEvent(
    clusters: readonly string[],
    ev: WatchEvent,
    columns?: readonly ColumnDefinition[],
  ): MergeStep {
    const obj = ev.object ?? {};
    if (ev.type === 'ERROR') {
      const status = obj as Status;
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone')
        return { kind: 'expired', line: watchLine('ERROR', obj) };
      return { kind: 'emit', lines: [] };
    }
    const rv = rvOf(obj);
    const d = rv ? this.rv.decode(rv) : undefined;
    if (d?.ok)
      for (const c of clusters) {
        const own = d.rvs.get(c);
        if (own) this.rv.set(c, own);
      }
    if (obj.kind && obj.kind !== 'Table') this.shape = { kind: obj.kind, apiVersion: obj.apiVersion };
    const group = clusters.join(',');
    if (ev.type === 'BOOKMARK') {
      if (obj.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
        const gone = this.phaseOf(group)?.end() ?? [];
        this.initial?.delete(group);
        const lines = gone.map((stub) => {
          stub.metadata.resourceVersion = this.resourceVersion();
          return watchLine('DELETED', stub);
        });
        for (const c of clusters) this.pendingInit?.delete(c);
        return { kind: 'emit', lines: [...lines, ...this.maybeInitEnd(), ...this.takeNotices()] };
      }
      // a group's own notices pass on as they came (the group's bookmark carries them)
      let passed = false;
      for (const a of [UNAVAILABLE_ANNOTATION, RESUMED_ANNOTATION, JOINED_ANNOTATION]) {
        const v = obj.metadata?.annotations?.[a];
        if (typeof v === 'string') passed = !!this.queue(a, v);
      }
      if (passed) return { kind: 'emit', lines: this.takeNotices() };
      if (!this.o.allowBookmarks || (this.o.sendInitialEvents && !this.initSent))
        return { kind: 'emit', lines: this.takeNotices() };
      return { kind: 'emit', lines: this.takeNotices(), bookmark: this.bookmark(false) };
    }
    let type = ev.type;
    const phase = this.phaseOf(group);
    if (phase && obj.kind !== 'Table') {
      // the object's own RV, from the group's composite (the entry of the cluster it belongs to)
      const own = d?.ok ? d.rvs.get(obj.metadata?.labels?.[CLUSTER_LABEL]) : undefined;
      const verdict = phase.event(type, obj, own);
      if (!verdict.send) return { kind: 'emit', lines: this.takeNotices() };
      type = verdict.type;
    }
    const current = this.resourceVersion();
    if (this.o.table && obj.kind === 'Table') {
      const out = groupTableEvent(obj, this.o.table.header(columns), columns, current, !this.tableHeaderSent);
      this.tableHeaderSent = true;
      return { kind: 'emit', lines: [...this.takeNotices(), watchLine(type, out)] };
    }
    if (obj.metadata) obj.metadata.resourceVersion = current;
    return { kind: 'emit', lines: [...this.takeNotices(), watchLine(type, obj)] };
  }

  /**
   * A bookmark with the stream's current RV, for an idle stream (undefined while the objects' kind is
   * unknown, or during WatchList's initial events, where the only bookmark allowed is the final one).
   */
  heartbeat(): string | undefined {
    if (this.o.sendInitialEvents && !this.initSent) return undefined;
    if (!this.o.table && !this.shape.kind) return undefined;
    return this.bookmark(false);
  }

  private maybeInitEnd(): string[] {
    if (!this.o.sendInitialEvents || this.initSent || (this.pendingInit?.size ?? 0) > 0) return [];
    this.initSent = true;
    return [this.bookmark(true)];
  }

  /**
   * The pending notices as one bookmark line, once a bookmark may be sent (kind known, initial events
   * over). Only to a client that asked for bookmarks: kubectl get -w prints every event it gets (a
   * bookmark would be a bogus row, or an object with -o json), so a client that did not ask for bookmarks
   * learns of unavailable clusters from the Warning headers at start only.
   */
  private takeNotices(): string[] {
    const notices = this.notices;
    if (!notices) return [];
    if (!this.o.allowBookmarks) {
      this.notices = undefined;
      return [];
    }
    if (this.o.sendInitialEvents && !this.initSent) return [];
    if (!this.o.table && !this.shape.kind) return [];
    const annotations: Record<string, string> = {};
    for (const [k, v] of notices) annotations[k] = v.join('; ');
    this.notices = undefined;
    return [this.bookmark(false, annotations)];
  }

  private bookmark(initialEnd: boolean, annotations?: Record<string, string>): string {
    return bookmarkLine(this.rv.encode(), this.o.table ? undefined : this.shape, initialEnd, annotations);
  }
}

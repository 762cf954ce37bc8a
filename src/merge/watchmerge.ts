/**
 * The merged watch, event by event: pure state and rewriting, no I/O (src/routes/watch.ts does the I/O).
 *
 * Each cluster's watch events are rewritten into the fleet view (names, markers, rows under the merged
 * columns) and every object, and every bookmark, carries the composite RV of the stream so far: the last
 * RV delivered from each cluster. A client that resumes from any RV it was given therefore resumes each
 * cluster exactly where it stood: nothing missed, nothing replayed.
 *
 * WatchList (sendInitialEvents): the clusters' own "initial events end" bookmarks are held back; one fleet
 * bookmark with the annotation follows once every cluster has sent its initial events.
 */

import { expired, type Status } from '../kube/status.ts';
import { type FleetView, toFleetObject } from './objects.ts';
import { compositeWith, decodeComposite, encodeComposite, type Membership } from './rv.ts';
import { type ColumnDefinition, type MergedColumns, toFleetRow } from './table.ts';

export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR' | string;
  object: Record<string, any>;
}

export interface WatchMergeOptions {
  view: FleetView;
  membership: Membership;
  /** RV per cluster the stream starts from ("" = unknown yet) */
  rvs: Map<string, string>;
  /** clusters of this watch, in fleet order (index = input index of `table`) */
  clusters: string[];
  /** Table watch: merged columns, indexed like `clusters` */
  table?: MergedColumns;
  allowBookmarks: boolean;
  /** WatchList: hold per-cluster initial-events-end bookmarks until all are in */
  sendInitialEvents: boolean;
}

export type MergeStep =
  | { kind: 'emit'; lines: string[] }
  /** a 410 from a cluster: the client must relist; this ERROR line is the stream's last */
  | { kind: 'expired'; line: string };

export class WatchMerger {
  private readonly rvs: Map<string, string>;
  private readonly pendingInit: Set<string>;
  private initSent = false;
  private tableHeaderSent = false;
  /** kind/apiVersion of the watched objects, for fleet bookmarks */
  private shape: { kind?: string; apiVersion?: string } = {};

  constructor(private readonly o: WatchMergeOptions) {
    this.rvs = new Map(o.rvs);
    this.pendingInit = new Set(o.sendInitialEvents ? o.clusters : []);
  }

  /** The composite RV of everything delivered so far. */
  resourceVersion(): string {
    return encodeComposite(this.o.membership, this.rvs);
  }

  /** The RV to resume `cluster`'s upstream watch from ("" when nothing was seen). */
  clusterRV(cluster: string): string {
    return this.rvs.get(cluster) ?? '';
  }

  /** A cluster that will send no initial events (down, not serving the resource): stop waiting for it. */
  clusterGone(cluster: string): MergeStep {
    this.pendingInit.delete(cluster);
    return { kind: 'emit', lines: this.maybeInitEnd() };
  }

  /**
   * A cluster served WatchList by list-then-watch (it does not support sendInitialEvents): its initial
   * events came from a list at `rv`.
   */
  initialFromList(cluster: string, rv: string): MergeStep {
    if (rv) this.rvs.set(cluster, rv);
    return this.clusterGone(cluster);
  }

  /** One upstream event of `cluster`. */
  onEvent(cluster: string, ev: WatchEvent): MergeStep {
    const obj = ev.object ?? {};
    if (ev.type === 'ERROR') {
      const status = obj as Status;
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone')
        return {
          kind: 'expired',
          line: this.line('ERROR', {
            ...expired(`cluster ${cluster}: ${status.message ?? 'resource version too old'}`),
          }),
        };
      // any other ERROR ends this cluster's stream; the caller resumes it
      return { kind: 'emit', lines: [] };
    }
    const rv: string | undefined = obj.metadata?.resourceVersion;
    if (obj.kind && obj.kind !== 'Table') this.shape = { kind: obj.kind, apiVersion: obj.apiVersion };
    if (ev.type === 'BOOKMARK') {
      if (rv) this.rvs.set(cluster, rv);
      if (obj.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true' && this.pendingInit.has(cluster)) {
        this.pendingInit.delete(cluster);
        return { kind: 'emit', lines: this.maybeInitEnd() };
      }
      // while some cluster still sends initial events, the only bookmark allowed is the final one
      if (!this.o.allowBookmarks || (this.o.sendInitialEvents && !this.initSent))
        return { kind: 'emit', lines: [] };
      return { kind: 'emit', lines: [this.bookmark(false)] };
    }
    if (rv) this.rvs.set(cluster, rv);
    const rvFor = compositeWith(this.o.membership, this.rvs, cluster);
    if (this.o.table && obj.kind === 'Table') {
      const at = this.o.clusters.indexOf(cluster);
      const rows = Array.isArray(obj.rows) ? obj.rows : [];
      const out = {
        kind: 'Table',
        apiVersion: obj.apiVersion ?? 'meta.k8s.io/v1',
        metadata: { resourceVersion: this.resourceVersion() },
        columnDefinitions: this.tableHeaderSent ? null : this.o.table.columns,
        rows: rows.map((r: Record<string, unknown>) =>
          toFleetRow(this.o.view, r, this.o.table!, at, cluster, rvFor),
        ),
      };
      this.tableHeaderSent = true;
      return { kind: 'emit', lines: [this.line(ev.type, out)] };
    }
    toFleetObject(this.o.view, obj, cluster, rvFor);
    return { kind: 'emit', lines: [this.line(ev.type, obj)] };
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
        return { kind: 'expired', line: this.line('ERROR', obj) };
      return { kind: 'emit', lines: [] };
    }
    const rv: string | undefined = obj.metadata?.resourceVersion;
    if (rv) {
      const d = decodeComposite(rv, this.o.membership);
      if (d.ok)
        for (const c of clusters) {
          const own = d.rvs.get(c);
          if (own) this.rvs.set(c, own);
        }
    }
    if (obj.kind && obj.kind !== 'Table') this.shape = { kind: obj.kind, apiVersion: obj.apiVersion };
    if (ev.type === 'BOOKMARK') {
      if (obj.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
        for (const c of clusters) this.pendingInit.delete(c);
        return { kind: 'emit', lines: this.maybeInitEnd() };
      }
      if (!this.o.allowBookmarks || (this.o.sendInitialEvents && !this.initSent))
        return { kind: 'emit', lines: [] };
      return { kind: 'emit', lines: [this.bookmark(false)] };
    }
    const current = this.resourceVersion();
    if (this.o.table && obj.kind === 'Table') {
      const from = new Map((columns ?? []).map((c, i) => [c.name, i]));
      const rows = (Array.isArray(obj.rows) ? obj.rows : []).map((r: { cells?: unknown[]; object?: any }) => {
        const cells = this.o.table!.columns.map((c) => {
          const at = from.get(c.name);
          return at === undefined ? '' : r.cells?.[at];
        });
        if (r.object?.metadata?.resourceVersion) r.object.metadata.resourceVersion = current;
        return { ...r, cells };
      });
      const out = {
        kind: 'Table',
        apiVersion: obj.apiVersion ?? 'meta.k8s.io/v1',
        metadata: { resourceVersion: current },
        columnDefinitions: this.tableHeaderSent ? null : this.o.table.columns,
        rows,
      };
      this.tableHeaderSent = true;
      return { kind: 'emit', lines: [this.line(ev.type, out)] };
    }
    if (obj.metadata) obj.metadata.resourceVersion = current;
    return { kind: 'emit', lines: [this.line(ev.type, obj)] };
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
    if (!this.o.sendInitialEvents || this.initSent || this.pendingInit.size > 0) return [];
    this.initSent = true;
    return [this.bookmark(true)];
  }

  private bookmark(initialEnd: boolean): string {
    const metadata: Record<string, unknown> = { resourceVersion: this.resourceVersion() };
    if (initialEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    const obj = this.o.table
      ? { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata, columnDefinitions: null, rows: [] }
      : { kind: this.shape.kind, apiVersion: this.shape.apiVersion, metadata };
    return this.line('BOOKMARK', obj);
  }

  private line(type: string, object: unknown): string {
    return `${JSON.stringify({ type, object })}\n`;
  }
}

/**
 * The merged watch's vocabulary (watchmerge.ts merges, watchbytes.ts reads events from their bytes): the
 * events, the merger's options and what each step hands the writer, the annotations of fleet bookmarks.
 */

import type { FleetView } from '../merge/objects/index.ts';
import type { Membership } from '../merge/rv/index.ts';
import type { WatchColumns } from './columns.ts';

export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** on a fleet bookmark: a cluster whose watch the fleet cannot hold right now, and why */
export const UNAVAILABLE_ANNOTATION = 'fleet.karmada.io/watch-unavailable';
/** on a fleet bookmark: a cluster told unavailable whose watch delivers again */
export const RESUMED_ANNOTATION = 'fleet.karmada.io/watch-resumed';
/** on a fleet bookmark: clusters that joined the fleet mid-watch and whose objects have all been sent as ADDED */
export const JOINED_ANNOTATION = 'fleet.karmada.io/watch-joined';

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
  /** Table watch: merged columns, indexed like `clusters`, learned as the stream runs (columns.ts) */
  table?: WatchColumns;
  /** a cluster's Table row as the fleet adds to it before merging (propagation cells, watch/propagation.ts) */
  tableRow?: (row: Record<string, any>, cluster: string) => Record<string, any>;
  allowBookmarks: boolean;
  /** WatchList: hold per-cluster initial-events-end bookmarks until all are in */
  sendInitialEvents: boolean;
  /**
   * clusters whose upstream watch starts with initial events ending in an `initial-events-end` bookmark:
   * a break before it restarts their initial phase instead of resuming (not for Table watches); a relay
   * group is named by its clusters joined with ','
   */
  initialPhases?: readonly string[];
}

/** One merged line: text, or bytes already encoded (object events written from their bytes, watchbytes.ts) */
export type WatchLine = string | Uint8Array;

export type MergeStep =
  /**
   * `bookmark`: a merged bookmark the writer may send later, unless an event written after it supersedes
   * it; its line is made when sent (String(bookmark)): most are superseded, and each is O(clusters)
   */
  | { kind: 'emit'; lines: WatchLine[]; bookmark?: string | LazyLine }
  /** a 410 from a cluster: the client must relist; this ERROR line is the stream's last */
  | { kind: 'expired'; line: string };

/** a line made when first read (String(line)), once */
export class LazyLine {
  private line: string | undefined;

  constructor(private make: (() => string) | undefined) {}

  toString(): string {
    if (this.line === undefined) {
      this.line = this.make!();
      this.make = undefined;
    }
    return this.line;
  }
}

/** an object's own RV: a string, or none (an upstream's number or object is not tracked: no client could hand it back) */
export const rvOf = (obj: Record<string, any>): string | undefined =>
  typeof obj.metadata?.resourceVersion === 'string' ? obj.metadata.resourceVersion : undefined;

/** one line of a watch stream (JSON watch framing: an object per line) */
export const watchLine = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;

/**
 * A merged bookmark at `rv`: of the watched kind (`shape`), or an empty Table's (`shape` undefined, a
 * Table watch); `initialEnd` marks WatchList's end of initial events, `annotations` the notices it carries.
 */
export function bookmarkLine(
  rv: string,
  shape: { kind?: string; apiVersion?: string } | undefined,
  initialEnd: boolean,
  annotations?: Record<string, string>,
): string {
  const metadata: Record<string, unknown> = { resourceVersion: rv };
  if (initialEnd || annotations)
    metadata.annotations = { ...(initialEnd ? { [INITIAL_EVENTS_END]: 'true' } : {}), ...annotations };
  const object = shape
    ? { kind: shape.kind, apiVersion: shape.apiVersion, metadata }
    : { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata, columnDefinitions: null, rows: [] };
  return watchLine('BOOKMARK', object);
}

/**
 * A Table watch's merged columns, learned while the stream runs: from each cluster's one-row probe
 * (start.ts probeColumns, no longer awaited before the head) and from its own watch's first Table event,
 * which carries its columnDefinitions as kube sends them. The header is fixed when the stream's first
 * Table goes out (kubectl prints a new header whenever the definitions change); a cluster whose columns
 * were not known by then has its rows shown under the others' columns (mergeProbed) until they are, then
 * mapped onto the fixed header by name: one header, the same columns on every row.
 */
import {
  CLUSTER_COLUMN,
  type ColumnDefinition,
  type MergedColumns,
  mergeColumns,
} from '../merge/table/index.ts';

export class WatchColumns {
  /** by cluster (the merger's `clusters` order): its columns with the fleet's extra ones, once known */
  private readonly known: Array<readonly ColumnDefinition[] | undefined>;
  private fixed: MergedColumns | undefined;

  constructor(
    clusters: number,
    /** columns the fleet appends to every cluster's own (propagation, watch/propagation.ts) */
    private readonly extra: readonly ColumnDefinition[] = [],
  ) {
    this.known = new Array(clusters).fill(undefined);
  }

  /** cluster `at` prints `own` (its probe's or its watch's columnDefinitions, without the fleet's extra) */
  learn(at: number, own: readonly ColumnDefinition[]): void {
    if (at < 0 || at >= this.known.length) return;
    const cols = this.extra.length ? [...own, ...this.extra] : own;
    const was = this.known[at];
    if (was && sameNames(was, cols)) return;
    this.known[at] = cols;
    const f = this.fixed;
    if (!f) return;
    // the header is out: this cluster's cells are mapped onto it by name
    const one = mergeColumns([cols]);
    const idx = new Map(cols.map((c, i) => [c.name, i]));
    f.maps[at] = f.columns.map((c, i) => (i === f.clusterIndex ? -1 : (idx.get(c.name) ?? -1)));
    f.nameIndex[at] = one.nameIndex[0]!;
  }

  /** whether cluster `at`'s columns are known */
  has(at: number): boolean {
    return !!this.known[at];
  }

  /**
   * The stream's columns, fixed at the first call. `group`: a relay group's own merged columns (its first
   * event's), taken in when they are the first the stream knows.
   */
  header(group?: readonly ColumnDefinition[]): MergedColumns {
    if (this.fixed) return this.fixed;
    const own = group?.filter((c) => c.name !== CLUSTER_COLUMN.name);
    const fixed = mergeProbed(own && !this.known.some((c) => c) ? [...this.known, own] : this.known);
    this.fixed = fixed;
    return fixed;
  }
}

function sameNames(a: readonly ColumnDefinition[], b: readonly ColumnDefinition[]): boolean {
  return a.length === b.length && a.every((c, i) => c.name === b[i]!.name);
}

/**
 * The merged columns of a Table watch from each cluster's probe (`undefined`: its probe failed). A
 * cluster whose probe failed is taken to have the columns the others have (the same resource: the same
 * printer), so its rows are shown under them; mapped by nothing, they would show only the Cluster cell.
 */
export function mergeProbed(cols: ReadonlyArray<readonly ColumnDefinition[] | undefined>): MergedColumns {
  const merged = mergeColumns(cols);
  if (cols.every((c) => c)) return merged;
  const standIn = merged.columns.filter((c) => c !== CLUSTER_COLUMN);
  return standIn.length ? mergeColumns(cols.map((c) => c ?? standIn)) : merged;
}

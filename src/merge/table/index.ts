/**
 * Merging server-side Tables (meta.k8s.io/v1 Table) from several clusters into one.
 *
 * Columns are aligned by name: clusters of different Kubernetes versions may print different columns
 * (version skew), so the merged set is the union, each new column placed after its predecessor in the
 * cluster that has it. A `Cluster` column follows the name column. Rows keep their cells under the merged
 * columns; a cell a cluster does not print is empty.
 */
import { type FleetView, fleetName, toFleetObject } from '../objects/index.ts';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export const CLUSTER_COLUMN: ColumnDefinition = {
  name: 'Cluster',
  type: 'string',
  format: '',
  description: 'The cluster of the fleet the object lives in (label fleet.karmada.io/cluster).',
  priority: 0,
};

export interface MergedColumns {
  columns: ColumnDefinition[];
  /** per input cluster (same order as given): for each merged column, the source column index, or -1 */
  maps: number[][];
  /** per input cluster: index of its name column (format "name", else the column called Name), or -1 */
  nameIndex: number[];
  /** index of the Cluster column in `columns` */
  clusterIndex: number;
  /** per merged column: how its cells print a reference (shown with the fleet name), if they do */
  refs: Array<ReferenceCell | undefined>;
}

/**
 * How a printed column names another object of the row's cluster (the printers of kube-apiserver's
 * pkg/printers/internalversion): the cell shown with the fleet name, like the field it prints
 * (references.ts). `name`: the name alone; `kind/name`: events' Object (`pod/web-1`); `ns/name`: a PV's
 * Claim. Empty cells and `<none>` stay.
 */
export type ReferenceCell = 'name' | 'kind/name' | 'ns/name';

const REFERENCE_COLUMNS: ReadonlyMap<string, ReferenceCell> = new Map([
  ['Node', 'name'], // pods (spec.nodeName), VolumeAttachments (spec.nodeName)
  ['Nominated Node', 'name'], // pods (status.nominatedNodeName)
  ['Volume', 'name'], // PVCs (spec.volumeName)
  ['PV', 'name'], // VolumeAttachments (spec.source.persistentVolumeName)
  ['Object', 'kind/name'], // events (involvedObject / regarding)
  ['Claim', 'ns/name'], // PVs (spec.claimRef)
]);

/** A reference cell's text with its name part shown as `view` shows names of `cluster`. */
export function fleetReferenceCell(
  view: FleetView,
  form: ReferenceCell,
  v: unknown,
  cluster: string,
): unknown {
  if (typeof v !== 'string' || v === '' || v === '<none>') return v;
  if (form === 'name') return fleetName(view, v, cluster);
  const at = v.indexOf('/');
  if (at < 0 || at === v.length - 1) return v;
  return v.slice(0, at + 1) + fleetName(view, v.slice(at + 1), cluster);
}

function nameColumn(cols: readonly ColumnDefinition[]): number {
  const byFormat = cols.findIndex((c) => c.format === 'name');
  return byFormat >= 0 ? byFormat : cols.findIndex((c) => c.name === 'Name');
}

/** Merges the columnDefinitions of several clusters (absent/null = that cluster sent none). */
export function mergeColumns(
  perCluster: ReadonlyArray<readonly ColumnDefinition[] | null | undefined>,
): MergedColumns {
  const merged: ColumnDefinition[] = [];
  for (const cols of perCluster) {
    if (!cols) continue;
    let prev: string | undefined;
    for (const col of cols) {
      if (!merged.some((c) => c.name === col.name)) {
        // after its predecessor in this cluster's order; first when it has none
        const pos = prev === undefined ? 0 : merged.findIndex((c) => c.name === prev) + 1;
        merged.splice(pos, 0, col);
      }
      prev = col.name;
    }
  }
  // the Cluster column right after the name column (or first when there is none)
  const nameAt = nameColumn(merged);
  const clusterIndex = nameAt + 1;
  const columns = [...merged.slice(0, clusterIndex), CLUSTER_COLUMN, ...merged.slice(clusterIndex)];
  const maps = perCluster.map((cols) => {
    const idx = new Map<string, number>((cols ?? []).map((c, i) => [c.name, i]));
    return columns.map((c, i) => (i === clusterIndex ? -1 : (idx.get(c.name) ?? -1)));
  });
  const refs = columns.map((c, i) =>
    i === clusterIndex || c.type !== 'string' ? undefined : REFERENCE_COLUMNS.get(c.name),
  );
  return {
    columns,
    maps,
    nameIndex: perCluster.map((cols) => (cols ? nameColumn(cols) : -1)),
    clusterIndex,
    refs,
  };
}

type Row = { cells?: unknown[]; object?: unknown; conditions?: unknown; [k: string]: unknown };

/**
 * One Table row for the fleet view: cells re-ordered under the merged columns, the name cell and the
 * reference cells shown with fleet names, the Cluster cell filled, and `row.object` (PartialObjectMetadata or the object itself,
 * per includeObject) rewritten like any object.
 */
export function toFleetRow(
  view: FleetView,
  row: Row,
  merged: MergedColumns,
  input: number,
  cluster: string,
  resourceVersion?: (own: string) => string,
): Row {
  const src = Array.isArray(row.cells) ? row.cells : [];
  const map = merged.maps[input]!;
  const nameAt = merged.nameIndex[input]!;
  const cells = map.map((from, i) => {
    if (i === merged.clusterIndex) return cluster;
    if (from < 0) return '';
    const v = src[from];
    if (from === nameAt) return typeof v === 'string' && v !== '' ? fleetName(view, v, cluster) : v;
    const ref = merged.refs[i];
    return ref ? fleetReferenceCell(view, ref, v, cluster) : v;
  });
  const out: Row = { ...row, cells };
  if (row.object && typeof row.object === 'object')
    out.object = toFleetObject(view, row.object as Record<string, any>, cluster, resourceVersion);
  return out;
}

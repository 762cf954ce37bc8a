/**
 * Table watch events in the fleet view (WatchMerger, watchmerge.ts): a cluster's, or a relay group's
 * already merged one, as one Table with its rows under the stream's merged columns. The column
 * definitions go in the stream's first Table only (`header`), as kube sends them.
 */
import type { FleetView } from '../merge/objects/index.ts';
import { type ColumnDefinition, type MergedColumns, toFleetRow } from '../merge/table/index.ts';

type Obj = Record<string, any>;

/** `cluster`'s Table event `obj` (`at`: its index in `table`'s inputs), with the stream's RV `rv` */
export function fleetTableEvent(
  view: FleetView,
  obj: Obj,
  table: MergedColumns,
  at: number,
  cluster: string,
  rvFor: (own: string) => string,
  rv: string,
  header: boolean,
): Obj {
  const rows = Array.isArray(obj.rows) ? obj.rows : [];
  return {
    kind: 'Table',
    apiVersion: obj.apiVersion ?? 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv },
    columnDefinitions: header ? table.columns : null,
    rows: rows.map((r: Obj) => toFleetRow(view, r, table, at, cluster, rvFor)),
  };
}

/** a relay group's Table event `obj` (its rows under the group's `columns`), with the stream's RV `current` */
export function groupTableEvent(
  obj: Obj,
  table: MergedColumns,
  columns: readonly ColumnDefinition[] | undefined,
  current: string,
  header: boolean,
): Obj {
  const from = new Map((columns ?? []).map((c, i) => [c.name, i]));
  const rows = (Array.isArray(obj.rows) ? obj.rows : []).map((r: { cells?: unknown[]; object?: any }) => {
    const cells = table.columns.map((c) => {
      const at = from.get(c.name);
      return at === undefined ? '' : r.cells?.[at];
    });
    if (r.object?.metadata?.resourceVersion) r.object.metadata.resourceVersion = current;
    return { ...r, cells };
  });
  return {
    kind: 'Table',
    apiVersion: obj.apiVersion ?? 'meta.k8s.io/v1',
    metadata: { resourceVersion: current },
    columnDefinitions: header ? table.columns : null,
    rows,
  };
}

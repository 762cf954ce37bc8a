/**
 * A Table row rewritten for the fleet view from its bytes (toFleetRow, table.ts), as list items are
 * (itembytes.ts): the object's edits, and the cells under the merged columns, the name and reference
 * cells renamed and the Cluster cell filled.
 *
 * A row whose cluster prints the merged columns (all its columns, in their order: the cluster alone, or
 * clusters of one version) keeps its cells where they are and gains the Cluster cell after its name cell:
 * then the cells are edits like the object's, and the whole row is written in one pass of the writer
 * (itembytes-edits.ts: one copy, the bytes after each edit moved natively), not cell by cell.
 */
import type { ByteSink } from '../../util/bytes.ts';
import type { ItemFacts } from '../jsonsplit/facts.ts';
import { fleetName } from '../objects/index.ts';
import { fleetReferenceCell, type MergedColumns } from '../table/index.ts';
import type { Edits } from './edits.ts';
import { type ItemView, isNone, itemEdits, objectEdits, plainSuffix, rename, stringAt } from './index.ts';

/**
 * Writes Table row `b` in the fleet view (toFleetRow): cells under the merged columns, the name and
 * reference cells renamed, the Cluster cell filled, `object` rewritten as an item. False: parse it.
 */
export function writeFleetRow(
  sink: ByteSink,
  b: Uint8Array,
  f: ItemFacts,
  iv: ItemView,
  merged: MergedColumns,
  input: number,
): boolean {
  // a row without cells gains them at its end in toFleetRow: left to parsing, as anything odd
  if (f.odd || f.cellsFrom < 0 || b[f.cellsFrom] !== 0x5b) return false;
  const edits = itemEdits(iv);
  const object = f.objectFrom >= 0 && b[f.objectFrom] === 0x7b;
  const cells = f.cells;
  if (cells !== undefined && inPlace(iv, merged, input, cells.length >> 1)) {
    // the edits in the order of their offsets, mostly (the writer keeps them sorted): cells first when
    // they come first
    const cellsFirst = f.cellsFrom < f.objectFrom;
    if (cellsFirst) cellEdits(edits, b, cells, iv, merged, input);
    if (object && !objectEdits(edits, b, f, iv)) return false;
    if (!cellsFirst) cellEdits(edits, b, cells, iv, merged, input);
    edits.write(sink, b, 0, b.length);
    return true;
  }
  if (object && !objectEdits(edits, b, f, iv)) return false;
  // the cells member first, then the object (either order in the row), every other byte copied
  const objectFirst = object && f.objectFrom < f.cellsFrom;
  if (objectFirst) edits.write(sink, b, 0, f.cellsFrom);
  else sink.bytes(b, 0, f.cellsFrom);
  writeCells(sink, b, f, iv, merged, input);
  if (object && !objectFirst) edits.write(sink, b, f.cellsTo, b.length);
  else sink.bytes(b, f.cellsTo, b.length);
  return true;
}

/**
 * Whether `count` cells of cluster `input` stand under the merged columns as they are, the Cluster cell
 * inserted after the cell before it (at least one: a name column, or a first one). The last answer is
 * kept in `iv` (a list asks row after row).
 */
function inPlace(iv: ItemView, merged: MergedColumns, input: number, count: number): boolean {
  const last = iv.lastRow;
  if (last !== undefined && last.merged === merged && last.input === input && last.count === count)
    return last.inPlace;
  const map = merged.maps[input]!;
  const at = merged.clusterIndex;
  let ok = at >= 1 && map.length === count + 1;
  for (let i = 0; ok && i < map.length; i++) ok = map[i] === (i < at ? i : i === at ? -1 : i - 1);
  iv.lastRow = { merged, input, count, inPlace: ok };
  return ok;
}

/** the cells' edits of a row whose cells stay in place (inPlace): what writeCells writes, as edits */
function cellEdits(
  e: Edits,
  b: Uint8Array,
  cells: readonly number[],
  iv: ItemView,
  merged: MergedColumns,
  input: number,
): void {
  const at = merged.clusterIndex;
  const nameAt = merged.nameIndex[input]!;
  const count = cells.length >> 1;
  // the Cluster cell's edit, unless the name cell before it writes it with its suffix
  let cluster = true;
  for (let from = 0; from < count; from++) {
    const ref = from === nameAt ? 'name' : merged.refs[from < at ? from : from + 1];
    if (ref !== undefined) {
      const a = cells[2 * from]!;
      const z = cells[2 * from + 1]!;
      // a cell that names nothing, an empty one, `<none>` in a reference cell (fleetReferenceCell)
      if (b[a] === 0x22 && z - a > 2 && (from === nameAt || !isNone(b, a, z))) {
        // a plain name gains the suffix; anything else is decoded (an escaped `<none>` stays)
        const suffix = ref === 'name' ? plainSuffix(b, a, z, iv) : undefined;
        if (suffix !== undefined) {
          // a name just before the Cluster cell: its closing quote becomes `<suffix>","<cluster>"`
          if (suffix && from === at - 1) {
            e.put(z - 1, z, iv.bytes.nameCell);
            cluster = false;
          } else if (suffix) e.put(z - 1, z - 1, iv.bytes.suffix);
        } else if (from === nameAt) rename(e, b, a, z, iv);
        else e.putJson(a, z, fleetReferenceCell(iv.view, ref, stringAt(b, a, z), iv.cluster) as string);
      }
    }
    if (from === at - 1 && cluster) {
      const z = cells[2 * from + 1]!;
      e.put(z, z, iv.bytes.clusterCell);
    }
  }
}

/** a row's cells under the merged columns (toFleetRow), the name and reference cells renamed */
function writeCells(
  sink: ByteSink,
  b: Uint8Array,
  f: ItemFacts,
  iv: ItemView,
  merged: MergedColumns,
  input: number,
): void {
  const cells = f.cells ?? [];
  const count = cells.length / 2;
  const map = merged.maps[input]!;
  const nameAt = merged.nameIndex[input]!;
  const vb = iv.bytes;
  sink.byte(0x5b);
  // cells copied as they came and next to each other in the row are copied as one run (with the
  // separators between them as they came)
  let runFrom = -1;
  let runTo = -1;
  let runLast = -2;
  for (let i = 0; i < map.length; i++) {
    const from = map[i]!;
    if (i !== merged.clusterIndex && from >= 0 && from < count) {
      const a = cells[2 * from]!;
      const z = cells[2 * from + 1]!;
      const ref = from === nameAt ? 'name' : merged.refs[i];
      // a cell that names nothing, an empty one, `<none>` in a reference cell (fleetReferenceCell)
      if (!ref || b[a] !== 0x22 || z - a <= 2 || (from !== nameAt && isNone(b, a, z))) {
        if (runFrom >= 0 && from === runLast + 1) {
          runTo = z;
          runLast = from;
          continue;
        }
        if (runFrom >= 0) sink.bytes(b, runFrom, runTo);
        if (i > 0) sink.byte(0x2c);
        runFrom = a;
        runTo = z;
        runLast = from;
        continue;
      }
      if (runFrom >= 0) sink.bytes(b, runFrom, runTo);
      runFrom = -1;
      if (i > 0) sink.byte(0x2c);
      const suffix = ref === 'name' ? plainSuffix(b, a, z, iv) : undefined;
      if (suffix !== undefined) {
        sink.bytes(b, a, z - 1);
        if (suffix) sink.bytes(vb.suffix, 0, vb.suffix.length);
        sink.byte(0x22);
      } else {
        const v = stringAt(b, a, z);
        const shown =
          from === nameAt
            ? fleetName(iv.view, v, iv.cluster)
            : fleetReferenceCell(iv.view, ref, v, iv.cluster);
        sink.string(JSON.stringify(shown));
      }
      continue;
    }
    if (runFrom >= 0) sink.bytes(b, runFrom, runTo);
    runFrom = -1;
    if (i > 0) sink.byte(0x2c);
    if (i === merged.clusterIndex) sink.bytes(vb.clusterJson, 0, vb.clusterJson.length);
    else if (from < 0) sink.string('""');
    else sink.string('null'); // JSON.stringify of a missing array element
  }
  if (runFrom >= 0) sink.bytes(b, runFrom, runTo);
  sink.byte(0x5d);
}

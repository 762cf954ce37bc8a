import { describe, expect, it } from 'vitest';
import { CLUSTER_COLUMN, type ColumnDefinition } from '../merge/table/index.ts';
import { mergeProbed } from './columns.ts';

const col = (name: string, format = ''): ColumnDefinition => ({
  name,
  type: 'string',
  format,
  description: '',
  priority: 0,
});
const NAME = col('Name', 'name');
const DATA = col('Data');
const AGE = col('Age');

describe('mergeProbed: a Table watch’s columns from the clusters’ probes', () => {
  it('a cluster whose probe failed is mapped under the others’ columns', () => {
    const m = mergeProbed([[NAME, DATA, AGE], undefined]);
    expect(m.columns.map((c) => c.name)).toEqual(['Name', CLUSTER_COLUMN.name, 'Data', 'Age']);
    expect(m.maps[1]).toEqual(m.maps[0]);
    expect(m.nameIndex[1]).toBe(0);
  });

  it('the stand-in is the union of the clusters that answered', () => {
    const m = mergeProbed([[NAME, AGE], [NAME, DATA, AGE], undefined]);
    expect(m.maps[2]).toEqual(m.maps[1]);
    expect(m.maps[0]).not.toEqual(m.maps[1]);
  });

  it('every probe answered: the plain merge; none answered: nothing to stand in', () => {
    const m = mergeProbed([
      [NAME, DATA],
      [NAME, AGE],
    ]);
    expect(m.maps[0]).not.toEqual(m.maps[1]);
    const none = mergeProbed([undefined, undefined]);
    expect(none.columns).toEqual([CLUSTER_COLUMN]);
    expect(none.nameIndex).toEqual([-1, -1]);
  });
});

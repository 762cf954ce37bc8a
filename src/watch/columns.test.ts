import { describe, expect, it } from 'vitest';
import type { ColumnDefinition } from '../merge/table/index.ts';
import { WatchColumns } from './columns.ts';

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
const NEW = col('New');

describe('WatchColumns: a Table watch’s columns learned as the stream runs', () => {
  it('the header is fixed at its first use; a cluster known later is mapped onto it by name', () => {
    const t = new WatchColumns(2);
    t.learn(0, [NAME, DATA, AGE]);
    const h = t.header();
    expect(h.columns.map((c) => c.name)).toEqual(['Name', 'Cluster', 'Data', 'Age']);
    // cluster 1 unknown: shown under cluster 0's columns meanwhile
    expect(h.maps[1]).toEqual([0, -1, 1, 2]);
    // its own columns (another version: a column more, another order) come later
    t.learn(1, [NAME, AGE, NEW, DATA]);
    expect(t.header()).toBe(h);
    expect(h.columns.map((c) => c.name)).toEqual(['Name', 'Cluster', 'Data', 'Age']);
    expect(h.maps[1]).toEqual([0, -1, 3, 1]);
    expect(h.nameIndex[1]).toBe(0);
  });

  it('the fleet’s extra columns follow each cluster’s own; a relay group’s columns make the header when none is known', () => {
    const t = new WatchColumns(2, [NEW]);
    t.learn(1, [NAME, AGE]);
    expect(t.header().columns.map((c) => c.name)).toEqual(['Name', 'Cluster', 'Age', 'New']);
    const g = new WatchColumns(3);
    expect(g.header([NAME, col('Cluster'), DATA]).columns.map((c) => c.name)).toEqual([
      'Name',
      'Cluster',
      'Data',
    ]);
  });
});

/**
 * What fills a V8 heap, from two heap snapshots (`v8.writeHeapSnapshot`, taken by a helper process on
 * request): self size and count per constructor (objects), per kind otherwise (strings, arrays, closures by
 * function name, compiled code…), and the difference between the snapshots. Used by
 * `npm run bench -- --profile` to say where the memory of an idle merged watch goes.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export type HeapCensus = Map<string, { count: number; size: number }>;

export function heapCensus(path: string): HeapCensus {
  const s = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const out: HeapCensus = new Map();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType]!] ?? '?';
    const name = s.strings[s.nodes[i + iName]!] ?? '';
    const key =
      type === 'object' || type === 'native'
        ? name
        : type === 'closure'
          ? `(closure) ${name || '(anonymous)'}`
          : `(${type})`;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += s.nodes[i + iSize]!;
    out.set(key, e);
  }
  return out;
}

export interface CensusDelta {
  name: string;
  count: number;
  size: number;
}

/** after − before, largest growth first */
export function censusDelta(before: HeapCensus, after: HeapCensus, top = 15): CensusDelta[] {
  const out: CensusDelta[] = [];
  for (const [name, a] of after) {
    const b = before.get(name) ?? { count: 0, size: 0 };
    if (a.size - b.size > 0) out.push({ name, count: a.count - b.count, size: a.size - b.size });
  }
  return out.sort((x, y) => y.size - x.size).slice(0, top);
}

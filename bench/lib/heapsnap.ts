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

interface FullSnapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations?: number[];
}

/** kinds that say nothing by themselves: their memory is charged to whoever holds them */
const ANONYMOUS = new Set([
  'Object',
  'Array',
  'Map',
  'Set',
  'system / Context',
  'Promise',
  '(object shape)',
  'Generator',
]);

/**
 * What the objects new in `afterPath` (node ids absent from `beforePath`) belong to: each new object is
 * charged to the nearest holder (following first retainers, up to 12 steps) that has a meaningful name —
 * a constructor other than Object/Array/Promise, or a closure named by its function and script — so
 * backing arrays, contexts and promises land on the stream, socket or closure that keeps them.
 */
export function heapOwners(beforePath: string, afterPath: string, top = 25): CensusDelta[] {
  const before = new Set<number>();
  {
    const s = JSON.parse(readFileSync(beforePath, 'utf8')) as FullSnapshot;
    const w = s.snapshot.meta.node_fields.length;
    const iId = s.snapshot.meta.node_fields.indexOf('id');
    for (let i = 0; i < s.nodes.length; i += w) before.add(s.nodes[i + iId]!);
  }
  const s = JSON.parse(readFileSync(afterPath, 'utf8')) as FullSnapshot;
  const nf = s.snapshot.meta.node_fields;
  const ef = s.snapshot.meta.edge_fields;
  const ntypes = s.snapshot.meta.node_types[0];
  const etypes = s.snapshot.meta.edge_types[0];
  const W = nf.length;
  const EW = ef.length;
  const [iType, iName, iId, iSize, iEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) =>
    nf.indexOf(f),
  ) as [number, number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const n = s.nodes.length / W;
  const firstEdge = new Uint32Array(n + 1);
  for (let k = 0, e = 0; k < n; k++) {
    firstEdge[k] = e;
    e += s.nodes[k * W + iEdges]! * EW;
    firstEdge[k + 1] = e;
  }
  // first strong retainer of every node
  const retainer = new Int32Array(n).fill(-1);
  const weak = etypes.indexOf('weak');
  const shortcut = etypes.indexOf('shortcut');
  for (let k = 0; k < n; k++)
    for (let e = firstEdge[k]!; e < firstEdge[k + 1]!; e += EW) {
      const t = s.edges[e + eType]!;
      if (t === weak || t === shortcut) continue;
      const to = s.edges[e + eTo]! / W;
      if (retainer[to] === -1) retainer[to] = k;
    }
  const edgeTo = (k: number, name: string): number => {
    for (let e = firstEdge[k]!; e < firstEdge[k + 1]!; e += EW) {
      const t = etypes[s.edges[e + eType]!];
      if (t === 'element' || t === 'hidden') continue;
      if (s.strings[s.edges[e + eName]!] === name) return s.edges[e + eTo]! / W;
    }
    return -1;
  };
  const typeOf = (k: number) => ntypes[s.nodes[k * W + iType]!] ?? '?';
  const nameOf = (k: number) => s.strings[s.nodes[k * W + iName]!] ?? '';
  // closures' source lines: [node offset, script id, line, column] per located node
  const lines = new Map<number, number>();
  const loc = s.locations ?? [];
  for (let i = 0; i + 3 < loc.length; i += 4) lines.set(loc[i]!, loc[i + 2]!);
  const label = new Map<number, string | null>();
  const labelOf = (k: number): string | null => {
    const known = label.get(k);
    if (known !== undefined) return known;
    let out: string | null = null;
    const t = typeOf(k);
    if (t === 'closure') {
      const sfi = edgeTo(k, 'shared');
      const script = sfi >= 0 ? edgeTo(sfi, 'script_or_debug_info') : -1;
      const file = script >= 0 ? nameOf(script).replace(/^.*\/(node_modules\/|src\/|deploy\/)/, '$1') : '';
      const line = lines.get(k * W);
      // a closure of no known script (a builtin's): charged to what holds it
      if (file)
        out = `(closure) ${nameOf(k) || '(anonymous)'} @ ${file}${line === undefined ? '' : `:${line + 1}`}`;
    } else if ((t === 'object' || t === 'native') && !ANONYMOUS.has(nameOf(k))) out = nameOf(k);
    label.set(k, out);
    return out;
  };
  const out = new Map<string, { count: number; size: number }>();
  for (let k = 0; k < n; k++) {
    if (before.has(s.nodes[k * W + iId]!)) continue;
    let owner = labelOf(k);
    let q = retainer[k]!;
    for (let step = 0; owner === null && q >= 0 && step < 12; step++) {
      owner = labelOf(q);
      q = retainer[q]!;
    }
    const key = owner ?? `(unowned ${typeOf(k)} ${nameOf(k).slice(0, 30)})`;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += s.nodes[k * W + iSize]!;
    out.set(key, e);
  }
  return [...out]
    .map(([name, e]) => ({ name, ...e }))
    .sort((a, b) => b.size - a.size)
    .slice(0, top);
}

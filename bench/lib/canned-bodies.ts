/**
 * The canned upstreams' bytes (bench/lib/canned-child.ts serves them; bench/lib/canned-merge.ts merges them
 * in-process): one simulated cluster (sim/) filled with BASE pods as the other cases fill it
 * (bench/cases/passthrough.ts benchPod, ≈ 3 KiB of JSON each), asked once for its JSON list, its Table list
 * and one pod. Larger lists repeat those items under new names (`r<k>-web-…`, so names stay unique within
 * a cluster); smaller ones take the first items.
 */
const BASE = 1000;
export const CANNED_NS = 'bench-canned';

export interface Base {
  listHead: string;
  items: string[];
  tableHead: string;
  rows: string[];
  pod: Buffer;
  listRv: number;
}

export async function makeBase(): Promise<Base> {
  const { SimCluster } = await import('../../sim/index.ts');
  const { benchPod } = await import('../cases/passthrough.ts');
  const sim = new SimCluster({ name: 'canned', seed: false });
  for (let i = 0; i < BASE; i++) {
    const p = benchPod(i);
    p.metadata.namespace = CANNED_NS;
    sim.create({ group: '', version: 'v1', resource: 'pods' }, p);
  }
  const get = async (path: string, accept: string) => {
    const r = await sim.fetch(new Request(`http://sim${path}`, { headers: { Accept: accept } }));
    if (!r.ok) throw new Error(`canned: the simulator answered ${r.status} for ${path}`);
    return r.text();
  };
  const list = JSON.parse(await get('/api/v1/pods', 'application/json'));
  const table = JSON.parse(await get('/api/v1/pods', 'application/json;as=Table;v=v1;g=meta.k8s.io'));
  const first = list.items[0].metadata.name as string;
  const pod = Buffer.from(await get(`/api/v1/namespaces/${CANNED_NS}/pods/${first}`, 'application/json'));
  sim.close();
  const items = (list.items as unknown[]).map((x) => JSON.stringify(x));
  const rows = (table.rows as unknown[]).map((x) => JSON.stringify(x));
  delete list.items;
  delete table.rows;
  return {
    listHead: JSON.stringify(list).slice(0, -1),
    items,
    tableHead: JSON.stringify(table).slice(0, -1),
    rows,
    pod,
    listRv: Number(list.metadata.resourceVersion),
  };
}

/** item `i` of a list of any length: the base items, repeated under new names past BASE */
export function nth(texts: string[], i: number, table: boolean): string {
  const t = texts[i % BASE]!;
  const k = Math.floor(i / BASE);
  if (k === 0) return t;
  const renamed = t.replaceAll('"name":"web-', `"name":"r${k}-web-`);
  return table ? renamed.replace('{"cells":["web-', `{"cells":["r${k}-web-`) : renamed;
}

export function listBytes(head: string, key: string, texts: string[], n: number, table: boolean): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(nth(texts, i, table));
  return Buffer.from(`${head},"${key}":[${parts.join(',')}]}`);
}

/** `n` MODIFIED events of the canned pods, one JSON line each, their RVs counting on from the list's */
export function watchBytes(base: Base, n: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const item = nth(base.items, i, false).replace(
      /"resourceVersion":"\d+"/,
      `"resourceVersion":"${base.listRv + 1 + i}"`,
    );
    lines.push(`{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1",${item.slice(1)}}\n`);
  }
  return Buffer.from(lines.join(''));
}

/**
 * `pods` canned items (or Table rows) as one list body cut in 64 KiB chunks, as the list splitter reads it,
 * with where each item that begins in a chunk begins (the scanner benches scan them item by item).
 */
export function itemChunks(
  base: Base,
  rows: boolean,
  pods: number,
): { body: Uint8Array; chunks: Array<{ b: Uint8Array; items: number[] }> } {
  const enc = new TextEncoder();
  const texts = Array.from({ length: pods }, (_, i) => nth(rows ? base.rows : base.items, i, rows));
  const body = enc.encode(`[${texts.join(',')}]`);
  const starts: number[] = [];
  for (let at = 1, k = 0; k < pods; k++) {
    starts.push(at);
    at += enc.encode(texts[k]!).length + 1;
  }
  const chunks: Array<{ b: Uint8Array; items: number[] }> = [];
  for (let from = 0; from < body.length; from += 65536)
    chunks.push({
      b: body.slice(from, from + 65536),
      items: starts.filter((s) => s >= from && s < from + 65536).map((s) => s - from),
    });
  return { body, chunks };
}

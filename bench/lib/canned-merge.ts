/**
 * The merged list's own work, in this process (not a test, not a bench case): the canned clusters' bytes
 * (./canned-bodies.ts) fed as 64 KiB chunks through what the list route runs between the sockets — the
 * splitter under the body-idle guard (src/list/read.ts), the resumable source, the merge, the answer's bytes — without HTTP. CPU
 * per MiB of merged answer, so a change to the merge can be measured (and profiled) in seconds:
 *
 *   node --import tsx bench/lib/canned-merge.ts [clusters=10] [pods=1000] [json|table] [runs=15]
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/lib/canned-merge.ts 10 1000 json 40
 *
 * The bench cases (bench/cases/canned-list.ts) measure the whole fleet process, HTTP included.
 */

import { mergeList } from '../../src/list/merge.ts';
import { splitGuarded } from '../../src/list/read.ts';
import { listHead, resumableSource } from '../../src/list/resume.ts';
import { listBody } from '../../src/list/route.ts';
import { encodeContinue } from '../../src/merge/continue.ts';
import { prepareMembership } from '../../src/merge/rv/index.ts';
import { mergeColumns } from '../../src/merge/table/index.ts';
import { listBytes, makeBase } from './canned-bodies.ts';

const CHUNK = 64 * 1024;
const AS_BUFFER = process.env.CANNED_BUFFERS === '1';
const asBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length);

function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close();
      // a copy, as a socket read gives (a Node Buffer there, when CANNED_BUFFERS=1): views of one
      // buffer would hide the splitter's copies
      const piece = bytes.slice(at, at + CHUNK);
      c.enqueue(AS_BUFFER ? asBuffer(piece) : piece);
      at += CHUNK;
    },
  });
}

/** What a merge's input is built with: this tree's functions, or another checkout's (./merge-ab.ts). */
export interface InputMakers<M, C> {
  encodeContinue: (
    membership: M,
    at: string,
    upstream: string,
    rvs: Map<string, string>,
    skip: number,
  ) => string;
  mergeColumns: (columns: any[]) => C;
}

/** The merge's input over `sources` (fleet order, heads read), as the list route builds it: no limit. */
export function mergeInputOf<M, C>(
  makers: InputMakers<M, C>,
  membership: M,
  sources: ReadonlyArray<{ cluster: string; head: Record<string, any> }>,
  table: boolean,
) {
  const rvs = new Map<string, string>();
  for (const s of sources) rvs.set(s.cluster, String(s.head.metadata?.resourceVersion ?? ''));
  return {
    view: { federation: false },
    membership,
    rvs,
    limit: 0,
    kind: String(sources[0]!.head.kind),
    apiVersion: String(sources[0]!.head.apiVersion),
    table: table ? makers.mergeColumns(sources.map((s) => s.head.columnDefinitions)) : undefined,
    continueToken: (cluster: string, upstream: string, skip: number) =>
      makers.encodeContinue(membership, cluster, upstream, rvs, skip),
  };
}

export interface MergeRun {
  bytesOut: number;
  cpuMs: number;
  wallMs: number;
}

/** One merged answer over `bodies` (one per cluster), read to its end. */
export async function mergeOnce(bodies: Uint8Array[], table: boolean): Promise<MergeRun> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const names = bodies.map((_, i) => `c${i + 1}`);
  const membership = prepareMembership(names);
  const signal = new AbortController().signal;
  const reader = {
    ask: () => Promise.reject(new Error('no re-reads in the bench')),
    idleMs: 10_000,
    signal,
  };
  const sources = await Promise.all(
    bodies.map(async (b, i) => {
      const events = splitGuarded(chunked(b), reader.idleMs).events;
      const first = await events.next();
      const head = first.done ? {} : listHead(first.value);
      const ask = { target: { cluster: names[i]! }, skip: 0, askedWith: '', limit: 0 };
      return resumableSource(reader as never, ask as never, head, events);
    }),
  );
  const body = listBody(
    mergeList(mergeInputOf({ encodeContinue, mergeColumns }, membership, sources, table), sources),
  );
  const r = body.getReader();
  let bytesOut = 0;
  for (;;) {
    const x = await r.read();
    if (x.done) break;
    bytesOut += x.value.length;
  }
  const c = process.cpuUsage(c0);
  return { bytesOut, cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}

export async function benchmarkMerge(
  clusters: number,
  pods: number,
  table: boolean,
  runs: number,
): Promise<{ msPerMiB: number; bytesOut: number; runs: number; cpuMs: number }> {
  const base = await makeBase();
  const one = table
    ? listBytes(base.tableHead, 'rows', base.rows, pods, true)
    : listBytes(base.listHead, 'items', base.items, pods, false);
  const bodies = Array.from({ length: clusters }, () => new Uint8Array(one));
  const per: number[] = [];
  let bytesOut = 0;
  for (let i = 0; i < runs; i++) {
    const m = await mergeOnce(bodies, table);
    bytesOut = m.bytesOut;
    // the first runs warm the JIT up
    if (i >= Math.min(3, runs - 1)) per.push(m.cpuMs / (m.bytesOut / 2 ** 20));
  }
  per.sort((a, b) => a - b);
  const msPerMiB = per[Math.floor(per.length / 2)]!;
  return { msPerMiB, bytesOut, runs, cpuMs: (msPerMiB * bytesOut) / 2 ** 20 };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [c = '10', p = '1000', form = 'json', n = '15'] = process.argv.slice(2);
  const r = await benchmarkMerge(Number(c), Number(p), form === 'table', Number(n));
  console.log(
    `${c}×${p} ${form}: ${r.msPerMiB.toFixed(2)} ms CPU per MiB (median of ${r.runs} runs after warm-up), ${(r.bytesOut / 2 ** 20).toFixed(1)} MiB out, ${r.cpuMs.toFixed(0)} ms per answer`,
  );
}

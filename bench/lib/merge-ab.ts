/**
 * The merged list's own work, this tree against another, in one process (not a test, not a bench case):
 * the canned clusters' bytes (./canned-bodies.ts) fed in chunks of a given size (Node Buffers, as sockets
 * give) through the splitter and the merge of each tree, answers interleaved, CPU per MiB of merged answer
 * (medians after two warm-up answers), and the two answers' bytes compared. The other tree is a checkout:
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node --import tsx bench/lib/merge-ab.ts /tmp/base [clusters=10] [pods=1000] [json|table] [answers=12] [chunk=65536] [wasm|js]
 *
 * The item scanner runs on the lane given (default wasm: each tree's jsonsplit/wasm/skip.wasm, as the
 * fleet on Node runs it, src/platform/node.ts; js: the JavaScript lane), with the platform's memcmp for
 * its memo's comparisons either way; a checkout from before the wasm lane runs the JavaScript lane.
 *
 * Each body goes through the tree's ListSplitter in chunks (this file's splitBody, the same for both trees,
 * so older checkouts run too); the digest of the answer is taken outside the CPU counted.
 *
 * Unlike the bench cases (whole fleet processes, HTTP included, and noisy on a shared machine), this says
 * what a change to src/merge does to the merge alone.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { listBytes, makeBase } from './canned-bodies.ts';
import { mergeInputOf } from './canned-merge.ts';

interface Splitter {
  push(chunk: Uint8Array, emit: (e: any) => void): void;
  end(): void;
}

interface Tree {
  mergeList: (input: unknown, sources: unknown[]) => AsyncGenerator<Uint8Array>;
  encodeContinue: (...a: unknown[]) => string;
  prepareMembership: (names: string[]) => unknown;
  mergeColumns: (cols: unknown[]) => unknown;
  ListSplitter: new (opts: unknown) => Splitter;
}

async function load(root: string, wasm: boolean): Promise<Tree> {
  // a module at its path in this tree, or where an older checkout had it (issue 31 moved them)
  const m = (...paths: string[]) => {
    const p = paths.find((q) => existsSync(resolve(root, q)));
    if (!p) throw new Error(`none of ${paths.join(', ')} in ${root}`);
    return import(resolve(root, p));
  };
  // the platform's seams src/platform/node.ts sets for the scanner, in this tree's modules
  const memo = resolve(root, 'src/merge/jsonsplit/memo.ts');
  if (existsSync(memo))
    (await import(memo)).useNativeEquality(
      (m: Uint8Array, b: Uint8Array, at: number) =>
        Buffer.prototype.compare.call(m, b, at, at + m.length) === 0,
    );
  const lane = resolve(root, 'src/merge/jsonsplit/wasm/lane.ts');
  if (existsSync(lane))
    (await import(lane)).useWasmScanner(
      wasm
        ? new WebAssembly.Module(readFileSync(resolve(root, 'src/merge/jsonsplit/wasm/skip.wasm')))
        : undefined,
    );
  return {
    mergeList: (await m('src/list/merge.ts', 'src/merge/listmerge.ts')).mergeList,
    encodeContinue: (await m('src/merge/continue.ts')).encodeContinue,
    prepareMembership: (await m('src/merge/rv/index.ts', 'src/merge/rv.ts')).prepareMembership,
    mergeColumns: (await m('src/merge/table/index.ts', 'src/merge/table.ts')).mergeColumns,
    ListSplitter: (await m('src/merge/jsonsplit/index.ts', 'src/merge/jsonsplit.ts')).ListSplitter,
  };
}

/**
 * One body's events through a tree's splitter, fed in chunks of `chunk` bytes (copies, as Node Buffers,
 * as a socket gives them): the same for every checkout, whatever its own stream wrapper (the list route
 * has its own, src/list/read.ts; ./canned-merge.ts measures that one).
 */
async function* splitBody(t: Tree, b: Uint8Array, chunk: number): AsyncGenerator<any> {
  const splitter = new t.ListSplitter({ arrayKey: ['items', 'rows'] });
  const queue: unknown[] = [];
  const push = (e: unknown) => {
    queue.push(e);
  };
  for (let at = 0; at < b.length; at += chunk) {
    splitter.push(Buffer.from(b.subarray(at, at + chunk)), push);
    for (let k = 0; k < queue.length; k++) yield queue[k];
    queue.length = 0;
    // a socket's next chunk comes in a later turn
    await undefined;
  }
  splitter.end();
}

/** one merged answer: CPU ms per MiB out, and a digest of its bytes */
async function once(t: Tree, bodies: Uint8Array[], table: boolean, chunk: number) {
  const c0 = process.cpuUsage();
  const names = bodies.map((_, i) => `c${i + 1}`);
  const membership = t.prepareMembership(names);
  const sources = await Promise.all(
    bodies.map(async (b, i) => {
      const events = splitBody(t, b, chunk);
      const first = await events.next();
      const head = first.value.value;
      return {
        cluster: names[i]!,
        head,
        events,
        skip: 0,
        askedWith: '',
        askedLimit: 0,
        cancel: async () => {},
      };
    }),
  );
  const input = mergeInputOf(t, membership, sources, table);
  const h = createHash('sha256');
  let out = 0;
  let hashing = 0; // CPU µs of the digest, which is the bench's, not the merge's
  for await (const piece of t.mergeList(input, sources)) {
    const h0 = process.cpuUsage();
    h.update(piece);
    const hd = process.cpuUsage(h0);
    hashing += hd.user + hd.system;
    out += piece.length;
  }
  const d = process.cpuUsage(c0);
  return {
    msPerMiB: (d.user + d.system - hashing) / 1000 / (out / 2 ** 20),
    digest: `${out}:${h.digest('hex')}`,
  };
}

const [baseRoot, c = '10', p = '1000', form = 'json', n = '12', chunkS = '65536', lane = 'wasm'] =
  process.argv.slice(2);
if (!baseRoot || (lane !== 'wasm' && lane !== 'js'))
  throw new Error(
    'usage: merge-ab.ts <other tree> [clusters] [pods] [json|table] [answers] [chunk] [wasm|js]',
  );
const [base, work] = [await load(baseRoot, lane === 'wasm'), await load('.', lane === 'wasm')];
const canned = await makeBase();
const table = form === 'table';
const one = table
  ? listBytes(canned.tableHead, 'rows', canned.rows, Number(p), true)
  : listBytes(canned.listHead, 'items', canned.items, Number(p), false);
const bodies = Array.from({ length: Number(c) }, () => new Uint8Array(one));
const a: number[] = [];
const b: number[] = [];
let same = true;
for (let i = 0; i < Number(n); i++) {
  const x = await once(base, bodies, table, Number(chunkS));
  const y = await once(work, bodies, table, Number(chunkS));
  same &&= x.digest === y.digest;
  if (i >= 2) {
    a.push(x.msPerMiB);
    b.push(y.msPerMiB);
  }
}
const med = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
console.log(
  `${c}×${p} ${form}, chunks of ${chunkS}, ${lane} lane: other ${med(a).toFixed(2)} ms/MiB, this ${med(b).toFixed(2)} ms/MiB, this/other ${(med(b) / med(a)).toFixed(2)}; answers ${same ? 'byte-identical' : 'DIFFER'}`,
);

/**
 * A merged watch's per-event work (reader, merger, writer) of two source trees in this one process,
 * paired round by round, each tree with the Node platform's hooks installed as the fleet has them
 * (memchr, memcmp, the scanner's WebAssembly lane: src/platform/node.ts installNodeHooks), and the merged
 * lines of both compared byte for byte first (a changed reader or writer must write what the base wrote).
 *   node --import tsx bench/lib/watchpath-ab.ts base=/tmp/base-tree [rounds=15] [events=500]
 * [chunk=<bytes>, 64 KiB] [clusters=10] [check=0] (no byte comparison); under `node --expose-gc --max-semi-space-size=128` also heap bytes per event [modes=burst|initial|fresh|burst,initial]
 * `fresh`: merged-watch's burst (1,000 watches over 3 clusters, ~2 events each): `events` events spread
 * over merged watches of `per` (2) events each, every watch made before the timing, so what a watch does
 * at its first events (its views, splicers, shape) is in the figure as it is in the fleet's
 * `base`: another checkout of the project (a `git archive` of a commit, node_modules linked in); this
 * tree is `cur`. Prints µs of CPU per event per tree (median of the rounds, burst and initial events)
 * and the cur ÷ base ratio per round's median.
 */
import { resolve } from 'node:path';
import { makeBase, watchBytes } from './canned-bodies.ts';
import { median } from './stats.ts';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);
const rounds = Number(args.rounds ?? 15);
const events = Number(args.events ?? 500);
/** the merged watch's clusters (the composite RV and the bookmarks are O(clusters): clusters=200) */
const CLUSTERS = Number(args.clusters ?? 10);
const clusters = Array.from({ length: CLUSTERS }, (_, i) => `c${i}`);

interface Tree {
  name: string;
  /** merged watches of `groups[k]`'s lines each, made now; the runner feeds them (fresh mode) */
  fresh(groups: Uint8Array[]): () => number;
  /** feeds `chunks` to one merged watch of CLUSTERS clusters (each cluster the same chunks in turn) */
  run(chunks: Uint8Array[], initial: boolean, keep: boolean): { lines: number; out: Uint8Array[] };
}

async function load(name: string, root: string): Promise<Tree> {
  const src = (p: string) => import(resolve(root, 'src', p));
  const node = await src('platform/node.ts');
  node.installNodeHooks();
  const { prepareMembership } = await src('merge/rv/index.ts');
  const { WatchMerger } = await src('watch/merge.ts');
  const { WatchEventReader } = await src('watch/read.ts');
  const membership = prepareMembership(clusters);
  const merger = (initial: boolean) =>
    new WatchMerger({
      view: { federation: false },
      membership,
      rvs: new Map(clusters.map((c) => [c, '1'])),
      clusters,
      allowBookmarks: true,
      sendInitialEvents: false,
      ...(initial ? { initialPhases: clusters } : {}),
    });
  return {
    name,
    fresh(groups) {
      const feeds = groups.map((g, k) => {
        const m = merger(false);
        let lines = 0;
        // each watch's events from one cluster in turn, as a namespace's watch gets them
        const c = clusters[k % clusters.length]!;
        const rd = new WatchEventReader({
          onEvent: (ev: unknown) => {
            const step = m.onEvent(c, ev);
            if (step.kind === 'emit') lines += step.lines.length;
            return true;
          },
          onEnd: () => {},
        });
        return () => {
          rd.chunk(g);
          return lines;
        };
      });
      return () => {
        let lines = 0;
        for (const f of feeds) lines += f();
        return lines;
      };
    },
    run(chunks, initial, keep) {
      const m = merger(initial);
      let lines = 0;
      const out: Uint8Array[] = [];
      const readers = clusters.map(
        (c) =>
          new WatchEventReader({
            onEvent: (ev: unknown) => {
              const step = m.onEvent(c, ev);
              if (step.kind === 'emit') {
                for (const l of step.lines as Array<string | Uint8Array>) {
                  lines++;
                  if (keep) out.push(typeof l === 'string' ? Buffer.from(l) : Buffer.from(l));
                }
                // made now, as the writer makes a bookmark it sends (a lazy one's line is its String)
                if (keep && step.bookmark) out.push(Buffer.from(`bookmark ${String(step.bookmark)}`));
              } else if (keep) out.push(Buffer.from(`expired ${step.line}`));
              return true;
            },
            onEnd: () => {},
          }),
      );
      for (const ch of chunks) for (const rd of readers) rd.chunk(ch);
      for (const rd of readers) rd.end();
      return { lines, out };
    },
  };
}

/** `body` in `size`-byte chunks (copies: a reader may keep a view of a chunk during its call only) */
function chunked(body: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < body.length; o += size) chunks.push(body.slice(o, o + size));
  return chunks;
}

/**
 * The canned burst's lines varied for the byte comparison: every type, bookmarks (and an initial-events-end
 * one), members in another order, whitespace JSON allows, an escaped key, a member twice
 */
function variedBody(base: Uint8Array): Uint8Array {
  const lines = Buffer.from(base).toString('utf8').split('\n').filter(Boolean);
  const out: string[] = [];
  lines.forEach((l, i) => {
    const obj = l.slice(l.indexOf('"object":') + 9, -1);
    const rv = /"resourceVersion":"(\d+)"/.exec(l)?.[1] ?? '1';
    switch (i % 9) {
      case 1:
        out.push(l.replace('"MODIFIED"', '"ADDED"'));
        break;
      case 2:
        out.push(`{"object":${obj},"type":"DELETED"}`);
        break;
      case 3:
        out.push(` { "type" : "MODIFIED" ,\t"object" : ${obj} } \r`);
        out.push(
          `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"${rv}"}}}`,
        );
        break;
      case 4:
        out.push(l.replace('"kind":"Pod"', '"ki\\u006ed":"Pod"'));
        break;
      case 5:
        out.push(l.replace('"namespace":', '"namespace":"x","namespace":'));
        break;
      case 6:
        out.push(`{"type":"MODIFIED","extra":[1,{"a":null}],"object":${obj}}`);
        break;
      case 7:
        if (i === 7)
          out.push(
            `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"${rv}","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
          );
        out.push(l);
        break;
      default:
        out.push(l);
    }
  });
  return Buffer.from(`${out.join('\n')}\n\n`);
}

function same(a: Uint8Array[], b: Uint8Array[]): string | undefined {
  if (a.length !== b.length) return `${a.length} vs ${b.length} lines`;
  for (let k = 0; k < a.length; k++)
    if (Buffer.compare(a[k]!, b[k]!) !== 0)
      return `line ${k} differs:\n  ${Buffer.from(a[k]!).toString().slice(0, 400)}\n  ${Buffer.from(b[k]!).toString().slice(0, 400)}`;
  return undefined;
}

const body = watchBytes(await makeBase(), events);
const trees = [await load('base', args.base ?? '.'), await load('cur', '.')];

// byte identity first: the burst and the varied stream, whole-ish chunks and odd ones, burst and initial
const varied = variedBody(body);
if (args.check !== '0')
  for (const [what, b] of [
    ['burst', body],
    ['varied', varied],
  ] as const)
    for (const size of [64 * 1024, 7919, 1013])
      for (const initial of [false, true]) {
        const [x, y] = trees.map((t) => t.run(chunked(b, size), initial, true).out) as [
          Uint8Array[],
          Uint8Array[],
        ];
        const diff = same(x, y);
        if (diff) {
          console.error(`${what}, ${size}-byte chunks${initial ? ', initial' : ''}: ${diff}`);
          process.exit(1);
        }
      }
if (args.check !== '0')
  console.log('merged lines byte-identical (burst and varied stream, 3 chunkings, burst and initial events)');

// the fleet's upstream reads average ~20 KiB in a burst (burst-ab: ~6.5 events a read): chunk=20480
const chunks = chunked(body, Number(args.chunk ?? 64 * 1024));
const us: Record<string, Record<string, number[]>> = {};
const modes = (args.modes ?? 'burst,initial').split(',');
if (modes.includes('fresh')) {
  const per = Number(args.per ?? 2);
  const lines = Buffer.from(body).toString('utf8').split('\n').filter(Boolean);
  const groups: Uint8Array[] = [];
  for (let k = 0; k < lines.length; k += per)
    groups.push(Buffer.from(`${lines.slice(k, k + per).join('\n')}\n`));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...trees].reverse() : trees;
    for (const t of order) {
      const feed = t.fresh(groups);
      const c0 = process.cpuUsage();
      const n = feed();
      const c = process.cpuUsage(c0);
      if (n !== lines.length) throw new Error(`${t.name}: ${n} lines`);
      us.fresh ??= {};
      us.fresh[t.name] ??= [];
      us.fresh[t.name]!.push((c.user + c.system) / n);
    }
  }
  const b = us.fresh!.base!;
  const c = us.fresh!.cur!;
  console.log(
    `fresh (${groups.length} watches of ${per} events): base ${median(b).toFixed(2)} µs/event, cur ${median(c).toFixed(2)} µs/event; cur ÷ base per round median ${median(c.map((x, k) => x / b[k]!)).toFixed(2)}`,
  );
}
for (const initial of modes.filter((m) => m !== 'fresh').map((m) => m === 'initial')) {
  const mode = initial ? 'initial' : 'burst';
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...trees].reverse() : trees;
    for (const t of order) {
      const c0 = process.cpuUsage();
      const { lines } = t.run(chunks, initial, false);
      const c = process.cpuUsage(c0);
      if (lines !== events * CLUSTERS) throw new Error(`${t.name}: ${lines} lines`);
      us[mode] ??= {};
      us[mode][t.name] ??= [];
      us[mode][t.name]!.push((c.user + c.system) / lines);
    }
  }
  const b = us[mode]!.base!;
  const c = us[mode]!.cur!;
  console.log(
    `${mode}: base ${median(b).toFixed(2)} µs/event, cur ${median(c).toFixed(2)} µs/event; cur ÷ base per round median ${median(c.map((x, k) => x / b[k]!)).toFixed(2)}`,
  );
}

// heap bytes per event, burst (with `node --expose-gc --max-semi-space-size=128`: no scavenge inside a run)
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  const bytes: Record<string, number[]> = { base: [], cur: [] };
  for (let r = 0; r < 3; r++)
    for (const t of trees) {
      gc();
      const h0 = process.memoryUsage().heapUsed;
      const { lines } = t.run(chunks, false, false);
      bytes[t.name]!.push((process.memoryUsage().heapUsed - h0) / lines);
    }
  console.log(
    `heap bytes per event (burst): base ${median(bytes.base!).toFixed(0)}, cur ${median(bytes.cur!).toFixed(0)}`,
  );
}

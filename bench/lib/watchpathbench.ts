/**
 * A merged watch's per-event work alone, in this process (not a test): the canned upstreams' burst bytes
 * (bench/lib/canned-bodies.ts, MODIFIED pods) read by the upstream watch reader, merged, written as lines.
 * `node --import tsx bench/lib/watchpathbench.ts [events] [rounds]`
 */
import { prepareMembership } from '../../src/merge/rv/index.ts';
import { type IndexOf, useNativeIndexOf } from '../../src/util/lines.ts';
import { type WatchLine, WatchMerger } from '../../src/watch/merge.ts';
import { WatchEventReader } from '../../src/watch/read.ts';
import { makeBase, watchBytes } from './canned-bodies.ts';

// as the Node entry has it (src/platform/node.ts): memchr; memcmp (src/platform/node-watch.ts)
useNativeIndexOf(Buffer.prototype.indexOf as IndexOf);
if (process.env.WPB_MEMO !== '0') await import('../../src/platform/node-watch.ts');

const CLUSTERS = 10;

export async function watchBurstBytes(n: number): Promise<Buffer> {
  return watchBytes(await makeBase(), n);
}

/**
 * µs of CPU per event (best and median of `rounds`), every cluster's burst fed in 64 KiB chunks in turn;
 * `initial`: as a watch from RV 0 has them (initial events of every cluster)
 */
export function benchmarkWatchPath(body: Uint8Array, events: number, rounds: number, initial = false) {
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => `c${i}`);
  const membership = prepareMembership(clusters);
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < body.length; o += 64 * 1024) chunks.push(body.slice(o, o + 64 * 1024));
  const times: number[] = [];
  let bytesOut = 0;
  for (let r = 0; r < rounds; r++) {
    const m = new WatchMerger({
      view: { federation: false },
      membership,
      rvs: new Map(clusters.map((c) => [c, '1'])),
      clusters,
      allowBookmarks: true,
      sendInitialEvents: false,
      // a watch from RV 0: every cluster's events are its initial events (watchinitial.ts)
      ...(initial ? { initialPhases: clusters } : {}),
    });
    let out = 0;
    let count = 0;
    const readers = clusters.map(
      (c) =>
        new WatchEventReader({
          onEvent: (ev) => {
            const step = m.onEvent(c, ev);
            if (step.kind === 'emit')
              for (const l of step.lines as WatchLine[]) {
                out += l.length;
                count++;
              }
            return true;
          },
          onEnd: () => {},
        }),
    );
    // CPU time, not wall time: the machine is shared
    const h0 = process.memoryUsage().heapUsed;
    const c0 = process.cpuUsage();
    for (const ch of chunks) for (const rd of readers) rd.chunk(ch);
    const c1 = process.cpuUsage(c0);
    const h1 = process.memoryUsage().heapUsed;
    if (process.env.WPB_VERBOSE)
      console.log('heap bytes per event (no GC in between if positive)', Math.round((h1 - h0) / count));
    const t = (c1.user + c1.system) / 1000;
    if (count !== events * CLUSTERS) throw new Error(`expected ${events * CLUSTERS} lines, got ${count}`);
    times.push((t * 1000) / count);
    if (process.env.WPB_VERBOSE) console.log(((t * 1000) / count).toFixed(1));
    bytesOut = out;
  }
  times.sort((a, b) => a - b);
  return {
    events: events * CLUSTERS,
    inBytesPerEvent: Math.round(body.length / events),
    outBytesPerEvent: Math.round(bytesOut / (events * CLUSTERS)),
    bestUs: Math.round(times[0]! * 100) / 100,
    medianUs: Math.round(times[times.length >> 1]! * 100) / 100,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = Number(process.argv[2]) || 500;
  const rounds = Number(process.argv[3]) || 20;
  const body = await watchBurstBytes(events);
  console.log(JSON.stringify(benchmarkWatchPath(body, events, rounds, process.env.WPB_INITIAL === '1')));
}

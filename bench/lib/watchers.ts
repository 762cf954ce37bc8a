/**
 * The load side of the watch cases: many streaming GETs, each one watch, and an account of every event
 * a driver wrote for them. Each watch has a namespace of its own, so an event belongs to exactly one
 * watch; the driver says which events it wrote (watch index, cluster, sequence number), and `stop` waits
 * for every one of them up to a deadline, then sorts what did not arrive:
 * - lost: the watch received a later event of the same cluster but never this one (a real loss: a
 *   client that saw a later RV cannot get it back);
 * - ended: the watch's stream ended (closed by the fleet or broken) before it came;
 * - late: the watch is open and nothing later of that cluster came either: not delivered by the deadline
 *   (the fleet is behind: backpressure or a stall, not a loss).
 *
 * Events carry their write time (`data.t`, CLOCK_MONOTONIC in ms, the same clock in every process) and
 * the delay is taken when the line arrives.
 */
import { Agent, type ClientRequest, get, type IncomingMessage } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile, Samples } from './stats.ts';

export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** What a driver wrote: for event k, watch `watch[k]`, cluster index `cluster[k]`, sequence `seq[k]`. */
export interface Written {
  watch: number[];
  cluster: number[];
  seq: number[];
}

interface Watch {
  /** highest sequence received per cluster index */
  last: Map<number, number>;
  /** sequences received while recording (cluster index → set) */
  got: Map<number, Set<number>>;
  ended: boolean;
}

interface WatcherSet {
  reqs: ClientRequest[];
  agent: Agent;
  watches: Watch[];
}

export interface OpenResult {
  opened: number;
  /** indexes (into `urls`) of the watches that answered 200 */
  openedIdx: number[];
  failed: number;
  withWarnings: number;
  /** the first Warning header a watch opened with, to say why */
  firstWarning?: string | undefined;
  firstError?: string;
  ms: number;
}

export interface StopResult {
  expected: number;
  received: number;
  lost: number;
  ended: number;
  late: number;
  /** watches whose stream ended while recording, or before */
  watchesEnded: number;
  /** first and last delivery of a recorded event */
  firstMs: number;
  lastMs: number;
  /** time from the driver's last write to the last delivery */
  drainMs: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** the longest this (the load) process's event loop was late while recording: a delay it added itself */
  loadLoopMaxMs: number;
  /** this (the load) process's CPU from `record` to the last event (or the deadline): the client's share */
  loadCpuMs: number;
  /** the client's reads of the recorded set's bodies ('data' events: one per chunk frame read) and their bytes */
  reads: number;
  bytes: number;
  /**
   * the slowest 1% of the delivered events: when they were written (ms after the first recorded write),
   * and how many came from each cluster index. Written within a few tens of ms, they waited on one stall
   * (somewhere: a GC or long task in one process); spread over the phase, on a steady cost.
   */
  tail: { n: number; fromMs: number; toMs: number; byCluster: number[] };
}

const T = /"t":"(\d+(?:\.\d+)?)"/;
const SEQ = /"seq":"(\d+)"/;
const C = /"c":"(\d+)"/;

/** The load process's watch sets and their actions (a case's `loadActions`). */
export function watchersState() {
  const sets = new Map<string, WatcherSet>();
  let recording:
    | {
        delays: Samples;
        /** each delivered event's write time and cluster index, in delivery order (beside `delays`) */
        writes: number[];
        clusters: number[];
        loop: ReturnType<typeof monitorEventLoopDelay>;
        cpu: NodeJS.CpuUsage;
        received: number;
        firstMs: number;
        lastMs: number;
        reads: number;
        bytes: number;
      }
    | undefined;
  let otherLines = 0;

  const onLine = (w: Watch, line: string, at: number) => {
    if (!line.startsWith('{"type":"MODIFIED"')) {
      if (line.trim()) otherLines++;
      return;
    }
    const mt = T.exec(line);
    const ms = SEQ.exec(line);
    const mc = C.exec(line);
    if (!mt || !ms || !mc) {
      otherLines++;
      return;
    }
    const t = Number(mt[1]);
    const seq = Number(ms[1]);
    const c = Number(mc[1]);
    if (seq > (w.last.get(c) ?? -1)) w.last.set(c, seq);
    if (!recording || t === 0) return;
    const got = w.got.get(c) ?? new Set<number>();
    w.got.set(c, got);
    got.add(seq);
    recording.delays.push(at - t);
    recording.writes.push(t);
    recording.clusters.push(c);
    recording.received++;
    if (at > recording.lastMs) recording.lastMs = at;
    if (at < recording.firstMs) recording.firstMs = at;
  };

  const actions = {
    /** opens one streaming GET per URL; resolves when every one has its response headers (or failed) */
    open({
      key,
      urls,
      timeoutMs,
      concurrency = Number.POSITIVE_INFINITY,
      offset = 0,
    }: {
      key: string;
      urls: string[];
      timeoutMs: number;
      /** at most this many watches waiting for their response head at once (the rest wait their turn) */
      concurrency?: number;
      /** watch index of urls[0]: a second call with the same key adds watches to the set */
      offset?: number;
    }): Promise<OpenResult> {
      const set: WatcherSet = sets.get(key) ?? {
        reqs: [],
        agent: new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY }),
        watches: [],
      };
      const agent = set.agent;
      sets.set(key, set);
      const t0 = performance.now();
      const openedIdx: number[] = [];
      let failed = 0;
      let withWarnings = 0;
      let firstWarning: string | undefined;
      let firstError: string | undefined;
      return new Promise((resolve) => {
        let pending = urls.length;
        let next = 0;
        let inFlight = 0;
        const done = () => {
          inFlight--;
          while (inFlight < concurrency && next < urls.length) start(offset + next++);
          if (--pending === 0)
            resolve({
              opened: openedIdx.length,
              openedIdx: openedIdx.sort((a, b) => a - b),
              failed,
              withWarnings,
              firstWarning,
              firstError,
              ms: performance.now() - t0,
            });
        };
        const start = (idx: number) => {
          inFlight++;
          const url = urls[idx - offset]!;
          const w: Watch = { last: new Map(), got: new Map(), ended: false };
          set.watches[idx] = w;
          let settled = false;
          const settle = (ok: boolean, err?: string) => {
            if (settled) return;
            settled = true;
            if (ok) openedIdx.push(idx);
            else {
              failed++;
              firstError ??= err;
            }
            done();
          };
          const req = get(url, { agent, headers: { Accept: 'application/json' } }, (res: IncomingMessage) => {
            // the timeout is for the response head only: an idle watch may stay silent for as long as it likes
            req.setTimeout(0);
            if (res.statusCode !== 200) {
              settle(false, `HTTP ${res.statusCode}`);
              res.resume();
              return;
            }
            if (res.headers.warning) {
              withWarnings++;
              firstWarning ??= String(res.headers.warning);
            }
            settle(true);
            res.setEncoding('utf8');
            let buf = '';
            res.on('data', (chunk: string) => {
              const at = nowMs();
              if (recording) {
                recording.reads++;
                recording.bytes += chunk.length;
              }
              buf += chunk;
              let from = 0;
              for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', from)) {
                onLine(w, buf.slice(from, nl), at);
                from = nl + 1;
              }
              buf = buf.slice(from);
            });
            const end = () => {
              w.ended = true;
            };
            res.on('end', end);
            res.on('close', end);
            res.on('error', end);
          });
          req.setTimeout(timeoutMs, () => {
            settle(false, `no answer within ${timeoutMs} ms`);
            w.ended = true;
            req.destroy();
          });
          req.on('error', (e) => {
            w.ended = true;
            settle(false, e.message);
          });
          set.reqs.push(req);
        };
        if (urls.length === 0) resolve({ opened: 0, openedIdx: [], failed: 0, withWarnings: 0, ms: 0 });
        while (inFlight < concurrency && next < urls.length) start(offset + next++);
      });
    },
    record() {
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      recording = {
        delays: new Samples(),
        writes: [],
        clusters: [],
        loop,
        cpu: process.cpuUsage(),
        received: 0,
        firstMs: Number.POSITIVE_INFINITY,
        lastMs: 0,
        reads: 0,
        bytes: 0,
      };
      for (const set of sets.values()) for (const w of set.watches) w.got.clear();
      return null;
    },
    /**
     * Waits until every event in `written` (of the watch set `key`) arrived, or `deadlineMs` after the
     * driver's last write (`endMs`), then reports and sorts the missing ones.
     */
    async stop({
      key,
      written,
      endMs,
      deadlineMs,
    }: {
      key: string;
      written: Written;
      endMs: number;
      deadlineMs: number;
    }): Promise<StopResult> {
      const r = recording;
      const set = sets.get(key);
      if (!r || !set) throw new Error('not recording');
      const expected = written.seq.length;
      while (r.received < expected && nowMs() - endMs < deadlineMs)
        await new Promise((res) => setTimeout(res, 10));
      recording = undefined;
      const cpu = process.cpuUsage(r.cpu);
      r.loop.disable();
      let lost = 0;
      let ended = 0;
      let late = 0;
      for (let k = 0; k < expected; k++) {
        const w = set.watches[written.watch[k]!]!;
        const c = written.cluster[k]!;
        const seq = written.seq[k]!;
        if (w.got.get(c)?.has(seq)) continue;
        if ((w.last.get(c) ?? -1) > seq) lost++;
        else if (w.ended) ended++;
        else late++;
      }
      const sorted = r.delays.sorted();
      const p99 = percentile(sorted, 99);
      const delays = r.delays.values();
      const first = r.writes.reduce((m, t) => Math.min(m, t), Number.POSITIVE_INFINITY);
      const tail = { n: 0, fromMs: Number.POSITIVE_INFINITY, toMs: 0, byCluster: [] as number[] };
      for (let i = 0; i < delays.length; i++) {
        if (!(delays[i]! >= p99)) continue;
        const at = r.writes[i]! - first;
        tail.n++;
        tail.fromMs = Math.min(tail.fromMs, at);
        tail.toMs = Math.max(tail.toMs, at);
        tail.byCluster[r.clusters[i]!] = (tail.byCluster[r.clusters[i]!] ?? 0) + 1;
      }
      return {
        expected,
        received: r.received,
        lost,
        ended,
        late,
        watchesEnded: set.watches.filter((w) => w?.ended).length,
        firstMs: r.firstMs,
        lastMs: r.lastMs,
        drainMs: r.lastMs - endMs,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99,
        max: percentile(sorted, 100),
        loadLoopMaxMs: r.loop.max / 1e6,
        loadCpuMs: (cpu.user + cpu.system) / 1000,
        reads: r.reads,
        bytes: r.bytes,
        // none delivered: an empty tail, in numbers that survive IPC (Infinity would not)
        tail: {
          ...tail,
          fromMs: tail.n ? tail.fromMs : 0,
          byCluster: Array.from(tail.byCluster, (x) => x ?? 0),
        },
      };
    },
    close({ key }: { key: string }) {
      const set = sets.get(key);
      if (!set) return 0;
      for (const r of set.reqs) r.destroy();
      set.agent.destroy();
      sets.delete(key);
      return set.reqs.length;
    },
    counters() {
      return { otherLines };
    },
  };
  return actions;
}

/**
 * Opens `count` watches on the configmaps of namespaces `b<set>-0` … through `base` (a fleet or a member),
 * from the RV of a list of the first: the paired watch tools' watch set (watchburst-ab, watchp99-ab).
 * Throws unless every one opened.
 */
export async function openSetWatches(
  client: ReturnType<typeof watchersState>,
  key: string,
  base: string,
  set: string,
  count: number,
): Promise<OpenResult> {
  const list = (await (await fetch(`${base}/api/v1/namespaces/b${set}-0/configmaps`)).json()) as {
    metadata: { resourceVersion: string };
  };
  const rv = list.metadata.resourceVersion;
  const o = await client.open({
    key,
    urls: Array.from(
      { length: count },
      (_, i) => `${base}/api/v1/namespaces/b${set}-${i}/configmaps?watch=true&resourceVersion=${rv}`,
    ),
    timeoutMs: 120_000,
    concurrency: 200,
  });
  if (o.opened !== count) throw new Error(`${key}: ${o.failed} watches failed (${o.firstError})`);
  return o;
}

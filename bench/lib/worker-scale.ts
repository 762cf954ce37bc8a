/**
 * The worker (workerd through miniflare) over 10 / 200 / 1,000 canned clusters (./canned.ts): a merged
 * list (Table, as kubectl asks) and a merged watch, per round the wall time, the CPU time workerd spent
 * (every invocation of the request shares one isolate here, as service-bound invocations share the
 * top-level request's CPU on Workers) and workerd's peak resident memory; medians over the rounds.
 * One more list per scale goes through a connection-budget harness (test/helpers/budget.ts) that counts
 * each invocation's simultaneous upstream connections and requests, the figures Workers limits.
 *
 *   node --import tsx bench/lib/worker-scale.ts [--scales=10,200,1000] [--rounds=3] [--pods=10]
 *
 * CPU and memory are workerd's whole process (the runtime's own I/O included), so they bound what the
 * fleet's code uses from above. Linux only (/proc).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Log, LogLevel, Miniflare } from 'miniflare';
import { buildWorker, WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';
import { connectionBudget } from '../../test/helpers/budget.ts';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { CdpSession } from './cdp.ts';

function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const SCALES = arg('scales', '10,200,1000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '3'));
const PODS = Number(arg('pods', '10'));
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const mib = (b: number) => (b / 2 ** 20).toFixed(0);
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** workerd processes started since `before` (miniflare's child: its pid is not exposed) */
function workerdPids(): Set<number> {
  const out = new Set<number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'workerd') out.add(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS; // utime + stime
};
const peakMiB = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function startWorker(config: string, outbound?: (r: Request) => Promise<Response>) {
  const before = workerdPids();
  const mf = new Miniflare({
    name: 'fleet',
    modules: true,
    scriptPath: resolve('.cache/worker/worker.js'),
    ...WORKER_COMPATIBILITY,
    bindings: { FLEET_CONFIG: config },
    serviceBindings: { FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' } },
    ...(outbound ? { outboundService: outbound as never } : {}),
    host: '127.0.0.1',
    port: 0,
    // the V8 inspector: the isolate's own heap, what the 128 MB limit counts (./cdp.ts)
    inspectorPort: 0,
    log: new Log(LogLevel.WARN),
  });
  const url = (await mf.ready).origin;
  const pid = [...workerdPids()].find((p) => !before.has(p));
  if (!pid) throw new Error('no workerd process found');
  const cdp = await CdpSession.connect(await mf.getInspectorURL(), 'core:user:fleet');
  return {
    url,
    pid,
    cdp,
    stop: async () => {
      cdp.close();
      await mf.dispose();
    },
  };
}

/** A merged Table list: wall time, rows, bytes, and the Warning header if any. */
async function list(url: string) {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/pods`, { headers: { Accept: TABLE } });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`list answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { rows: unknown[]; metadata: { resourceVersion: string } };
  const rv = body.metadata.resourceVersion;
  return { ms, rows: body.rows.length, rv, bytes: text.length, warning: res.headers.get('warning') };
}

/** A merged watch: time to its head, and to every cluster's `events` events. */
async function watch(url: string, rv: string, want: number, whileOpen: () => Promise<number>) {
  const ac = new AbortController();
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/pods?watch=true&resourceVersion=${encodeURIComponent(rv)}`, {
    signal: ac.signal,
  });
  const headMs = performance.now() - t0;
  if (res.status !== 200) throw new Error(`watch answered ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  let lines = 0;
  const deadline = setTimeout(() => ac.abort(), 120_000);
  try {
    while (lines < want) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const b of value) if (b === 0x0a) lines++;
    }
    const allMs = performance.now() - t0;
    return { headMs, allMs, events: lines, warning: res.headers.get('warning'), openHeap: await whileOpen() };
  } finally {
    clearTimeout(deadline);
    ac.abort();
  }
}

await buildWorker('.cache/worker/worker.js');
const canned = await startCanned();
const rows: string[] = [];
try {
  for (const n of SCALES) {
    const { urls } = await canned.serve({ clusters: n, pods: PODS, latencyMs: 0, watchEvents: 1 });
    // above the Workers default (186: Cloudflare's 32 invocations per request); workerd enforces no count
    const config = JSON.stringify({ ...cannedFleetConfig(urls), maxClustersPerRequest: urls.length });
    const w = await startWorker(config);
    try {
      await list(w.url); // warm: the fleet built, discovery and membership read
      const baseMiB = rssMiB(w.pid);
      // garbage counts as used until V8 collects it, which it does before the isolate's limit: collected first
      // workerd's inspector has no collectGarbage; a heap snapshot collects first (its chunks are ignored)
      const gc = () => w.cdp.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, 120_000);
      await gc();
      const idle = await w.cdp.heapUsage();
      const l: Array<{ ms: number; cpu: number; heap: number }> = [];
      const wt: Array<{ head: number; all: number; cpu: number; heap: number; open: number }> = [];
      let shape = '';
      for (let r = 0; r < ROUNDS; r++) {
        let c0 = cpuMs(w.pid);
        let heap = w.cdp.watchHeap(50);
        const got = await list(w.url);
        l.push({ ms: got.ms, cpu: cpuMs(w.pid) - c0, heap: (await heap.stop()).peakUsedPlusBacking });
        if (got.rows !== n * PODS || got.warning) throw new Error(`list: ${got.rows} rows, ${got.warning}`);
        if (process.env.DEBUG) console.log(`${n} clusters, round ${r + 1}: list ${got.ms.toFixed(0)} ms`);
        shape = `${got.rows} rows, ${(got.bytes / 2 ** 20).toFixed(1)} MiB`;
        c0 = cpuMs(w.pid);
        heap = w.cdp.watchHeap(50);
        let cpuOpen = 0;
        const ev = await watch(w.url, got.rv, n, async () => {
          cpuOpen = cpuMs(w.pid) - c0;
          await gc();
          const h = await w.cdp.heapUsage();
          return h.usedSize + (h.backingStorageSize ?? 0);
        });
        const wheap = (await heap.stop()).peakUsedPlusBacking;
        wt.push({ head: ev.headMs, all: ev.allMs, cpu: cpuOpen, heap: wheap, open: ev.openHeap });
        // every upstream watch closed before the next round (the client's abort reached them all)
        const end = Date.now() + 60_000;
        while ((await canned.counters()).openWatches > 0 && Date.now() < end)
          await new Promise((r) => setTimeout(r, 200));
        if (ev.events < n || ev.warning) throw new Error(`watch: ${ev.events} events, ${ev.warning}`);
      }
      const peak = peakMiB(w.pid);
      await gc();
      const after = await w.cdp.heapUsage();
      rows.push(
        `${String(n).padStart(5)} clusters | list ${shape}: ${median(l.map((x) => x.ms)).toFixed(0)} ms wall, ${median(l.map((x) => x.cpu)).toFixed(0)} ms CPU | watch: head ${median(wt.map((x) => x.head)).toFixed(0)} ms, all ${n} events ${median(wt.map((x) => x.all)).toFixed(0)} ms, ${median(wt.map((x) => x.cpu)).toFixed(0)} ms CPU | isolate heap (JS + ArrayBuffers) collected ${mib(idle.usedSize + (idle.backingStorageSize ?? 0))}, peak list ${mib(median(l.map((x) => x.heap)))} / watch ${mib(median(wt.map((x) => x.heap)))}, watch open collected ${mib(median(wt.map((x) => x.open)))}, all closed collected ${mib(after.usedSize + (after.backingStorageSize ?? 0))} MiB | workerd RSS ${baseMiB.toFixed(0)} MiB after warm-up, peak ${peak.toFixed(0)} MiB`,
      );
    } finally {
      await w.stop();
    }
    // the connection budget, counted per invocation (the fleet's traceparent span)
    const budget = connectionBudget(6);
    const b = await startWorker(config, budget.outbound);
    try {
      const got = await list(b.url);
      const perInvocation = [...budget.invocations().entries()].filter(([k]) => k !== 'untagged');
      rows.push(
        `${String(n).padStart(5)} clusters | budget, list: ${got.rows} rows; invocations fetching upstream ${perInvocation.length}, most upstream requests in one ${Math.max(0, ...perInvocation.map(([, v]) => v))}; most simultaneous connections in one ${budget.maxSeen()}; refused ${budget.refused()}`,
      );
      // a watch holds its connections for its whole life: counted while every cluster's event is in
      const before = new Set(budget.invocations().keys());
      const ev = await watch(b.url, got.rv, n, async () => 0);
      const watching = [...budget.invocations().keys()].filter((k) => k !== 'untagged' && !before.has(k));
      rows.push(
        `${String(n).padStart(5)} clusters | budget, watch: ${ev.events} events; invocations watching upstream ${watching.length}; most simultaneous connections in one (list or watch) ${budget.maxSeen()}; refused ${budget.refused()}`,
      );
    } finally {
      await b.stop();
    }
  }
} finally {
  await canned.stop();
}
console.log(`worker-scale: ${ROUNDS} rounds, ${PODS} pods per cluster, medians`);
for (const r of rows) console.log(r);

import { resolve } from 'node:path';
import { Log, LogLevel } from 'miniflare';
import { buildWorker } from '../../scripts/build-worker.mjs';
import { connectionBudget } from '../../test/helpers/budget.ts';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { CdpSession } from './cdp.ts';
import { procMemory } from './proc.ts';
import { median, processCpuMs } from './stats.ts';
import { startWorkerdFleet } from './workerd.ts';

function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const SCALES = arg('scales', '10,200,1000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '3'));
const PODS = Number(arg('pods', '10'));
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const mib = (b: number) => (b / 2 ** 20).toFixed(0);
const cpuMs = (pid: number) => processCpuMs(pid) ?? Number.NaN;
const peakMiB = (pid: number) => (procMemory(pid)?.hwm ?? 0) / 2 ** 20;
const rssMiB = (pid: number) => (procMemory(pid)?.rss ?? 0) / 2 ** 20;

async function startWorker(config: string, outbound?: (r: Request) => Promise<Response>) {
  const { mf, url, pid } = await startWorkerdFleet(resolve('.cache/worker/worker.js'), config, {
    ...(outbound ? { outboundService: outbound as never } : {}),
    // the V8 inspector: the isolate's own heap, what the 128 MB limit counts (./cdp.ts)
    inspectorPort: 0,
    log: new Log(LogLevel.WARN),
  });
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

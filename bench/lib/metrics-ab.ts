/**
 * The metrics' cost per count, this tree against another, in one process (not a test, not a bench case):
 * the same pre-drawn observations through each tree's FleetMetrics, interleaved by round, CPU ns per
 * count (medians over rounds), young-generation collections per million counts (what a count allocates
 * shows there), and the two registries' expositions compared byte for byte. The other tree is a checkout:
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node --import tsx bench/lib/metrics-ab.ts /tmp/base [rounds=7] [counts=500000] [clusters=200]
 *
 * Cases: `upstream` (FleetMetrics.upstream, once per upstream answer: the latency histogram and the
 * cluster's up gauge), `observe` (Histogram.observe by labels, the generic path), `request` (a request's
 * start and end: in-flight gauge, request counter and latency histogram).
 */
import { resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { median } from './stats.ts';

interface Metrics {
  upstream(cluster: string, code: number | undefined, seconds: number, failure?: string): void;
  startRequest(labels: Record<string, string>, longRunning: boolean, now: () => number): (c: number) => void;
  upstreamDuration: { observe(labels: Record<string, string>, v: number): void };
  expose(): string;
}
type Make = () => Metrics;

async function load(root: string): Promise<Make> {
  const { FleetMetrics } = await import(resolve(root, 'src/metrics/fleet.ts'));
  return () => new FleetMetrics();
}

const [baseRoot, roundsS = '7', nS = '500000', clustersS = '200'] = process.argv.slice(2);
if (!baseRoot) throw new Error('usage: metrics-ab.ts <other tree> [rounds] [counts] [clusters]');
const rounds = Number(roundsS);
const N = Number(nS);
const C = Number(clustersS);

// the observations, drawn once (a fixed generator: both trees and every run count the same ones)
let seed = 42;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
// cluster names as the membership gives them (one string per cluster, made at runtime, not literals)
const clusters = Array.from({ length: C }, (_, i) => `member-${String(i).padStart(3, '0')}`.slice(0));
const codes = [200, 200, 200, 200, 200, 200, 200, 404, 500, 503];
const seconds = Float64Array.from({ length: 4096 }, () => -Math.log(1 - rnd()) * 0.03);
const codeOf = Uint16Array.from({ length: 4096 }, () => codes[Math.floor(rnd() * codes.length)]!);
// request labels as the request parser gives them: fresh objects, a handful of distinct series
const resources = ['pods', 'deployments', 'services', 'configmaps', 'nodes', 'events'];
const verbs = ['LIST', 'GET', 'WATCH', 'PATCH'];
const requests = Array.from({ length: 4096 }, () => ({
  verb: verbs[Math.floor(rnd() * verbs.length)]!,
  group: '',
  version: 'v1',
  resource: resources[Math.floor(rnd() * resources.length)]!,
  subresource: '',
  scope: rnd() < 0.5 ? 'namespace' : 'cluster',
  component: 'apiserver',
}));

const cases: Record<string, (m: Metrics, n: number) => void> = {
  upstream: (m, n) => {
    for (let i = 0; i < n; i++) m.upstream(clusters[i % C]!, codeOf[i & 4095]!, seconds[i & 4095]!);
  },
  observe: (m, n) => {
    const h = m.upstreamDuration;
    for (let i = 0; i < n; i++)
      h.observe({ cluster: clusters[i % C]!, code: String(codeOf[i & 4095]!) }, seconds[i & 4095]!);
  },
  request: (m, n) => {
    let t = 0;
    const now = () => (t += 0.25);
    for (let i = 0; i < n; i++) {
      const labels = requests[i & 4095]!;
      m.startRequest(labels, false, now)(codeOf[i & 4095]!);
    }
  },
};

let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === 1) scavenges++;
}).observe({ entryTypes: ['gc'] });

/** CPU ns per count and young collections per million counts, of `n` counts of one case */
async function run(m: Metrics, f: (m: Metrics, n: number) => void, n: number) {
  const s0 = scavenges;
  const c0 = process.cpuUsage();
  f(m, n);
  const d = process.cpuUsage(c0);
  // gc entries arrive in a later turn
  await new Promise((r) => setTimeout(r, 0));
  return { ns: ((d.user + d.system) * 1000) / n, gcPerM: ((scavenges - s0) * 1e6) / n };
}

const [base, work] = [await load(baseRoot), await load('.')];
for (const [name, f] of Object.entries(cases)) {
  const a = base();
  const b = work();
  // warm-up: every series made, the code optimised
  f(a, 20_000);
  f(b, 20_000);
  const ra: { ns: number; gcPerM: number }[] = [];
  const rb: typeof ra = [];
  for (let r = 0; r < rounds; r++) {
    // interleaved, and which goes first alternates
    if (r % 2) {
      rb.push(await run(b, f, N));
      ra.push(await run(a, f, N));
    } else {
      ra.push(await run(a, f, N));
      rb.push(await run(b, f, N));
    }
  }
  const same = a.expose() === b.expose();
  const na = median(ra.map((x) => x.ns));
  const nb = median(rb.map((x) => x.ns));
  console.log(
    `${name.padEnd(8)} other ${na.toFixed(1)} ns, this ${nb.toFixed(1)} ns per count, this/other ${(nb / na).toFixed(2)}; young GCs per 1M counts other ${median(ra.map((x) => x.gcPerM)).toFixed(1)}, this ${median(rb.map((x) => x.gcPerM)).toFixed(1)}; expositions ${same ? 'byte-identical' : 'DIFFER'}`,
  );
}

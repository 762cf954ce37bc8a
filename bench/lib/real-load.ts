/**
 * The load of the real-bed cases (../cases/real.ts), run in the load process: TLS clients with client
 * certificates (the fleets and the kube-apiservers of the bed both ask for one), so the bench's plain-HTTP
 * sequences (./sequence.ts) and autocannon do not fit. Three shapes, each target's answers interleaved with
 * the others' (the order rotating):
 *   - answers: one answer = one or more GETs (in parallel or in turn), read to the end; wall time, bytes,
 *     items, and the CPU time a given process spent meanwhile (the fleets' process, from /proc);
 *   - gets: `n` GETs of one object in turn on one connection (latency), then `concurrency` loops for
 *     `seconds` (throughput);
 *   - watches: one "watch" = one or more watch streams opened at once from given RVs; time from sending
 *     to the first event and to the `expect`-th, every line parsed as a client does. A step with `warm`
 *     sends its watch on a connection of its own that has just answered a GET of `warm` (kubectl get -w:
 *     its list, then the watch on the same kept-alive connection), so no client handshake is timed; without
 *     it, on a new connection of the identity's pool (a TCP and resumed TLS handshake in the time).
 */
import { Agent, Client, request } from 'undici';
import { processCpuMs } from './stats.ts';

export interface Tls {
  ca: string;
  cert: string;
  key: string;
}

export interface RealStep {
  url: string;
  /** the key of its client identity in the spec's `tls` */
  as: string;
  headers?: Record<string, string>;
  /** watches: GET this on the watch's own connection first, untimed (the connection is warm when it goes) */
  warm?: string;
}

export interface RealTarget {
  name: string;
  steps: RealStep[];
  parallel?: boolean;
  /** watches: events to wait for over its streams, when not the spec's (the floor proxy's one member) */
  expect?: number;
}

const agents = new Map<string, Agent>();
function agentFor(as: string, tls: Record<string, Tls>): Agent {
  let a = agents.get(as);
  if (!a) {
    const t = tls[as];
    if (!t) throw new Error(`real-load: no TLS identity "${as}"`);
    a = new Agent({
      keepAliveTimeout: 60_000,
      connections: 64,
      connect: { ca: t.ca, cert: t.cert, key: t.key },
    });
    agents.set(as, a);
  }
  return a;
}

function rotate<T>(xs: T[], by: number): T[] {
  const k = xs.length ? by % xs.length : 0;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

const ACCEPT_JSON = { accept: 'application/json' };

// ------------------------------------------------------------------------------------------------ answers

export interface AnswersSpec {
  targets: RealTarget[];
  tls: Record<string, Tls>;
  iterations: number;
  warmup?: number;
  /** the process whose CPU time is recorded per answer */
  cpuPid?: number;
  /** counted in every body: one per item */
  countPattern?: string;
}

export interface Answer {
  ms: number;
  bytes: number;
  items: number;
  cpuMs: number;
  failed?: string;
}

async function oneAnswer(t: RealTarget, spec: AnswersSpec): Promise<Answer> {
  const pattern = spec.countPattern ?? '';
  let bytes = 0;
  let items = 0;
  let failed: string | undefined;
  const cpu0 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
  const t0 = performance.now();
  const one = async (s: RealStep) => {
    try {
      const res = await request(s.url, {
        headers: { ...ACCEPT_JSON, ...s.headers },
        dispatcher: agentFor(s.as, spec.tls),
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      });
      if (res.statusCode !== 200) {
        failed ??= `${s.url}: HTTP ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`;
        return;
      }
      let carry = '';
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (!pattern) continue;
        const str = carry + chunk.toString('latin1');
        for (let i = str.indexOf(pattern); i >= 0; i = str.indexOf(pattern, i + pattern.length)) items++;
        carry = str.slice(Math.max(0, str.length - pattern.length + 1));
      }
    } catch (e) {
      failed ??= `${s.url}: ${(e as Error).message}`;
    }
  };
  if (t.parallel) await Promise.all(t.steps.map(one));
  else for (const s of t.steps) await one(s);
  const ms = performance.now() - t0;
  const cpu1 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
  return {
    ms,
    bytes,
    items,
    cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : Number.NaN,
    ...(failed ? { failed } : {}),
  };
}

export async function realAnswers(spec: AnswersSpec): Promise<Record<string, Answer[]>> {
  const out: Record<string, Answer[]> = Object.fromEntries(spec.targets.map((t) => [t.name, []]));
  for (let i = 0; i < (spec.warmup ?? 0); i++)
    for (const t of rotate(spec.targets, i)) await oneAnswer(t, spec);
  for (let i = 0; i < spec.iterations; i++)
    for (const t of rotate(spec.targets, i)) out[t.name]!.push(await oneAnswer(t, spec));
  return out;
}

// ------------------------------------------------------------------------------------------------ gets

export interface GetsSpec {
  targets: Array<{ name: string; step: RealStep }>;
  tls: Record<string, Tls>;
  /** GETs in turn per target (latency) */
  n: number;
  /** then this many loops at once for `seconds` (throughput) */
  concurrency: number;
  seconds: number;
  cpuPid?: number;
}

export interface GetsResult {
  /** latencies of the GETs in turn, ms, sorted */
  latencies: number[];
  rps: number;
  /** CPU ms of `cpuPid` per GET under concurrency */
  cpuMsPerGet: number;
  failed: number;
  firstFailure?: string;
  /** the body of the first GET, for checking what came back */
  body: string;
}

async function get(s: RealStep, tls: Record<string, Tls>): Promise<{ status: number; body: string }> {
  const res = await request(s.url, {
    headers: { ...ACCEPT_JSON, ...s.headers },
    dispatcher: agentFor(s.as, tls),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

export async function realGets(spec: GetsSpec): Promise<Record<string, GetsResult>> {
  const out: Record<string, GetsResult> = {};
  for (const t of spec.targets)
    out[t.name] = { latencies: [], rps: Number.NaN, cpuMsPerGet: Number.NaN, failed: 0, body: '' };
  const note = (name: string, r: { status: number; body: string } | Error) => {
    const o = out[name]!;
    if (r instanceof Error || r.status !== 200) {
      o.failed++;
      o.firstFailure ??= r instanceof Error ? r.message : `HTTP ${r.status} ${r.body.slice(0, 200)}`;
      return false;
    }
    if (!o.body) o.body = r.body;
    return true;
  };
  // warm: connections and the fleets' JIT
  for (const t of spec.targets)
    for (let i = 0; i < 5; i++) await get(t.step, spec.tls).catch(() => undefined);
  // latency: the targets' GETs alternate one by one
  for (let i = 0; i < spec.n; i++)
    for (const t of rotate(spec.targets, i)) {
      const t0 = performance.now();
      const r = await get(t.step, spec.tls).catch((e: Error) => e);
      if (note(t.name, r)) out[t.name]!.latencies.push(performance.now() - t0);
    }
  // throughput: each target alone, in turn
  for (const t of spec.targets) {
    let ok = 0;
    const cpu0 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
    const t0 = performance.now();
    const end = t0 + spec.seconds * 1000;
    await Promise.all(
      Array.from({ length: spec.concurrency }, async () => {
        while (performance.now() < end)
          if (note(t.name, await get(t.step, spec.tls).catch((e: Error) => e))) ok++;
      }),
    );
    const s = (performance.now() - t0) / 1000;
    const cpu1 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
    out[t.name]!.rps = ok / s;
    if (cpu0 !== null && cpu1 !== null && ok) out[t.name]!.cpuMsPerGet = (cpu1 - cpu0) / ok;
  }
  for (const t of spec.targets) out[t.name]!.latencies.sort((a, b) => a - b);
  return out;
}

// ------------------------------------------------------------------------------------------------ watches

export interface WatchesSpec {
  /** each target's steps are the watch streams it opens at once (a full URL with its resourceVersion) */
  targets: RealTarget[];
  tls: Record<string, Tls>;
  /** events (any type but BOOKMARK) to wait for, over every stream of a target */
  expect: number;
  timeoutMs: number;
  cpuPid?: number;
}

export interface WatchRun {
  /** from sending the requests to the first event line */
  firstMs: number;
  /** from sending to the `expect`-th event */
  allMs: number;
  /** from the first event to the last: the rate the burst came at */
  burstMs: number;
  received: number;
  /** events per cluster: the name's `.clusterspace.<c>` through a fleet, the stream's step index directly */
  byCluster: Record<string, number>;
  cpuMs: number;
  /** warm steps: connections their watch found closed after the warm GET (a new one dialled in the time) */
  redialled?: number;
  failed?: string;
}

/** a client of one connection per warm step: the GET, then the watch on the same kept-alive socket */
async function warmClient(
  s: RealStep,
  tls: Record<string, Tls>,
): Promise<{ client: Client; dials: () => number }> {
  const t = tls[s.as];
  if (!t) throw new Error(`real-load: no TLS identity "${s.as}"`);
  const client = new Client(new URL(s.url).origin, {
    connect: { ca: t.ca, cert: t.cert, key: t.key },
    keepAliveTimeout: 60_000,
  });
  let n = 0;
  client.on('connect', () => n++);
  const res = await request(s.warm!, { headers: ACCEPT_JSON, dispatcher: client });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${s.warm}: HTTP ${res.statusCode}`);
  return { client, dials: () => n };
}

async function watchOnce(t: RealTarget, spec: WatchesSpec): Promise<WatchRun> {
  const warm = await Promise.all(t.steps.map((s) => (s.warm ? warmClient(s, spec.tls) : undefined)));
  const run = await watchTimed(t, spec, (k) => warm[k]?.client);
  for (const w of warm) await w?.client.destroy().catch(() => {});
  const redialled = warm.reduce((n, w) => n + (w ? w.dials() - 1 : 0), 0);
  return t.steps.some((s) => s.warm) ? { ...run, redialled } : run;
}

function watchTimed(
  t: RealTarget,
  spec: WatchesSpec,
  warmed: (step: number) => Client | undefined,
): Promise<WatchRun> {
  const expect = t.expect ?? spec.expect;
  return new Promise((resolve) => {
    const ac = new AbortController();
    const t0 = performance.now();
    const cpu0 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
    let first = Number.NaN;
    let received = 0;
    const byCluster: Record<string, number> = {};
    let done = false;
    const finish = (failed?: string) => {
      if (done) return;
      done = true;
      const now = performance.now();
      clearTimeout(timer);
      ac.abort();
      const cpu1 = spec.cpuPid ? processCpuMs(spec.cpuPid) : null;
      resolve({
        firstMs: first - t0,
        allMs: now - t0,
        burstMs: now - first,
        received,
        byCluster,
        cpuMs: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : Number.NaN,
        ...(failed ? { failed } : {}),
      });
    };
    const timer = setTimeout(
      () =>
        finish(
          `${received}/${expect} events after ${spec.timeoutMs} ms (by cluster: ${JSON.stringify(byCluster)})`,
        ),
      spec.timeoutMs,
    );
    const onLine = (line: string, step: number) => {
      if (!line.trim()) return;
      const ev = JSON.parse(line) as {
        type?: string;
        object?: { code?: number; message?: string; metadata?: { name?: string } };
      };
      if (ev.type === 'BOOKMARK') return;
      if (ev.type === 'ERROR') return finish(`ERROR event: ${ev.object?.code} ${ev.object?.message}`);
      if (Number.isNaN(first)) first = performance.now();
      const c = /\.clusterspace\.([^.]+)$/.exec(ev.object?.metadata?.name ?? '')?.[1] ?? `stream${step}`;
      byCluster[c] = (byCluster[c] ?? 0) + 1;
      if (++received >= expect) finish();
    };
    for (const [k, s] of t.steps.entries())
      request(s.url, {
        headers: { ...ACCEPT_JSON, ...s.headers },
        dispatcher: warmed(k) ?? agentFor(s.as, spec.tls),
        signal: ac.signal,
        headersTimeout: spec.timeoutMs,
        bodyTimeout: 0,
      }).then(
        async (res) => {
          if (res.statusCode !== 200)
            return finish(`${s.url}: HTTP ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
          let carry = '';
          try {
            for await (const chunk of res.body as AsyncIterable<Buffer>) {
              const str = carry + chunk.toString('utf8');
              const lines = str.split('\n');
              carry = lines.pop()!;
              for (const l of lines) if (!done) onLine(l, k);
              if (done) break;
            }
          } catch (e) {
            if (!done) finish(`${s.url}: ${(e as Error).message}`);
          }
          if (!done) finish(`${s.url}: the stream ended after ${received}/${expect} events`);
        },
        (e: Error) => finish(`${s.url}: ${e.message}`),
      );
  });
}

/** each target once, in the order given (the caller rotates it between rounds) */
export async function realWatches(spec: WatchesSpec): Promise<Record<string, WatchRun>> {
  const out: Record<string, WatchRun> = {};
  for (const t of spec.targets) out[t.name] = await watchOnce(t, spec);
  return out;
}

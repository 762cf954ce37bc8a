/**
 * Same-run A/B of fleet builds on merged-watch's fixed-rate phase alone (bench/cases/merged-watch.ts, the
 * "added p99 at 1,000 events/s over 1,000 merged watches" row): per build W merged watches over 3
 * simulated clusters (one namespace each), and W direct watches on the first cluster; per round a phase of
 * `rate` events/s for `phaseS` s per target (the order alternating), and per phase the delay p50/p99 at the
 * watchers (this process), the added p99 (fleet − direct of the same round), and from inside each fleet
 * process (through its inspector): its event loop's longest delay (perf_hooks, 1 ms resolution) and its
 * GC pauses, each with its time into the phase.
 *
 *   node --import tsx bench/lib/watchp99-ab.ts bundles=base:/tmp/base-136/dist/node/main.js,head:dist/node/main.js
 *        [rounds=6] [watches=1000] [rate=1000] [phaseS=1] [fresh=1] [stalls=1] [profile=1] [out=1] [perf0=1]
 *
 * A build is name:bundle[:node flags, space-separated] (the same bundle twice with other flags: a flag's A/B).
 *
 * fresh=1 (default): every round starts the fleets afresh, opens their watches, lets them settle (two full
 * GCs, as the case's memory figure does) and warms each target up for 0.5 s, then measures one phase
 * each: the situation of a --quick run's only round (the first phase after the warm-up). fresh=0: the
 * fleets stay, and every round is a later phase.
 * stalls=1: the fleets also time their loop with a 1 ms interval and, for each gap of 3 ms or more, say
 * when it was, how long, and how much of it the main thread spent on a CPU vs waiting for one
 * (/proc/thread-self/schedstat), and neither ("blocked": in a system call or waiting on another thread,
 * as a scavenge's main thread waits for its helper threads): the fleet's own work (JS, GC) or the
 * machine's other processes. The interval costs the fleet a little CPU: a diagnosis, not an A/B figure.
 * profile=1: each measured fleet phase is CPU-profiled (V8 sampling profiler, 200 µs; files in
 * /tmp/watchp99-prof), and every busy stretch of the main thread of 2 ms CPU or more is listed with when it
 * began, its length, what it was entered from and its hottest functions: which task held the loop.
 * out=1: the fleets' own output on stderr (with node flags such as --trace-gc-nvp). To place a V8 log
 * (flags --log-code --log-deopt --logfile=…) on the phase: each inspector evaluation is a `Script` at
 * ` :1:1` in its code-creation lines, the phase's recorder the last one before its events (perf0=1 prints
 * its performance.now(); the log's clock starts a little later).
 * heap=1: each measured fleet phase runs under V8's sampling heap profiler (started in the fleet through an
 * in-process inspector session, 128-byte interval, no GC forced before the report): what it still holds at
 * the phase's end is what outlived a scavenge (the young generation's dead are dropped at each one; what
 * was promoted and died since waits for a full GC), by allocating function, in bytes per event. A
 * diagnosis (the sampling costs the fleet CPU), not an A/B figure.
 * The simulated clusters run in a child process (./watchburst-ab.ts's, which this one drives).
 */
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type FleetProcess, startFleetProcess } from './fleetproc.ts';
import { median } from './stats.ts';
import { openSetWatches, type StopResult, type Written, watchersState } from './watchers.ts';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);
const ROUNDS = Number(args.rounds ?? 6);
const W = Number(args.watches ?? 1000);
const RATE = Number(args.rate ?? 1000);
const PHASE_S = Number(args.phaseS ?? 1);
const FRESH = args.fresh !== '0';
const STALLS = args.stalls === '1';
const PROFILE = args.profile === '1';
const HEAP = args.heap === '1';
/** in the fleet: the sampling heap profiler on (an in-process inspector session) */
const HEAP_START = `(() => {
  const s = new (process.getBuiltinModule('inspector').Session)();
  s.connect();
  s.post('HeapProfiler.enable');
  s.post('HeapProfiler.startSampling', { samplingInterval: 128 });
  globalThis.__p99Heap = s;
  return true;
})()`;
/** in the fleet: the sampled bytes still held, by allocating function (self), largest first */
const HEAP_STOP = `(() => {
  const s = globalThis.__p99Heap;
  delete globalThis.__p99Heap;
  // an in-process session answers synchronously
  let out = [];
  s.post('HeapProfiler.getSamplingProfile', (err, r) => {
    if (err) return;
    const by = new Map();
    const walk = (n, stack) => {
      const f = n.callFrame;
      const name = (f.functionName || '(anonymous)') + ' ' + f.url.replace(/^.*\\//, '') + ':' + (f.lineNumber + 1);
      if (n.selfSize) {
        // charged to the function, with its nearest caller in the fleet's own bundle
        const own = stack.findLast((x) => x.includes('main.js')) ?? '';
        const key = own && own !== name ? name + ' <- ' + own : name;
        by.set(key, (by.get(key) ?? 0) + n.selfSize);
      }
      for (const c of n.children) walk(c, f.url.includes('main.js') ? [...stack, name] : stack);
    };
    walk(r.profile.head, []);
    out = [...by].sort((a, b) => b[1] - a[1]).slice(0, 25);
  });
  s.post('HeapProfiler.stopSampling');
  s.disconnect();
  return out;
})()`;
const PROFILE_DIR = '/tmp/watchp99-prof';
const SIMS = fileURLToPath(new URL('./watchburst-ab.ts', import.meta.url));

interface FleetSide {
  loopMaxMs: number;
  gc: Array<{ atMs: number; ms: number; minor: boolean }>;
  stalls: Array<{ atMs: number; ms: number; cpuMs: number; waitMs: number }>;
}

/** installed in a fleet before a phase (through its inspector); `__p99Stop()` returns a FleetSide */
const RECORDER = (stalls: boolean) => `(() => {
  const ph = process.getBuiltinModule('perf_hooks');
  const fs = process.getBuiltinModule('fs');
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const t0 = now();
  const x = { gc: [], stalls: [] };
  const ob = new ph.PerformanceObserver((list) => {
    for (const e of list.getEntries())
      x.gc.push({ ms: e.duration, minor: e.detail?.kind === ph.constants.NODE_PERFORMANCE_GC_MINOR, perfStart: e.startTime });
  });
  ob.observe({ entryTypes: ['gc'] });
  const perf0 = ph.performance.now();
  const h = ph.monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let timer;
  if (${stalls}) {
    const sched = () => fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    let last = now();
    let s0 = sched();
    timer = setInterval(() => {
      const t = now();
      if (t - last >= 3) {
        const s = sched();
        x.stalls.push({ atMs: last - t0, ms: t - last, cpuMs: (s[0] - s0[0]) / 1e6, waitMs: (s[1] - s0[1]) / 1e6 });
        s0 = s;
      } else s0 = sched();
      last = t;
    }, 1);
  }
  globalThis.__p99Stop = () => {
    ob.disconnect();
    h.disable();
    if (timer) clearInterval(timer);
    delete globalThis.__p99Stop;
    return { loopMaxMs: h.max / 1e6, stalls: x.stalls,
      gc: x.gc.map((g) => ({ atMs: g.perfStart - perf0, ms: g.ms, minor: g.minor })) };
  };
  return perf0;
})()`;

interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/**
 * The profile's busy stretches (consecutive samples not idle) of 3 ms or more: when (ms after `fromMs`,
 * CLOCK_MONOTONIC as the profile's µs clock), how long, the frame they were entered from (the root's
 * child) and their three hottest functions by self time.
 */
function busyRuns(path: string, fromMs: number): string[] {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id: number) => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || '(anon)'}${f.url ? `@${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}` : ''}`;
  };
  const entry = (id: number) => {
    let n = id;
    for (let up = parent.get(n); up !== undefined && parent.get(up) !== undefined; up = parent.get(n)) n = up;
    return name(n);
  };
  const out: string[] = [];
  let t = p.startTime;
  let run:
    | { from: number; to: number; n: number; self: Map<string, number>; entries: Map<string, number> }
    | undefined;
  const flush = () => {
    // on a loaded machine a descheduled thread's samples come late and merged: the count of samples
    // (× the 200 µs interval) is the stretch's CPU, its span the wall time
    if (run && run.n * 200 >= 2000) {
      const top = (m: Map<string, number>, k: number) =>
        [...m]
          .sort((a, b) => b[1] - a[1])
          .slice(0, k)
          .map(([f, us]) => `${f} ${(us / 1000).toFixed(1)}`)
          .join(', ');
      out.push(
        `@${(run.from / 1000 - fromMs).toFixed(0)}:${((run.to - run.from) / 1000).toFixed(1)} ms (cpu ≈ ${((run.n * 200) / 1000).toFixed(1)}) from ${top(run.entries, 2)}; self ${top(run.self, 3)}`,
      );
    }
    run = undefined;
  };
  for (let i = 0; i < p.samples.length; i++) {
    const prev = t;
    t += p.timeDeltas[i] ?? 0;
    const id = p.samples[i]!;
    const fn = byId.get(id)!.callFrame.functionName;
    if (fn === '(idle)') {
      flush();
      continue;
    }
    run ??= { from: prev, to: t, n: 0, self: new Map(), entries: new Map() };
    run.to = t;
    run.n++;
    const us = 200;
    run.self.set(name(id), (run.self.get(name(id)) ?? 0) + us);
    run.entries.set(entry(id), (run.entries.get(entry(id)) ?? 0) + us);
  }
  flush();
  return out;
}

interface Target {
  name: string;
  set: string;
  bundle?: string;
  nodeArgs?: string[];
  f?: FleetProcess;
  p50: number[];
  p99: number[];
  max: number[];
  loopMax: number[];
  gcMax: number[];
  gcN: number[];
  /** per phase (stalls=1): the longest gap's share on a CPU, waiting for one, and neither (blocked) */
  gapCpu: number[];
  gapWait: number[];
  gapBlocked: number[];
  tails: string[];
}

/** a target's namespace set and its figures, none yet */
const noFigures = (set: string) => ({
  set,
  p50: [] as number[],
  p99: [] as number[],
  max: [] as number[],
  loopMax: [] as number[],
  gcMax: [] as number[],
  gcN: [] as number[],
  gapCpu: [] as number[],
  gapWait: [] as number[],
  gapBlocked: [] as number[],
  tails: [] as string[],
});

async function main(): Promise<void> {
  const child = fork(SIMS, ['sims'], { execArgv: ['--import', 'tsx'] });
  const reply = <T>() => new Promise<T>((r) => child.once('message', (m) => r(m as T)));
  // name:path[:node flags, space-separated]
  const specs = (args.bundles ?? '').split(',').map((b) => b.split(':') as [string, string, string?]);
  if (!specs[0]?.[1]) throw new Error('bundles=name:path[:flags][,name:path[:flags]] is required');
  const fleets: Target[] = specs.map(([name, bundle, flags], k) => ({
    name,
    bundle,
    nodeArgs: (flags ?? '').split(' ').filter(Boolean),
    ...noFigures(String.fromCharCode(102 + k)), // f, g, …: a namespace prefix per build
  }));
  const direct: Target = { name: 'direct', ...noFigures('d') };
  child.send({ op: 'prepare', sets: [...fleets.map((f) => f.set), 'd'], watches: W });
  const { memberUrls, config } = await reply<{ memberUrls: Record<string, string>; config: unknown }>();
  const client = watchersState();
  const open = (t: Target) => openSetWatches(client, t.name, t.f?.url ?? memberUrls.member1!, t.set, W);
  const start = async (t: Target) => {
    t.f = await startFleetProcess(config, {
      bundle: t.bundle!,
      inspect: true,
      ...(t.nodeArgs?.length ? { nodeArgs: t.nodeArgs } : {}),
      // out=1: the fleet's own output (say --trace-gc-nvp's lines) on stderr, marked with the build's name
      ...(args.out === '1'
        ? { onOutput: (text: string) => process.stderr.write(text.replace(/^(?=.)/gm, `   [${t.name}] `)) }
        : {}),
    });
    await open(t);
    // settled as the case's memory figure leaves it: full GCs, a pause, full GCs
    await t.f.memory(true);
    await new Promise((r) => setTimeout(r, 500));
    await t.f.memory(true);
  };
  const stop = async (t: Target) => {
    await client.close({ key: t.name });
    t.f?.stop();
    t.f = undefined;
  };
  /** one phase (or a warm-up, unrecorded) of target t */
  const phase = async (t: Target, seconds: number, measured: boolean) => {
    if (measured && t.f) {
      const perf0 = await t.f.evaluate<number>(RECORDER(STALLS));
      if (args.perf0)
        console.error(`   ${t.name}: phase recorder installed at performance.now() ${perf0.toFixed(1)} ms`);
    }
    if (measured && t.f && PROFILE) await t.f.profileStart();
    if (measured && t.f && HEAP) await t.f.evaluate(HEAP_START);
    client.record();
    const total = Math.round(RATE * seconds);
    child.send({ op: 'burst', set: t.set, watches: W, clusters: t.f ? 3 : 1, total, rate: RATE });
    const d = await reply<{ written: Written; startMs: number; endMs: number }>();
    const s: StopResult = await client.stop({
      key: t.name,
      written: d.written,
      endMs: d.endMs,
      deadlineMs: 10_000,
    });
    if (!measured) return;
    if (s.received !== s.expected) console.error(`${t.name}: ${s.expected - s.received} events missing`);
    t.p50.push(s.p50);
    t.p99.push(s.p99);
    t.max.push(s.max);
    t.tails.push(`${s.tail.fromMs.toFixed(0)}-${s.tail.toMs.toFixed(0)}`);
    if (!t.f) return;
    await new Promise((r) => setTimeout(r, 50));
    const f = await t.f.evaluate<FleetSide>('globalThis.__p99Stop()');
    if (HEAP) {
      const held = await t.f.evaluate<Array<[string, number]>>(HEAP_STOP);
      const total = held.reduce((a, [, b]) => a + b, 0);
      console.error(
        `   ${t.name}: still held at the phase's end (sampled, top 25: ${(total / s.received).toFixed(0)} B an event):\n` +
          held.map(([k, b]) => `      ${(b / s.received).toFixed(1).padStart(7)} B/event  ${k}`).join('\n'),
      );
    }
    const blocked = (g: FleetSide['stalls'][number]) => g.ms - g.cpuMs - g.waitMs;
    let busy = '';
    if (PROFILE) {
      mkdirSync(PROFILE_DIR, { recursive: true });
      const path = await t.f.profileStop(`${PROFILE_DIR}/${t.name}-${t.p99.length}.cpuprofile`);
      busy = `; busy ≥ 2 ms CPU: ${busyRuns(path, d.startMs).join(' | ') || '-'}`;
    }
    t.loopMax.push(f.loopMaxMs);
    t.gcN.push(f.gc.length);
    t.gcMax.push(f.gc.reduce((m, g) => Math.max(m, g.ms), 0));
    if (STALLS) {
      const most = (k: (g: FleetSide['stalls'][number]) => number) =>
        f.stalls.reduce((m, g) => Math.max(m, k(g)), 0);
      t.gapCpu.push(most((g) => g.cpuMs));
      t.gapWait.push(most((g) => g.waitMs));
      t.gapBlocked.push(most((g) => g.ms - g.cpuMs - g.waitMs));
    }
    console.error(
      `   ${t.name}: p99 ${s.p99.toFixed(2)} ms, max ${s.max.toFixed(2)}, slowest 1% written ${s.tail.fromMs.toFixed(0)}–${s.tail.toMs.toFixed(0)} ms in; ` +
        `fleet loop max ${f.loopMaxMs.toFixed(1)} ms; GC ${f.gc.map((g) => `${g.minor ? 's' : 'M'}@${g.atMs.toFixed(0)}:${g.ms.toFixed(1)}`).join(' ') || '-'}` +
        (STALLS
          ? `; gaps ${f.stalls.map((g) => `@${g.atMs.toFixed(0)}:${g.ms.toFixed(1)} (cpu ${g.cpuMs.toFixed(1)}, wait ${g.waitMs.toFixed(1)}, blocked ${blocked(g).toFixed(1)})`).join(' ') || '-'}`
          : '') +
        busy,
    );
  };
  try {
    await open(direct);
    if (!FRESH) for (const t of fleets) await start(t);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 ? [...fleets].reverse() : fleets;
      if (FRESH) for (const t of order) await start(t);
      const all = r % 2 ? [...order, direct] : [direct, ...order];
      if (FRESH || r === 0) for (const t of all) await phase(t, 0.5, false);
      console.error(`round ${r + 1}/${ROUNDS}: ${all.map((t) => t.name).join(', ')}`);
      for (const t of all) await phase(t, PHASE_S, true);
      if (FRESH) for (const t of order) await stop(t);
    }
    const f2 = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    const m = (xs: number[]) => median(xs).toFixed(2);
    console.log(
      `watchp99-ab: ${ROUNDS} rounds, ${W} watches, ${RATE} events/s, ${PHASE_S} s phases, ${FRESH ? 'fresh fleets each round (first phase after warm-up)' : 'the same fleets'}`,
    );
    console.log(`direct: p99 median ${m(direct.p99)} ms (per round ${f2(direct.p99)})`);
    for (const t of fleets) {
      const added = t.p99.map((p, i) => p - direct.p99[i]!);
      console.log(
        `${t.name}: p50 ${m(t.p50)} ms, p99 ${m(t.p99)} ms (per round ${f2(t.p99)}); added p99 median ${m(added)} ms (per round ${f2(added)}); ` +
          `max ${m(t.max)} ms; fleet loop max ${m(t.loopMax)} ms (per round ${f2(t.loopMax)}); GC per phase ${m(t.gcN)}, longest ${m(t.gcMax)} ms` +
          (STALLS
            ? `; per phase the gap with the most CPU ${m(t.gapCpu)} ms, most waiting for a CPU ${m(t.gapWait)} ms, most blocked (neither) ${m(t.gapBlocked)} ms (per round ${f2(t.gapBlocked)})`
            : ''),
      );
    }
    if (fleets.length === 2) {
      const [a, b] = fleets as [Target, Target];
      const d = (k: 'p99' | 'loopMax') => a[k].map((v, i) => b[k][i]! - v);
      console.log(
        `${b.name} − ${a.name}: p99 per round ${f2(d('p99'))}, median ${m(d('p99'))} ms; loop max per round ${f2(d('loopMax'))}, median ${m(d('loopMax'))} ms`,
      );
    }
  } finally {
    for (const t of fleets) t.f?.stop();
    child.kill();
  }
}

await main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

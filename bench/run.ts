/**
 * `npm run bench`: the fleet against the same request sent straight to the upstream and through Go's
 * httputil.ReverseProxy, on the same machine, in the same run. Settings: see bench/lib/options.ts.
 *
 * Processes (default layout `isolated`): this harness only orchestrates; the simulated clusters, the fleet
 * and the load generator (autocannon) each run in a helper process of their own, and the Go proxy in its
 * own, so no two of them share an event loop. Within a round the targets are interleaved (and the order
 * rotates from round to round); medians over rounds are reported, because a 2-core machine is noisy.
 *
 * Cases of another shape (a merged list measured answer by answer, memory peaks, a thousand watch streams,
 * exec sessions) drive their own load (`BenchCase.run`): they get the same processes and run their own
 * actions inside them over the same IPC channel (bench/cases/types.ts).
 *
 * Output: progress, one table per case, the goal check, and a final `BENCH_JSON {…}` line. Exit status 1
 * when a case failed (could not run, or what it measured failed: a list that did not complete, a watch
 * that never opened).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CASES, selectCases } from './cases/index.ts';
import type {
  BenchCase,
  BenchEnv,
  CaseContext,
  CustomResult,
  FleetVariant,
  ProcessRef,
  Target,
} from './cases/types.ts';
import { bundleFleet } from './lib/fleetproc.ts';
import { goalsJson } from './lib/goals-json.ts';
import { formatIssue33, ISSUE33_CASES, quickSelection } from './lib/goals33.ts';
import { buildGoProxy, GO_INSTALL_HINT, type GoProxy, startGoProxy } from './lib/goproxy.ts';
import { type Host, startHost } from './lib/host.ts';
import type { LoadResult } from './lib/load.ts';
import { type BenchOptions, parseOptions, UsageError } from './lib/options.ts';
import { formatProfile, summarizeProfile } from './lib/profile.ts';
import type { Role } from './lib/protocol.ts';
import {
  type CaseResult,
  compare,
  fmt,
  formatCase,
  formatGoals,
  formatWallTimes,
  jsonLine,
  type RoundFigures,
  summarizeTarget,
} from './lib/report.ts';
import { processCpuMs } from './lib/stats.ts';
import { cpuWith, formatSteps, type StepTime, step, takeSteps } from './lib/steps.ts';
import { treeCpuMs } from './lib/treecpu.ts';

const log = (s: string) => process.stdout.write(`${s}\n`);

/** cases that start fleet processes of the production bundle (bench/lib/fleetproc.ts) */
const BUNDLE_USERS = new Set([
  'passthrough-configmap',
  'passthrough-podlist',
  'authn-jwt',
  'merged-list-memory',
  'merged-list-canned',
  'scale-curve',
  'merged-watch-many',
  'merged-watch',
]);

/**
 * Cases that start every fleet they measure themselves (bench/lib/fleetproc.ts) and take only the harness
 * fleets' configurations (`env.fleetConfigs`), not their URLs: a run of these alone (a plain --quick) starts
 * no fleet in the harness's fleet process, and does without that process.
 */
const OWN_FLEETS = new Set(['merged-list-canned', 'scale-curve', 'merged-watch']);

function needsHarnessFleet(cases: BenchCase[], opts: BenchOptions): boolean {
  return opts.karmada || opts.profile || cases.some((c) => !OWN_FLEETS.has(c.name) || c.fleets?.length);
}

/** the layout with the fleet role moved into the upstream's process (no fleet runs in it) */
function withoutFleetProcess(groups: Role[][]): Role[][] {
  const rest = groups.map((g) => g.filter((r) => r !== 'fleet')).filter((g) => g.length);
  return rest.map((g) => (g.includes('upstream') ? [...g, 'fleet'] : g));
}

/** --help: the settings, as bench/lib/options.ts's header describes them */
function usage(): string {
  const src = readFileSync(fileURLToPath(new URL('./lib/options.ts', import.meta.url)), 'utf8');
  const doc = /\/\*\*([\s\S]*?)\*\//.exec(src)?.[1] ?? '';
  return `usage: npm run bench -- [flags]\n${doc
    .split('\n')
    .map((l) => l.replace(/^ \* ?/, ''))
    .join('\n')
    .trim()}\n\ncases (--only=<name or prefix>,…):`;
}

/** One request per target before measuring: it must answer 2xx; its body size is reported. */
async function preflight(t: Target): Promise<number> {
  const res = await fetch(t.url, { method: t.method ?? 'GET', headers: t.headers });
  const body = new Uint8Array(await res.arrayBuffer());
  if (res.status < 200 || res.status > 299)
    throw new Error(
      `${t.name}: ${t.url} answered ${res.status}: ${new TextDecoder().decode(body.slice(0, 300))}`,
    );
  return body.byteLength;
}

function rotate<T>(xs: T[], by: number): T[] {
  const k = xs.length ? by % xs.length : 0;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

function cpuPerRequestUs(
  cpuMs: (() => number | null) | undefined,
  before: number | null,
  res: LoadResult,
): number | undefined {
  if (cpuMs === undefined || before === null || res.ok === 0) return undefined;
  const after = cpuMs();
  return after === null ? undefined : ((after - before) * 1000) / res.ok;
}

/**
 * --quick: a target another case already measured in this run (same URL, method and headers, so the same
 * request through the same process) is not measured again; its figures are reported with a note. A full
 * run measures every case's targets in its own interleaved rounds.
 */
const measured = new Map<string, { case: string; bytes: number; rounds: RoundFigures[] }>();
const targetKey = (t: Target, connections: number) =>
  JSON.stringify([t.url, t.method ?? 'GET', t.headers ?? {}, connections]);

async function runCase(
  c: BenchCase,
  opts: BenchOptions,
  env: BenchEnv,
  hostFor: (r: Role) => Host,
  /** processes whose CPU time belongs to one role only (so per-request CPU can be attributed) */
  attributable: Set<number>,
  profileDir: string | undefined,
): Promise<CaseResult> {
  const upstream = hostFor('upstream');
  const load = hostFor('load');
  const upstreamPid = attributable.has(upstream.pid) ? upstream.pid : undefined;
  await upstream.call('upstream.setup', { case: c.name });
  try {
    if (c.run) return await runCustomCase(c, opts, env, hostFor, profileDir);
    if (!c.targets) throw new Error(`case ${c.name} has neither targets nor run`);
    const targets = await c.targets(env);
    const connections = (opts.quick && c.quick?.connections) || opts.connections;
    if (connections !== opts.connections)
      log(`   --quick: ${connections} connections for this case (its answers take longer than a quick run)`);
    const reused = new Map<string, { case: string; bytes: number; rounds: RoundFigures[] }>();
    if (opts.quick)
      for (const t of targets) {
        const m = measured.get(targetKey(t, connections));
        if (m) reused.set(t.name, m);
      }
    const fresh = targets.filter((t) => !reused.has(t.name));
    const bytes = new Map<string, number>();
    for (const [name, m] of reused) bytes.set(name, m.bytes);
    // the preflights go out side by side (each target is a different process)
    const sizes = await step('preflight', () => Promise.all(fresh.map((t) => preflight(t))));
    for (const [i, t] of fresh.entries()) bytes.set(t.name, sizes[i]!);
    for (const [name, m] of reused)
      log(`   --quick: ${name} as measured in ${m.case} (same request, same process, same run)`);
    const direct = bytes.get('direct');
    for (const [name, n] of bytes)
      if (direct !== undefined && n !== direct)
        log(`   note: ${name} returned ${n} bytes, direct ${direct} (bodies differ)`);

    const rounds = new Map<string, RoundFigures[]>(
      targets.map((t) => [t.name, reused.get(t.name)?.rounds ?? []]),
    );
    const fleetHost = hostFor('fleet');
    if (profileDir) await fleetHost.call('profile.start', null);
    for (let r = 0; r < opts.rounds; r++) {
      for (const t of rotate(fresh, r)) {
        const spec = { url: t.url, method: t.method, headers: t.headers, connections };
        if (opts.warmupS > 0)
          await step('load: warm-up', () => load.call('load.run', { ...spec, durationS: opts.warmupS }));
        const proxyPid = t.proxyPid !== undefined && attributable.has(t.proxyPid) ? t.proxyPid : undefined;
        const proxyCpu = t.proxyCpuMs ?? (proxyPid !== undefined ? () => processCpuMs(proxyPid) : undefined);
        const upstreamCpu = upstreamPid !== undefined ? () => processCpuMs(upstreamPid) : undefined;
        const p0 = proxyCpu ? proxyCpu() : null;
        const u0 = upstreamCpu ? upstreamCpu() : null;
        const res = await step('load: measured', () =>
          load.call('load.run', { ...spec, durationS: opts.durationS }),
        );
        const fig: RoundFigures = {
          load: res,
          proxyCpuUs: cpuPerRequestUs(proxyCpu, p0, res),
          upstreamCpuUs: cpuPerRequestUs(upstreamCpu, u0, res),
        };
        if (opts.latencyDurationS > 0)
          fig.single = await step('load: 1 connection', () =>
            load.call('load.run', { ...spec, connections: 1, durationS: opts.latencyDurationS }),
          );
        rounds.get(t.name)!.push(fig);
        const bad = res.non2xx + res.errors + res.timeouts;
        log(
          // figures cross IPC as JSON: a run without a single response has null (was NaN) latencies
          `   round ${r + 1}/${opts.rounds}  ${t.name.padEnd(14)} ${fmt.rps(res.rps ?? Number.NaN).padStart(7)} req/s` +
            `  p50 ${fmt.ms(res.latency.p50 ?? Number.NaN)} ms  p99 ${fmt.ms(res.latency.p99 ?? Number.NaN)} ms` +
            (fig.single
              ? `  | 1 conn p50 ${fmt.ms(fig.single.latency.p50 ?? Number.NaN)} p99 ${fmt.ms(fig.single.latency.p99 ?? Number.NaN)} ms`
              : '') +
            (bad ? `  | FAILED ${bad} (${JSON.stringify(res.statusCodes)}, errors ${res.errors})` : ''),
        );
      }
    }
    for (const t of fresh)
      measured.set(targetKey(t, connections), {
        case: c.name,
        bytes: bytes.get(t.name) ?? 0,
        rounds: rounds.get(t.name)!,
      });
    let profile: CaseResult['profile'];
    if (profileDir) {
      const { path } = await fleetHost.call('profile.stop', {
        path: join(profileDir, `${c.name}.cpuprofile`),
      });
      profile = { path, shared: fleetHost.roles.length > 1, ...summarizeProfile(path) };
    }
    const results = targets.map((t) =>
      summarizeTarget(t.name, t.url, t.note, bytes.get(t.name) ?? 0, rounds.get(t.name)!),
    );
    return { name: c.name, title: c.title, targets: results, comparisons: compare(results), profile };
  } finally {
    await upstream.call('upstream.teardown', { case: c.name });
  }
}

/** A case that drives its own load: it gets the processes and runs its actions in them. */
async function runCustomCase(
  c: BenchCase,
  opts: BenchOptions,
  env: BenchEnv,
  hostFor: (r: Role) => Host,
  profileDir: string | undefined,
): Promise<CaseResult> {
  const fleetHost = hostFor('fleet');
  // each action's wall time goes to the case's steps (bench/lib/steps.ts): where a slow run went
  const action = (role: 'upstream' | 'load') => (name: string, arg?: unknown) =>
    step(`${role}:${name}`, () =>
      hostFor(role).call('case.action', { case: c.name, role, action: name, arg }),
    ) as Promise<never>;
  const ctx: CaseContext = {
    env,
    opts,
    log,
    upstream: action('upstream'),
    load: action('load'),
    fleetProcess: { pid: fleetHost.pid, shared: fleetHost.roles.length > 1 },
    upstreamProcess: { pid: hostFor('upstream').pid, shared: hostFor('upstream').roles.length > 1 },
    fleetMemory: (gc = true) => fleetHost.call('proc.memory', { gc }),
    profileDir,
    profile: profileDir
      ? {
          start: async () => {
            await fleetHost.call('profile.start', null);
          },
          stop: async (label) => {
            const { path } = await fleetHost.call('profile.stop', {
              path: join(profileDir, `${c.name}-${label}.cpuprofile`),
            });
            return { path, shared: fleetHost.roles.length > 1, ...summarizeProfile(path) };
          },
          heapSnapshot: async (label) =>
            (
              await fleetHost.call('proc.heapSnapshot', {
                path: join(profileDir, `${c.name}-${label}.heapsnapshot`),
              })
            ).path,
        }
      : undefined,
  };
  let custom: CustomResult;
  try {
    custom = await c.run!(ctx);
  } catch (err) {
    return {
      name: c.name,
      title: c.title,
      targets: [],
      comparisons: [],
      error: (err as Error).stack ?? (err as Error).message,
    };
  }
  return {
    name: c.name,
    title: c.title,
    targets: [],
    comparisons: [],
    custom,
    ...(custom.error ? { error: custom.error } : {}),
  };
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2), process.env);
  if (opts.help) log(usage());
  if (opts.list || opts.help) {
    for (const c of CASES)
      log(
        `${c.name.padEnd(28)} ${(ISSUE33_CASES.has(c.name) ? (c.needsBed ? 'quick+real' : 'quick') : c.needsBed ? 'real' : '').padEnd(11)} ${c.title}`,
      );
    log(
      "\nquick: run by a plain --quick (the cases behind issue 33's goal rows); the others run without --quick, with --quick --all, or when --only names them. real: needs the real test bed (--real or --only=<name>).",
    );
    return 0;
  }
  // --quick without --only (or --all): the cases behind issue 33's goal rows only (a smoke run of the
  // goals table in under 2 minutes); --only names any case, --all runs every one
  const cases = quickSelection(selectCases(opts.only, opts.real), opts);
  if (!cases.length) {
    log(
      `bench: no case matches --only=${opts.only?.join(',')}; cases: ${CASES.map((c) => c.name).join(', ')}`,
    );
    return 2;
  }

  const load0 = loadavg();
  log(`# fleet-apiserver bench`);
  log(
    `   node ${process.version}, ${cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')}` +
      (load0[0]! > cpus().length * 0.5 ? '  (machine busy: expect noise)' : ''),
  );
  log(
    `   ${opts.rounds} round(s) × (${opts.warmupS} s warm-up + ${opts.durationS} s at ${opts.connections} connections` +
      (opts.latencyDurationS > 0 ? ` + ${opts.latencyDurationS} s at 1 connection` : '') +
      `) per target, targets interleaved`,
  );
  if (opts.quick)
    log(
      '   --quick: shorter runs, fewer answers, smaller lists and bursts, targets measured once per run: the figures and ratios are indicative (a smoke run); the issue figures come from a full run',
    );
  if (opts.quick && !opts.only && !opts.all)
    log(
      `   --quick: the cases behind issue 33's goal rows only (${cases.map((c) => c.name).join(', ')}); --all or --only=<cases> for the others (--list)`,
    );
  log(
    `   fleet in static mode: members listed with their own URLs, so the fleet and the Go proxy both front the member directly` +
      (opts.karmada ? "; fleet-karmada goes through the control plane's cluster proxy" : ''),
  );

  const harnessFleet = needsHarnessFleet(cases, opts);
  const groups = harnessFleet ? opts.groups : withoutFleetProcess(opts.groups);
  let go: { binary: string; version: string } | undefined;
  // the Go reference proxy: only for the request/response cases (their `go` target)
  const built = cases.some((c) => c.targets) ? buildGoProxy() : undefined;
  if (built && 'missing' in built) log(`   ${GO_INSTALL_HINT}`);
  else if (built) {
    go = built;
    log(`   reference: ${go.version}, net/http/httputil.ReverseProxy (bench/goproxy/main.go)`);
  }
  if (opts.fleetNodeArgs.length) log(`   fleet process Node flags: ${opts.fleetNodeArgs.join(' ')}`);
  log(
    `   processes: ${groups.map((g) => g.join('+')).join(' | ')}${go ? ' | go proxy' : ''}  (layout ${opts.layout}${harnessFleet ? '' : "; no harness fleet: every case starts the fleets it measures, so the fleet role shares the clusters' process"})`,
  );

  const profileDir = resolve('.cache/bench-profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  if (opts.profile) mkdirSync(profileDir, { recursive: true });
  const hosts: Host[] = [];
  const goProxies = new Map<string, GoProxy>();
  const killGo = () => {
    for (const g of goProxies.values())
      try {
        process.kill(g.pid);
      } catch {
        // already gone
      }
  };
  process.once('exit', killGo);
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      killGo();
      process.exit(130);
    });

  cpuWith(treeCpuMs);
  const results: CaseResult[] = [];
  /** the harness's own steps: its start, and its stop at the end */
  const startSteps: StepTime[] = [];
  const t0 = performance.now();
  const since = (t: number) => ((performance.now() - t) / 1000).toFixed(1);
  // the production bundle several cases start fleet processes of: built while the helpers start
  if (cases.some((c) => BUNDLE_USERS.has(c.name))) step('start: bundle', bundleFleet).catch(() => {});
  // a case's own processes that need nothing of the run (a `prestart` without parameters, e.g. the canned
  // clusters) start with the helper processes, not after them
  const early = new Map(
    cases
      .filter((c) => c.prestart && c.prestart.length === 0)
      .map((c) => [c.name, step(`start: ${c.name}'s own`, () => c.prestart!(undefined as never))]),
  );
  for (const p of early.values()) p.catch(() => {}); // awaited below; a failure is reported there
  try {
    // the helper processes start side by side (each loads the fleet or the simulator through tsx)
    hosts.push(
      ...(await Promise.all(
        groups.map((g) =>
          step(`start: ${g.join('+')} process`, () =>
            startHost(g, [
              ...(g.includes('fleet') ? opts.fleetNodeArgs : []),
              // the simulated clusters hold up to 10 × 10,000 pods (merged-list-memory) and serialize whole lists
              ...(g.includes('upstream') ? ['--max-old-space-size=8192'] : []),
            ]),
          ),
        ),
      )),
    );
    const tHosts = since(t0);
    const hostFor = (role: Role) => hosts.find((h) => h.roles.includes(role))!;
    const attributable = new Set(hosts.filter((h) => h.roles.length === 1).map((h) => h.pid));

    const memberCount = Math.max(1, ...cases.map((c) => c.members ?? 1));
    const members = Array.from({ length: memberCount }, (_, i) => `member${i + 1}`);
    const up = await step('start: clusters', () => hostFor('upstream').call('upstream.start', { members }));
    const fleetHost = hostFor('fleet');
    const fleets: Partial<Record<FleetVariant, ProcessRef>> = {};
    const variants = new Set<FleetVariant>(harnessFleet ? ['static'] : []);
    if (opts.karmada) variants.add('karmada');
    for (const c of cases) for (const v of c.fleets ?? []) variants.add(v);
    // side by side: each fleet starts on its own (they share the helper process, not their state)
    await Promise.all(
      [...variants].map(async (variant) => {
        const { url } = await step(`start: fleet ${variant}`, () =>
          fleetHost.call('fleet.start', { variant, config: up.configs[variant] }),
        );
        fleets[variant] = { url, pid: fleetHost.pid };
      }),
    );
    log(`   started in ${since(t0)} s (helper processes ${tHosts} s, then the clusters and fleets)`);
    const env: BenchEnv = {
      memberUrls: up.memberUrls,
      karmadaUrl: up.karmadaUrl,
      fleets,
      fleetConfigs: up.configs,
      async goProxy(member) {
        if (!go) return undefined;
        let g = goProxies.get(member);
        if (!g) {
          const target = up.memberUrls[member];
          if (!target) throw new Error(`bench: no member ${member}`);
          g = await startGoProxy(go.binary, target, `/clusterspaces/${member}`);
          goProxies.set(member, g);
          attributable.add(g.pid);
        }
        return { url: g.url, pid: g.pid };
      },
    };
    // the Go proxy the request/response cases compare with, and what cases start of their own: now,
    // side by side, while nothing is measured
    const tPre = performance.now();
    await Promise.all([
      go && cases.some((c) => c.targets) && up.memberUrls.member1
        ? step('start: go proxy', () => env.goProxy('member1'))
        : undefined,
      ...cases.map((c) =>
        c.prestart
          ? (early.get(c.name) ?? step(`start: ${c.name}'s own`, () => c.prestart!(env)))
          : undefined,
      ),
    ]);
    if (cases.some((c) => c.prestart)) log(`   cases' own processes started in ${since(tPre)} s`);
    startSteps.push(...takeSteps());
    log(`   ${formatSteps(startSteps)}`);

    for (const c of cases) {
      log(`\n== ${c.name}: ${c.title}`);
      let res: CaseResult;
      const tc = performance.now();
      const cpu0 = treeCpuMs();
      try {
        res = await runCase(c, opts, env, hostFor, attributable, opts.profile ? profileDir : undefined);
      } catch (err) {
        res = { name: c.name, title: c.title, targets: [], comparisons: [], error: (err as Error).message };
      }
      res.wallS = (performance.now() - tc) / 1000;
      res.steps = takeSteps();
      const cpu1 = treeCpuMs();
      if (cpu0 !== null && cpu1 !== null) res.cpuS = (cpu1 - cpu0) / 1000;
      results.push(res);
      log(formatCase(res, (opts.quick && c.quick?.connections) || opts.connections));
      if (res.profile) log(formatProfile(res.profile));
    }
  } finally {
    const tEnd = performance.now();
    for (const c of cases) await c.cleanup?.().catch((e: Error) => log(`   ${c.name} cleanup: ${e.message}`));
    await Promise.all([...goProxies.values()].map((g) => g.stop()));
    goProxies.clear();
    await Promise.all(hosts.map((h) => h.exit()));
    takeSteps();
    startSteps.push({
      label: 'stop: cleanup and processes',
      ms: performance.now() - tEnd,
      cpuMs: Number.NaN,
      n: 1,
    });
  }

  log(formatGoals(results));
  const checks33 = results.flatMap((c) =>
    (c.custom?.issue33 ?? []).map((check) => ({ case: c.name, check })),
  );
  log(formatIssue33(checks33));
  // performance.now() counts from this process's start, its imports included
  // the issue's budget for a smoke run of every case: 2 minutes (a run of some cases has none)
  const budgetS = opts.quick && !opts.only ? 120 : undefined;
  log(
    formatWallTimes(
      results,
      performance.now() / 1000,
      (treeCpuMs() ?? Number.NaN) / 1000,
      budgetS,
      startSteps,
    ),
  );
  if (opts.json) {
    const file = resolve(opts.json);
    mkdirSync(dirname(file), { recursive: true });
    const doc = goalsJson(checks33, {
      quick: opts.quick,
      totalS: performance.now() / 1000,
      cases: results.map((c) => ({
        name: c.name,
        wallS: c.wallS ?? null,
        cpuS: c.cpuS ?? null,
        ...(c.error ? { error: c.error } : {}),
      })),
    });
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    log(`   goal rows written to ${file}`);
  }
  log('');
  log(
    jsonLine({
      version: 1,
      date: new Date().toISOString(),
      settings: {
        durationS: opts.durationS,
        warmupS: opts.warmupS,
        rounds: opts.rounds,
        connections: opts.connections,
        latencyDurationS: opts.latencyDurationS,
        layout: opts.layout,
        fleetNodeArgs: opts.fleetNodeArgs,
        fleetMode: opts.karmada ? 'static+karmada' : 'static',
        quick: opts.quick,
      },
      harnessSteps: startSteps.map((x) => ({ label: x.label, s: x.ms / 1000, cpuS: x.cpuMs / 1000, n: x.n })),
      env: {
        node: process.version,
        go: go?.version ?? null,
        cores: cpus().length,
        loadavgStart: load0,
        loadavgEnd: loadavg(),
      },
      cases: results.map((c) => ({
        name: c.name,
        title: c.title,
        error: c.error,
        wallS: c.wallS,
        cpuS: c.cpuS,
        steps: c.steps?.map((x) => ({ label: x.label, s: x.ms / 1000, cpuS: x.cpuMs / 1000, n: x.n })),
        targets: c.targets.map((t) => ({
          name: t.name,
          bytes: t.bytes,
          ...t.median,
          rpsMin: t.rpsMin,
          rpsMax: t.rpsMax,
          failures: t.failures,
          rounds: t.rounds.map((r) => ({
            rps: r.load.rps,
            p50: r.load.latency.p50,
            p99: r.load.latency.p99,
            singleP50: r.single?.latency.p50,
            singleP99: r.single?.latency.p99,
            proxyCpuUs: r.proxyCpuUs,
            upstreamCpuUs: r.upstreamCpuUs,
          })),
        })),
        comparisons: c.comparisons,
        goals: c.custom?.goals,
        issue33: c.custom?.issue33,
        figures: c.custom?.figures,
        profile: c.profile && {
          path: c.profile.path,
          busyMs: c.profile.busyMs,
          byArea: c.profile.byArea.slice(0, 10),
          topFunctions: c.profile.topFunctions.slice(0, 10),
        },
      })),
    }),
  );
  return results.some((c) => c.error) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);

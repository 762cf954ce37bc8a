/**
 * Benchmark settings from the environment and the command line (flags win):
 *   BENCH_DURATION / --duration=S      measured seconds per run (default 5)
 *   BENCH_WARMUP / --warmup=S          warm-up seconds before each measured run (default 1)
 *   BENCH_ROUNDS / --rounds=N          rounds; targets are interleaved within a round (default 3)
 *   BENCH_CONNECTIONS / --connections=N   connections under load (default 32)
 *   BENCH_LATENCY_DURATION / --latency-duration=S  extra single-connection run per target, for latency
 *                                      without queueing (default 2; 0 turns it off)
 *   BENCH_LAYOUT / --layout=L          which roles share a process (see LAYOUTS; default isolated)
 *   BENCH_ONLY / --only=a,b            cases by name or prefix
 *   BENCH_KARMADA=1 / --karmada        also measure the fleet in Karmada mode
 *   BENCH_PROFILE=1 / --profile        CPU-profile the fleet process during each case (V8 profiler via
 *                                      node:inspector) and summarise where its time goes
 *   BENCH_FLEET_NODE_ARGS / --fleet-node-args="…"  extra Node flags for the fleet's process, e.g.
 *                                      "--max-semi-space-size=64" (space-separated)
 *   --quick                            a smoke run of issue 33's goals table in under 2 minutes: only the
 *                                      cases behind its rows (merged-list-canned, scale-curve, merged-watch;
 *                                      real-watch and real-list with --real) unless --only names others or
 *                                      --all asks for every case; 1 s runs, 1 round, 0.5 s warm-up, 0.5 s
 *                                      latency run (figures indicative); a target another case measured
 *                                      already (same request, same process) is not measured again;
 *                                      self-driven cases shorten themselves too (fewer answers, 1,000 pods
 *                                      per cluster instead of 10,000 in merged-list-memory, 1 s phases,
 *                                      smaller bursts). docs/benchmarks.md, "The quick run"
 *   --all                              with --quick: every case (as without --quick), not only the goal ones
 *   --json=FILE                        also write issue 33's goal rows of the run (and each case's wall
 *                                      time) to FILE as JSON (bench/lib/goals-json.ts); what
 *                                      bench/lib/goals-ab.ts reads
 *   BENCH_WATCHES=N                    merged watches (and direct ones) opened by merged-watch (default 1000)
 *   --write-docs                       scale-curve writes its curve to docs/bench-scale.svg (time, CPU and
 *                                      memory against clusters, the same total items)
 *   BENCH_REAL=1 / --real              also the real-bed cases (real-list, real-passthrough, real-watch):
 *                                      the test bed (testbed/) started once, kube-apiserver members seeded,
 *                                      the fleets against the members read directly; left out of a run
 *                                      without it (a plain --quick too) unless --only names them
 *                                      (--only=real); see bench/cases/real.ts
 *   --list / --help                    print the cases (which ones a plain --quick runs) and these flags
 */
import type { Role } from './protocol.ts';

/** A bad flag or setting: reported as one line, without a stack. */
export class UsageError extends Error {}

/** Process groups: roles joined by `+` share a process; groups are separated by `,`. */
export const LAYOUTS: Record<string, string> = {
  /** each role alone: the fleet's event loop shares nothing with the load generator or the upstream */
  isolated: 'upstream,fleet,load',
  /** the load generator inside the fleet's process (what a single-process harness does) */
  'shared-load': 'upstream,fleet+load',
  /** everything in one process */
  shared: 'upstream+fleet+load',
};

export interface BenchOptions {
  durationS: number;
  warmupS: number;
  rounds: number;
  connections: number;
  latencyDurationS: number;
  layout: string;
  groups: Role[][];
  only?: string[];
  karmada: boolean;
  profile: boolean;
  fleetNodeArgs: string[];
  quick: boolean;
  list: boolean;
  /** regenerate what the bench writes under docs/ (the scale curve's SVG) */
  writeDocs: boolean;
  /** also the cases that need the real test bed (bench/cases/real.ts) */
  real: boolean;
  /** with --quick: every case, not only those behind issue 33's goal rows */
  all: boolean;
  /** where to write the goal rows as JSON (--json=FILE) */
  json?: string;
  help: boolean;
}

const ROLES: Role[] = ['upstream', 'fleet', 'load'];

function parseLayout(spec: string): Role[][] {
  const groups = (LAYOUTS[spec] ?? spec).split(',').map((g) => g.split('+').map((r) => r.trim()) as Role[]);
  const seen = groups.flat();
  for (const r of seen)
    if (!ROLES.includes(r)) throw new UsageError(`bench: unknown role "${r}" in layout "${spec}"`);
  for (const r of ROLES)
    if (seen.filter((x) => x === r).length !== 1)
      throw new Error(
        `bench: layout "${spec}" must place each of ${ROLES.join(', ')} exactly once (presets: ${Object.keys(LAYOUTS).join(', ')})`,
      );
  return groups;
}

function num(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new UsageError(`bench: ${name} must be a number ≥ ${min}, got "${raw}"`);
  return n;
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && v !== '' && v !== '0' && v !== 'false';
}

function jsonPath(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (v === '' || v === 'true') throw new UsageError('bench: --json needs a file: --json=<file>');
  return v;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new UsageError(`bench: unknown argument "${a}" (see the header of bench/lib/options.ts)`);
    flags.set(m[1]!, m[2] ?? 'true');
  }
  const known = [
    'quick',
    'only',
    'duration',
    'warmup',
    'rounds',
    'connections',
    'latency-duration',
    'layout',
    'karmada',
    'profile',
    'fleet-node-args',
    'list',
    'write-docs',
    'real',
    'all',
    'json',
    'help',
  ];
  for (const k of flags.keys())
    if (!known.includes(k))
      throw new UsageError(`bench: unknown flag --${k} (known: ${known.map((x) => `--${x}`).join(' ')})`);
  const quick = truthy(flags.get('quick'));
  const pick = (flag: string, envName: string) => flags.get(flag) ?? env[envName];
  const layout = pick('layout', 'BENCH_LAYOUT') || 'isolated';
  const only = pick('only', 'BENCH_ONLY');
  return {
    quick,
    durationS: num('duration', pick('duration', 'BENCH_DURATION'), quick ? 1 : 5, 0.1),
    warmupS: num('warmup', pick('warmup', 'BENCH_WARMUP'), quick ? 0.5 : 1, 0),
    rounds: Math.round(num('rounds', pick('rounds', 'BENCH_ROUNDS'), quick ? 1 : 3, 1)),
    connections: Math.round(num('connections', pick('connections', 'BENCH_CONNECTIONS'), 32, 1)),
    latencyDurationS: num(
      'latency-duration',
      pick('latency-duration', 'BENCH_LATENCY_DURATION'),
      quick ? 0.5 : 2,
      0,
    ),
    layout,
    groups: parseLayout(layout),
    only: only
      ? only
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
    karmada: truthy(pick('karmada', 'BENCH_KARMADA')),
    profile: truthy(pick('profile', 'BENCH_PROFILE')),
    fleetNodeArgs: (pick('fleet-node-args', 'BENCH_FLEET_NODE_ARGS') ?? '').split(/\s+/).filter(Boolean),
    list: truthy(flags.get('list')),
    writeDocs: truthy(flags.get('write-docs')),
    real: truthy(pick('real', 'BENCH_REAL')),
    all: truthy(flags.get('all')),
    json: jsonPath(flags.get('json')),
    help: truthy(flags.get('help')),
  };
}

/**
 * What a benchmark case is. The harness (bench/run.ts) owns processes, load and reporting; a case only
 * says what to put into the simulated clusters and which URLs to compare.
 *
 * A case runs in two places:
 * - `setup`/`teardown` run in the upstream process, next to the simulated clusters (so they can write
 *   into the stores directly and nothing crosses a process boundary but the case name);
 * - `targets` runs in the harness, once the fleet and the baselines are up.
 * Register a new case in ./index.ts.
 */
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import type { Row33Check } from '../lib/goals33.ts';
import type { BenchOptions } from '../lib/options.ts';
import type { ProfileSummary } from '../lib/profile.ts';

/** The simulated control plane and members, as the upstream process holds them. */
export interface UpstreamContext {
  sims: ServedSimFleet;
}

/** A process that does a target's proxy work: its CPU time per request is reported. */
export interface ProcessRef {
  url: string;
  pid: number;
}

/**
 * Fleet variants the harness can start: members listed statically, or found through Karmada; `merged` is
 * static membership with federation off (the root URL lists the members only, no control plane), started
 * only when a selected case asks for it (`fleets`).
 */
export type FleetVariant = 'static' | 'karmada' | 'merged';

export interface BenchEnv {
  /** each simulated member's own URL */
  memberUrls: Record<string, string>;
  karmadaUrl: string;
  /** the fleets that are running (`karmada` only with --karmada, `merged` when a case asks for it) */
  fleets: Partial<Record<FleetVariant, ProcessRef>>;
  /** the configuration of each variant (to start the same fleet elsewhere, e.g. in workerd) */
  fleetConfigs: Record<FleetVariant, FleetConfigInput>;
  /**
   * The Go reference proxy (httputil.ReverseProxy) in front of `member`'s own URL, stripping the
   * `/clusterspaces/<member>` prefix so it takes the fleet's paths; undefined when Go is not available.
   */
  goProxy(member: string): Promise<ProcessRef | undefined>;
}

export interface Target {
  /** `direct` and `go` are the baselines every other target is compared with */
  name: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** the process doing the proxying for this target (none for `direct`) */
  proxyPid?: number;
  /** CPU ms used so far by whatever proxies for this target, when that is more than `proxyPid` alone (a primary and its workers) */
  proxyCpuMs?: () => number | null;
  /** one line on what this target is, printed once */
  note?: string;
}

/**
 * What a case that drives its own load (`run`) gets from the harness: the running processes, and a way to
 * run its own actions inside them (`upstreamActions` next to the simulated clusters, `loadActions` in the
 * load generator's process), over the same IPC channel as everything else.
 */
export interface CaseContext {
  env: BenchEnv;
  opts: BenchOptions;
  log(line: string): void;
  /** runs `upstreamActions[action]` of this case in the upstream process */
  upstream<T = unknown>(action: string, arg?: unknown): Promise<T>;
  /** runs `loadActions[action]` of this case in the load process */
  load<T = unknown>(action: string, arg?: unknown): Promise<T>;
  /** the fleet's process; `shared` when other roles run in it too (its RSS and CPU are not the fleet's alone) */
  fleetProcess: { pid: number; shared: boolean };
  /** the simulated clusters' process */
  upstreamProcess: { pid: number; shared: boolean };
  /** full GC in the fleet's process (through the inspector), then its process.memoryUsage() */
  fleetMemory(gc?: boolean): Promise<NodeJS.MemoryUsage>;
  /** where profiles go (--profile), for cases that profile processes of their own; undefined without it */
  profileDir?: string;
  /** CPU profile of the fleet's process over a stretch of the case; undefined without --profile */
  profile?: {
    start(): Promise<void>;
    stop(label: string): Promise<ProfileSummary & { path: string; shared: boolean }>;
    /** a heap snapshot of the fleet's process, written next to the CPU profiles; returns its path */
    heapSnapshot(label: string): Promise<string>;
  };
}

/** A goal from an issue, checked by a case. `ok` undefined: not measurable in this run. */
export interface GoalCheck {
  goal: string;
  ok: boolean | undefined;
  detail: string;
  /** a figure the issue asks for without a target: reported, not judged */
  info?: boolean;
}

/** What a self-driven case reports: its own tables, its goal checks, and its figures for BENCH_JSON. */
export interface CustomResult {
  text: string;
  goals: GoalCheck[];
  /** issue 33's goals table rows this case measured (bench/lib/goals33.ts) */
  issue33?: Row33Check[];
  figures: unknown;
  /** the case ran but something in it failed (printed, and the bench exits non-zero) */
  error?: string;
}

/** actions take and return whatever their case passes over IPC (structured-clonable values) */
type UpstreamAction = (ctx: UpstreamContext, arg: any) => unknown;
type LoadAction = (arg: any) => unknown;

export interface BenchCase {
  /** what `--only` matches */
  name: string;
  /** one line for the report */
  title: string;
  /** simulated members the case needs: member1 … memberN (default 1) */
  members?: number;
  /** fleet variants the case needs besides `static` */
  fleets?: FleetVariant[];
  /**
   * --quick settings of a request/response case that differ from the run's: `connections` for answers too
   * large for 32 connections to complete any within a quick run's 1 s (each then takes longer than that)
   */
  quick?: { connections?: number };
  /**
   * Processes of its own the case will need (e.g. a fleet as deployed), started by the harness with the
   * clusters and fleets, before any case is measured, side by side with the other cases' (not during a
   * case before it); one that takes no `env` starts with the helper processes, before the clusters
   */
  prestart?(env: BenchEnv): Promise<unknown>;
  setup?(ctx: UpstreamContext): void | Promise<void>;
  teardown?(ctx: UpstreamContext): void | Promise<void>;
  /**
   * Request/response cases: the URLs to compare; the harness drives them with autocannon. A case has
   * either `targets` or `run`.
   */
  targets?(env: BenchEnv): Promise<Target[]>;
  /** Cases with a load of their own shape (sequences of requests, streams, memory): they measure themselves. */
  run?(ctx: CaseContext): Promise<CustomResult>;
  /**
   * Needs the real test bed (testbed/): left out of a run unless --real is given or --only names it
   * (it takes minutes to start and ~2.7 GiB)
   */
  needsBed?: boolean;
  /** after every case of the run (also when one failed): stops what the case kept for the others (the bed) */
  cleanup?(): Promise<void>;
  upstreamActions?: Record<string, UpstreamAction>;
  loadActions?: Record<string, LoadAction>;
}

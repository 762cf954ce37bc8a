/**
 * The memory settings a fleet server process runs with (FLEET_MEMORY_TUNING, default on):
 *
 * - MALLOC_ARENA_MAX=2: glibc gives every thread that mallocs (libuv's pool, V8's compiler and GC helpers)
 *   an arena of its own, up to 8 per core, each keeping freed pages; two arenas keep the RSS of a process
 *   holding thousands of idle watches about a fifth lower.
 * - --max-semi-space-size=4 (MiB): V8's young generation grows to 16 MiB per semi-space under load and
 *   keeps those pages; 4 MiB bounds it, at the price of more (smaller) scavenges.
 *
 * Both must be in place when the process starts (glibc and V8 read them once), so they are given to a
 * process by whoever starts it: the cluster primary to each worker it forks (./cluster.ts), the container
 * image and the Helm chart to the one process they start (deploy/node/Dockerfile, deploy/helm), the bench
 * to the fleet processes it measures (bench/lib/fleetproc.ts). A setting the operator made already
 * (MALLOC_ARENA_MAX in the environment, --max-semi-space-size on the command line or in NODE_OPTIONS)
 * is left as it is. FLEET_MEMORY_TUNING=off gives nothing.
 *
 * - --liftoff-only (V8), set by every fleet process itself ({@link applyEngineSettings}, first thing in
 *   ./main.ts): undici parses HTTP/1.1 with llhttp compiled to WebAssembly, and V8 optimises a hot wasm
 *   function with TurboFan in the background. llhttp's parser is one function of a few thousand states:
 *   optimising it took ≈ 36 MiB of compiler memory at once (heaptrack at the process's malloc peak: 35.9 of
 *   42.5 MiB), during the first large answer, and glibc mostly kept it afterwards (freed in the middle of
 *   its heap), so a fleet that had answered one merged list idled ≈ 25-35 MiB higher for good. Liftoff,
 *   V8's baseline wasm compiler, is what runs the parser until then anyway; it parses a body's bytes as
 *   fast (merged list CPU per item unchanged, bench/lib/scale-ab.ts) and a small answer's head a little
 *   slower. Node refuses the flag in NODE_OPTIONS, so the process sets it at run time, before the first
 *   upstream connection makes undici compile the parser; a wasm tiering flag on the command line is left
 *   as it is. The fleet's own item scanner (skip.wasm) is compiled by the optimising tier just before:
 *   on the baseline one it cost 1.5× the merge's CPU (src/platform/node.ts compileScannerWasmOptimised);
 *   not in a cluster primary, which serves no request.
 */
import { setFlagsFromString } from 'node:v8';
import { ConfigError } from '../../src/config/schema.ts';
import { compileScannerWasmOptimised } from '../../src/platform/node.ts';

export const MALLOC_ARENA_MAX = '2';
export const MAX_SEMI_SPACE_MIB = 4;

export interface ProcessSettings {
  /** environment variables to add to the child's */
  env: Record<string, string>;
  /** node options to put before the child's entry */
  execArgv: string[];
}

/** FLEET_MEMORY_TUNING: on (default, also empty) or off; anything else stops startup */
export function memoryTuningOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.FLEET_MEMORY_TUNING ?? '').trim().toLowerCase();
  if (v === '' || v === 'on') return true;
  if (v === 'off') return false;
  throw new ConfigError(`FLEET_MEMORY_TUNING: "${env.FLEET_MEMORY_TUNING}" is neither "on" nor "off"`);
}

/**
 * What to give a server process started from one with `env` and `execArgv` (the parent's own, which the
 * child inherits): only what is on and not set already.
 */
export function memorySettings(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): ProcessSettings {
  const out: ProcessSettings = { env: {}, execArgv: [] };
  if (!memoryTuningOn(env)) return out;
  if (env.MALLOC_ARENA_MAX === undefined) out.env.MALLOC_ARENA_MAX = MALLOC_ARENA_MAX;
  const semi = /--max[-_]semi[-_]space[-_]size/;
  if (!execArgv.some((a) => semi.test(a)) && !semi.test(env.NODE_OPTIONS ?? ''))
    out.execArgv.push(`--max-semi-space-size=${MAX_SEMI_SPACE_MIB}`);
  return out;
}

/** V8 flags a fleet process sets on itself at run time (see the header) */
export const ENGINE_FLAGS: readonly string[] = ['--liftoff-only'];

/**
 * The V8 flags to set in a process with `env` and `execArgv`: {@link ENGINE_FLAGS} unless tuning is off or
 * the process was started with a WebAssembly tiering flag of its own (--liftoff…, --wasm-tier-up,
 * --wasm-dynamic-tiering, --wasm-lazy-compilation, with or without --no-).
 */
export function engineFlags(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
): string[] {
  if (!memoryTuningOn(env)) return [];
  const tiering =
    /^--(no-)?(liftoff|wasm[-_]tier[-_]up|wasm[-_]dynamic[-_]tiering|wasm[-_]lazy[-_]compilation)/;
  if (execArgv.some((a) => tiering.test(a))) return [];
  return [...ENGINE_FLAGS];
}

/**
 * Sets {@link engineFlags} in this process; called by the entry before anything connects (undici compiles
 * its parser at its first connection, with the flags set then). `merges`: the process serves the fleet (a
 * single process, a worker); a cluster primary only forks and adds up metrics, and never scans. Returns
 * what it set.
 */
export function applyEngineSettings(merges = true): string[] {
  const flags = engineFlags();
  // the fleet's own scanner keeps the optimising tier that --liftoff-only denies what compiles after it
  if (merges && flags.includes('--liftoff-only')) compileScannerWasmOptimised();
  for (const f of flags) setFlagsFromString(f);
  return flags;
}

/** The start-up line: what a single server process runs with, or what the forked workers get. */
export function describeMemorySettings(forks: boolean): string {
  if (!memoryTuningOn()) return 'memory settings off (FLEET_MEMORY_TUNING=off)';
  const add = memorySettings();
  const added = [...Object.entries(add.env).map(([k, v]) => `${k}=${v}`), ...add.execArgv];
  const engine = engineFlags();
  const set = engine.length ? `; set at run time: ${engine.join(' ')}` : '';
  if (forks) return `memory settings for the workers: ${added.join(' ') || 'as this process has them'}${set}`;
  return added.length
    ? `memory settings not in effect in this single process (set ${added.join(' ')} before it starts: README "Memory settings")${set}`
    : `memory settings in effect${set}`;
}

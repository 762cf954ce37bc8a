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
 */
import { ConfigError } from '../../src/config/schema.ts';

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

/** The start-up line: what a single server process runs with, or what the forked workers get. */
export function describeMemorySettings(forks: boolean): string {
  if (!memoryTuningOn()) return 'memory settings off (FLEET_MEMORY_TUNING=off)';
  const add = memorySettings();
  const added = [...Object.entries(add.env).map(([k, v]) => `${k}=${v}`), ...add.execArgv];
  if (forks) return `memory settings for the workers: ${added.join(' ') || 'as this process has them'}`;
  return added.length
    ? `memory settings not in effect in this single process (set ${added.join(' ')} before it starts: README "Memory settings")`
    : 'memory settings in effect';
}

/**
 * What `npm start` / `node dist/node/main.js` reads from its command line and environment besides the
 * configuration document: how many worker processes, and how long a drain may take.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../../src/config/schema.ts';

/** `--name value`, `--name=value`, else the environment variable, else undefined */
export function argValue(argv: string[], name: string, envName?: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  if (eq) return eq.slice(name.length + 3);
  return envName ? process.env[envName] : undefined;
}

/**
 * The CPUs this process may use: the cores it may run on (affinity), capped by a cgroup v2 CPU quota
 * (`cpu.max`, what a container's CPU limit becomes), which availableParallelism does not see.
 */
export function usableCpus(cpuMax = readCpuMax()): number {
  const cores = availableParallelism();
  const m = /^(\d+)\s+(\d+)/.exec(cpuMax ?? '');
  if (!m) return cores; // "max 100000": no quota
  return Math.max(1, Math.min(cores, Math.ceil(Number(m[1]) / Number(m[2]))));
}

function readCpuMax(): string | undefined {
  try {
    return readFileSync('/sys/fs/cgroup/cpu.max', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * `--workers N` / FLEET_WORKERS (a positive integer, or `auto` for one per usable CPU). Default: one per
 * usable CPU with a configuration; one for the embedded demo, whose simulated clusters are in-process
 * state a reader expects to poke at in one place.
 */
export function workerCount(argv: string[], withConfig: boolean, cpus = usableCpus): number {
  const v = argValue(argv, 'workers', 'FLEET_WORKERS');
  if (v === undefined || v === '') return withConfig ? cpus() : 1;
  if (v === 'auto') return cpus();
  if (!/^[1-9]\d{0,3}$/.test(v))
    throw new ConfigError(
      `--workers / FLEET_WORKERS: "${v}" is not a positive number of processes (or "auto")`,
    );
  return Number(v);
}

/** `--drain-seconds S` / FLEET_DRAIN_SECONDS: how long in-flight requests and watches get on SIGTERM (10) */
export function drainMs(argv: string[]): number {
  const v = argValue(argv, 'drain-seconds', 'FLEET_DRAIN_SECONDS');
  if (v === undefined || v === '') return 10_000;
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) > 3600)
    throw new ConfigError(
      `--drain-seconds / FLEET_DRAIN_SECONDS: "${v}" is not a number of seconds (0–3600)`,
    );
  return Math.round(Number(v) * 1000);
}

/**
 * `--federation on|off` for the demo: whether the simulated control plane is part of the fleet view
 * (the configuration's `federation`); nothing when not given, so the demo's own default stands.
 */
export function demoFederation(argv: string[]): { federation?: boolean } {
  const v = argValue(argv, 'federation');
  if (v === undefined) return {};
  if (v === 'on' || v === 'off') return { federation: v === 'on' };
  throw new ConfigError(`--federation: "${v}" is neither "on" nor "off"`);
}

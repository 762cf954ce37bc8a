/**
 * Where a run's wall time goes, step by step: the harness's start (helper processes, clusters, fleets,
 * the bundle, the cases' own processes) and, inside each case, its actions in the helper processes (timed
 * by the harness) and the steps a case names itself (`step('fleet start', …)`). Printed under the case
 * table of wall times, and kept in BENCH_JSON (`steps`), so a slow --quick run says what was slow.
 */

export interface StepTime {
  label: string;
  /** summed wall time, ms (steps that overlap each count their own) */
  ms: number;
  /** CPU of every process of the run over the step, ms (what `cpuWith` was given; NaN without) */
  cpuMs: number;
  n: number;
}

let current = new Map<string, StepTime>();
let cpuNow: () => number | null = () => null;

/** where the steps' CPU comes from: the harness gives its process tree's (bench/lib/treecpu.ts) */
export function cpuWith(f: () => number | null): void {
  cpuNow = f;
}

function add(label: string, ms: number, cpuMs: number): void {
  const s = current.get(label) ?? { label, ms: 0, cpuMs: 0, n: 0 };
  s.ms += ms;
  s.cpuMs += cpuMs;
  s.n++;
  current.set(label, s);
}

/** Runs `fn`, adding its wall time (and the run's CPU meanwhile) to `label` of the current case or start. */
export async function step<T>(label: string, fn: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const c0 = cpuNow();
  try {
    return await fn();
  } finally {
    const c1 = cpuNow();
    add(label, performance.now() - t0, c0 === null || c1 === null ? Number.NaN : c1 - c0);
  }
}

/** The steps recorded since the last call, in the order first seen; starts a fresh record. */
export function takeSteps(): StepTime[] {
  const out = [...current.values()];
  current = new Map();
  return out;
}

/** `label 1.2 s (CPU 0.8 s) ×3, …`: the steps that took at least `minMs`, longest first */
export function formatSteps(steps: StepTime[], minMs = 100): string {
  const s1 = (ms: number) => (ms / 1000).toFixed(1);
  return [...steps]
    .filter((s) => s.ms >= minMs)
    .sort((a, b) => b.ms - a.ms)
    .map(
      (s) =>
        `${s.label} ${s1(s.ms)} s${Number.isFinite(s.cpuMs) ? ` (CPU ${s1(s.cpuMs)})` : ''}${s.n > 1 ? ` ×${s.n}` : ''}`,
    )
    .join(', ');
}

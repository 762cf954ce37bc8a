/** Small, dependency-free statistics for the benchmark: percentiles, medians, process CPU time. */
import { readFileSync } from 'node:fs';

/** Nearest-rank percentile (0 < p ≤ 100) of an ascending-sorted array; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Median of the finite values; NaN when there are none. */
export function median(values: Array<number | null | undefined>): number {
  const xs = values
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
    .sort((a, b) => a - b);
  if (xs.length === 0) return Number.NaN;
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

/** The upper median (the middle element of a sorted copy; the later one of two): what the paired tools print. */
export function upperMedian(xs: number[]): number {
  return [...xs].sort((p, q) => p - q)[xs.length >> 1]!;
}

/**
 * An A/B measured in one process: each round measures both sides, A first in even rounds and B first in odd
 * ones, so neither always runs second (after the other's garbage, in its JIT state). Each side's samples,
 * and b ÷ a per round.
 */
export function pairedRounds(
  rounds: number,
  a: () => number,
  b: () => number,
): { a: number[]; b: number[]; ratio: number[] } {
  const out = { a: [] as number[], b: [] as number[], ratio: [] as number[] };
  for (let k = 0; k < rounds; k++) {
    let x: number;
    let y: number;
    if (k & 1) {
      y = b();
      x = a();
    } else {
      x = a();
      y = b();
    }
    out.a.push(x);
    out.b.push(y);
    out.ratio.push(y / x);
  }
  return out;
}

/** A growable Float64Array: one slot per response is cheap enough to keep every latency exactly. */
export class Samples {
  private buf = new Float64Array(4096);
  private n = 0;

  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  get length(): number {
    return this.n;
  }

  sorted(): Float64Array {
    return this.buf.slice(0, this.n).sort();
  }

  /** the samples in the order they were pushed (a view: valid until the next push) */
  values(): Float64Array {
    return this.buf.subarray(0, this.n);
  }
}

const CLK_TCK = 100; // USER_HZ: 100 on every Linux architecture Node runs on

/**
 * CPU time (user + system, in ms) a process has used so far, from /proc/<pid>/stat; null where there is
 * no /proc. Resolution is one clock tick (10 ms): measure windows of seconds, not single requests.
 */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may contain spaces and parentheses: split after its closing ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/** x/y, or NaN when either is missing or y is 0. */
export function ratio(x: number, y: number): number {
  return Number.isFinite(x) && Number.isFinite(y) && y !== 0 ? x / y : Number.NaN;
}

/**
 * Memory of another process, from Linux's /proc (the harness and the processes it measures share the
 * machine): resident set (VmRSS), its peak since start or since the last reset (VmHWM), and a way to find a
 * runtime's own child process (miniflare's `workerd`). Everything returns null/undefined where there is no
 * /proc, so the bench degrades to "not measured" instead of failing.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

export interface ProcMemory {
  /** resident set now, bytes */
  rss: number;
  /** peak resident set since the process started or since resetPeak(), bytes */
  hwm: number;
}

export function procMemory(pid: number): ProcMemory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Number(m[1]) * 1024 : Number.NaN;
    };
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Resets the process's peak resident set (VmHWM) to its current RSS: `5` into /proc/<pid>/clear_refs
 * (Linux ≥ 4.0; needs the same user or root). False when not possible: the peak then counts from start.
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function parentOf(pid: number): { ppid: number; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { ppid: Number(fields[1]), comm: stat.slice(open + 1, close) };
  } catch {
    return undefined;
  }
}

/** The pids of every descendant of `root` whose command name (/proc/<pid>/comm) is `comm`. */
export function descendantsNamed(root: number, comm: string): number[] {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
  const info = new Map(pids.map((p) => [p, parentOf(p)]));
  const isUnder = (p: number) => {
    for (let q = info.get(p)?.ppid, hops = 0; q !== undefined && q > 0 && hops < 64; hops++) {
      if (q === root) return true;
      q = info.get(q)?.ppid;
    }
    return false;
  };
  return pids.filter((p) => info.get(p)?.comm === comm && isUnder(p));
}

/**
 * Samples a process's RSS every `intervalMs` while something runs: the peak seen and a coarse timeline
 * (VmHWM gives the exact peak; the samples show when it happened).
 */
export function sampleRss(pid: number, intervalMs = 50): { stop(): { peak: number; samples: number[] } } {
  const samples: number[] = [];
  let peak = 0;
  const tick = () => {
    const m = procMemory(pid);
    if (!m) return;
    samples.push(m.rss);
    if (m.rss > peak) peak = m.rss;
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return { peak, samples };
    },
  };
}

export const MiB = 1024 * 1024;

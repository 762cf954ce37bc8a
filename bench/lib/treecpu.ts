/**
 * CPU time of a whole process tree (Linux /proc): the harness, its helper processes, and whatever those
 * start (canned clusters, workerd, a bundled fleet, kubectl). A case's CPU is the difference before and
 * after it: unlike its wall time, it hardly depends on what else the machine is doing, so it says where
 * a run's time would go on an idle machine.
 *
 * Each live process counts its own time plus that of its children it has already reaped (cutime,
 * cstime); a child still alive is counted as itself, never twice. Off Linux: null.
 */
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = 100; // USER_HZ: 100 on every Linux architecture Node runs on

interface Stat {
  ppid: number;
  ticks: number;
}

function stat(pid: string): Stat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may contain spaces and parentheses: split after its closing ')'
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // fields from 3 on: state ppid … utime(14) stime(15) cutime(16) cstime(17)
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

/** CPU ms used so far by `root` and every live descendant (with their reaped children) */
export function treeCpuMs(root = process.pid): number | null {
  let names: string[];
  try {
    names = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return null;
  }
  const all = new Map<number, Stat>();
  for (const n of names) {
    const s = stat(n);
    if (s) all.set(Number(n), s);
  }
  if (!all.has(root)) return null;
  const children = new Map<number, number[]>();
  for (const [pid, s] of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  let ticks = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    ticks += all.get(pid)?.ticks ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return (ticks * 1000) / CLK_TCK;
}

/**
 * System calls of a running process (every thread) over a stretch: `strace -c -f -p <pid>`, its summary
 * read back as calls by name. It slows the traced process many times over: what it measures is how many
 * calls an event costs, never a rate (the cases that use it trace bursts of their own, after the measured
 * ones). Needs strace and the right to trace the process (ptrace: the bench's own children).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `strace -c` summary lines → calls by syscall name (the `total` line left out) */
export function parseStraceSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    // % time, seconds, usecs/call, calls, [errors], syscall
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)\s*$/.exec(line);
    if (m && m[2] !== 'total') calls.set(m[2]!, (calls.get(m[2]!) ?? 0) + Number(m[1]));
  }
  return calls;
}

/** `strace -e trace=writev -s 0` lines → the calls, the pieces (iovecs) and the bytes they wrote */
export function parseWritevTrace(text: string): { calls: number; pieces: number; bytes: number } {
  let calls = 0;
  let pieces = 0;
  let bytes = 0;
  // `writev(23, [...], 3) = 345`, after the thread's id
  for (const m of text.matchAll(/writev\(\d+, \[.*?\], (\d+)\) += (\d+)/g)) {
    calls++;
    pieces += Number(m[1]);
    bytes += Number(m[2]);
  }
  return { calls, pieces, bytes };
}

/**
 * Attaches to `pid` (resolves once strace says it is attached); the function returned detaches and
 * resolves with what it wrote: `-c`'s summary by name by default, else (`args` given) the trace itself.
 * Undefined when strace is missing or may not attach.
 */
export async function straceStart(pid: number): Promise<(() => Promise<Map<string, number>>) | undefined>;
export async function straceStart(pid: number, args: string[]): Promise<(() => Promise<string>) | undefined>;
export async function straceStart(
  pid: number,
  args?: string[],
): Promise<(() => Promise<Map<string, number> | string>) | undefined> {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-strace-')), 'summary.txt');
  const p = spawn('strace', [...(args ?? ['-c']), '-f', '-p', String(pid), '-o', out], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const attached = await new Promise<boolean>((resolve) => {
    let err = '';
    const timer = setTimeout(() => resolve(false), 10_000);
    p.stderr.on('data', (d) => {
      err += d;
      if (/attached/.test(err)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    p.once('error', () => resolve(false));
    p.once('exit', () => resolve(false));
  });
  if (!attached) {
    p.kill('SIGKILL');
    return undefined;
  }
  return async () => {
    const done = new Promise((r) => p.once('exit', r));
    p.kill('SIGINT');
    await done;
    const text = readFileSync(out, 'utf8');
    return args ? text : parseStraceSummary(text);
  };
}

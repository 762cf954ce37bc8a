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

/**
 * Attaches to `pid` (resolves once strace says it is attached); the function returned detaches and
 * resolves with the calls by name. Undefined when strace is missing or may not attach.
 */
export async function straceStart(pid: number): Promise<(() => Promise<Map<string, number>>) | undefined> {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-strace-')), 'summary.txt');
  const p = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', out], {
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
    return parseStraceSummary(readFileSync(out, 'utf8'));
  };
}

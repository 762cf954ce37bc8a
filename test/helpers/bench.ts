/**
 * Runs `npm run bench`'s harness (bench/run.ts) as a child with `args`, for the tests that keep it from
 * rotting: its output and errors as one text (in the order written, so a failure shows them together),
 * killed at `timeoutMs`. Not ./child.ts's runChild: that resolves when the pipes close, which a helper
 * process the bench leaves behind could hold open past the kill; this resolves when the bench exits.
 */
import { spawn } from 'node:child_process';

export function runBench(
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      // BENCH_ONLY cleared: the cases are the ones `args` name, whatever the shell running the tests set
      env: { ...process.env, BENCH_ONLY: '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

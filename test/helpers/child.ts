/**
 * Runs a command-line program a test drives (kubectl, Helm, a kubectl plugin) to its end: its output and
 * errors collected apart, its standard input given (or closed at once), killed at its timeout. Rejects
 * only when the program cannot be started.
 */
import { spawn } from 'node:child_process';

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runChild(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs: number },
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      stdout += d;
    });
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    const t = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs);
    p.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
    // a child that exits without reading its input (kubectl refusing its arguments) closes the pipe first:
    // the EPIPE is no failure of the caller's, whose assertions read the exit code and output
    p.stdin.on('error', () => {});
    p.stdin.end(opts.stdin ?? '');
  });
}

/**
 * test/python/fleet_client.py under Kubernetes' Python client (Debian's, or FLEET_PYTHON), as the
 * simulated and the real suites run it: started, `watching` once it says WATCHING on stderr (its watch is
 * open, so changes made after it are seen), `exited` with its code; what it printed is read at the end.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const PYTHON = process.env.FLEET_PYTHON ?? '/usr/bin/python3';

export interface PythonClient {
  watching: Promise<void>;
  exited: Promise<number | null>;
  /** its stdout so far (a JSON report once it exited 0) */
  out(): string;
  /** its stderr so far */
  err(): string;
}

export function startPythonClient(args: string[], env: NodeJS.ProcessEnv = process.env): PythonClient {
  const p = spawn(PYTHON, [resolve('test/python/fleet_client.py'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d) => {
    out += d;
  });
  const watching = new Promise<void>((res) =>
    p.stderr.on('data', (d) => {
      err += d;
      if (err.includes('WATCHING')) res();
    }),
  );
  const exited = new Promise<number | null>((res) => p.on('close', res));
  return { watching, exited, out: () => out, err: () => err };
}

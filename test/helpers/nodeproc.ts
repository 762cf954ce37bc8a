/**
 * The bundled Node entry (deploy/node/main.ts, bundled as `npm run build:node` does) as a process of its
 * own, for tests of what only a real process shows: several worker processes, signals, exit codes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildNode } from '../../scripts/build-node.mjs';

/** Bundled inside the checkout (under .cache/), so its external packages resolve from node_modules. */
export function bundleNodeEntry(name: string): Promise<string> {
  return buildNode(resolve(mkdtempSync(resolve(`.cache/${name}-`)), 'main.js'));
}

/**
 * Starts it on an OS-picked port (`nodeArgs`: node's own options, before the entry); `waitFor` resolves with
 * the first match in its output so far or to come.
 */
export function startNodeEntry(
  main: string,
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
) {
  const p = spawn(process.execPath, [...nodeArgs, main, ...args], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters = new Set<() => void>();
  const on = (d: Buffer) => {
    out += d;
    for (const w of waiters) w();
  };
  p.stdout.on('data', on);
  p.stderr.on('data', on);
  const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  const waitFor = (re: RegExp, ms = 60_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (!m) return;
        waiters.delete(check);
        clearTimeout(t);
        resolve(m);
      };
      const t = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${re} in the output within ${ms} ms:\n${out}`));
      }, ms);
      waiters.add(check);
      check();
    });
  return { p, output: () => out, exited, waitFor };
}

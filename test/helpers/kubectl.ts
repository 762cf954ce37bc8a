/**
 * Drives the real kubectl binary (extracted by global-setup) against a server URL, each call with its own
 * kubeconfig and --cache-dir so tests never share discovery caches.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectlPath } from '../../scripts/kubectl.mjs';
import { type ChildResult, runChild } from './child.ts';

export type KubectlResult = ChildResult;

/** Credentials for the kubeconfig: a CA to trust (https servers), a bearer token, a client certificate. */
export interface KubectlAuth {
  caPem?: string;
  token?: string;
  clientCert?: string;
  clientKey?: string;
}

export class Kubectl {
  readonly dir = mkdtempSync(join(tmpdir(), 'fleet-kubectl-'));
  readonly kubeconfig = join(this.dir, 'config');

  constructor(
    readonly server: string,
    auth: KubectlAuth = {},
  ) {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const cluster = auth.caPem ? `\n    certificate-authority-data: ${b64(auth.caPem)}` : '';
    const user = [
      auth.token ? `token: ${auth.token}` : '',
      auth.clientCert ? `client-certificate-data: ${b64(auth.clientCert)}` : '',
      auth.clientKey ? `client-key-data: ${b64(auth.clientKey)}` : '',
    ].filter(Boolean);
    writeFileSync(
      this.kubeconfig,
      `apiVersion: v1
kind: Config
clusters:
- name: fleet
  cluster:
    server: ${server}${cluster}
contexts:
- name: fleet
  context:
    cluster: fleet
    user: fleet
users:
- name: fleet
  user: ${user.length ? `\n    ${user.join('\n    ')}` : '{}'}
current-context: fleet
`,
    );
  }

  private args(args: string[]): string[] {
    return ['--kubeconfig', this.kubeconfig, '--cache-dir', join(this.dir, 'cache'), ...args];
  }

  run(
    args: string[],
    opts: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {},
  ): Promise<KubectlResult> {
    return runChild(kubectlPath(), this.args(args), {
      env: { ...process.env, KUBECONFIG: this.kubeconfig, ...opts.env },
      stdin: opts.stdin,
      timeoutMs: opts.timeoutMs ?? 45_000,
    });
  }

  /** A long-running kubectl (e.g. `get -w`): collects output, resolves `waitFor` when a pattern appears. */
  spawn(
    args: string[],
    opts: { env?: Record<string, string> } = {},
  ): {
    proc: ChildProcess;
    output: () => string;
    waitFor: (re: RegExp, timeoutMs?: number) => Promise<string>;
    stop: () => void;
  } {
    const p = spawn(kubectlPath(), this.args(args), {
      env: { ...process.env, KUBECONFIG: this.kubeconfig, ...opts.env },
    });
    let out = '';
    const waiters: Array<() => void> = [];
    const onData = (d: Buffer) => {
      out += d;
      for (const w of waiters.splice(0)) w();
    };
    p.stdout!.on('data', onData);
    p.stderr!.on('data', onData);
    return {
      proc: p,
      output: () => out,
      waitFor: (re, timeoutMs = 30_000) =>
        new Promise((resolve, reject) => {
          const deadline = setTimeout(
            () => reject(new Error(`timed out waiting for ${re} in kubectl output:\n${out}`)),
            timeoutMs,
          );
          const check = () => {
            if (re.test(out)) {
              clearTimeout(deadline);
              resolve(out);
            } else waiters.push(check);
          };
          check();
        }),
      stop: () => p.kill('SIGTERM'),
    };
  }
}

/** the project's kubectl plugins (bin/kubectl-fleet) */
const PLUGINS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');

/**
 * `kubectl fleet <args>`: kubectl itself, with the plugin's folder on PATH (global flags would hide the
 * plugin: the kubeconfig goes by the environment only).
 */
export function kubectlFleet(kubeconfig: string, args: string[]): Promise<ChildResult> {
  const kubectl = kubectlPath();
  return runChild(kubectl, ['fleet', ...args], {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      KUBECTL: kubectl,
      PATH: `${PLUGINS}:${dirname(kubectl)}:${process.env.PATH}`,
    },
    timeoutMs: 60_000,
  });
}

/**
 * The cell of row `row` (its first column) under `header` in kubectl's table, read by the header's position
 * (cells may be empty); undefined when there is no such row or column.
 */
export function tableCell(table: string, row: string, header: string): string | undefined {
  const [head, ...lines] = table.split('\n');
  const starts = [...head!.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ text: m[0], at: m.index }));
  const i = starts.findIndex((h) => h.text === header);
  const line = lines.find((l) => l.split(/\s+/)[0] === row);
  if (i < 0 || line === undefined) return undefined;
  return line.slice(starts[i]!.at, starts[i + 1]?.at ?? line.length).trim();
}

/** {@link tableCell}, which must be there: a missing row or column throws with the table */
export function tableCellOf(table: string, row: string, header: string): string {
  const cell = tableCell(table, row, header);
  if (cell === undefined) throw new Error(`no row ${row} or no column ${header} in:\n${table}`);
  return cell;
}

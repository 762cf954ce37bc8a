/**
 * Drives the real kubectl binary (extracted by global-setup) against a server URL, each call with its own
 * kubeconfig and --cache-dir so tests never share discovery caches.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

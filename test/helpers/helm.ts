/**
 * The real Helm 4 binary (from the kubectl layer's npm package, scripts/kubectl.mjs) for end-to-end tests:
 * each runner keeps Helm's cache, config and data homes in a temporary folder of its own, so suites never
 * share repositories or plugins, and every run resolves when Helm exits (killed at its timeout).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureHelm } from '../../scripts/kubectl.mjs';
import { type ChildResult, runChild } from './child.ts';

export type HelmResult = ChildResult;

export interface Helm {
  run(kubeconfig: string, args: string[], timeoutMs?: number): Promise<HelmResult>;
  /** removes the homes */
  close(): void;
}

export function helmRunner(prefix: string): Helm {
  const bin = ensureHelm();
  const home = mkdtempSync(join(tmpdir(), prefix));
  return {
    run(kubeconfig, args, timeoutMs = 120_000) {
      return runChild(bin, ['--kubeconfig', kubeconfig, ...args], {
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_DATA_HOME: join(home, 'data'),
          KUBECONFIG: kubeconfig,
        },
        timeoutMs,
      });
    },
    close() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * Keeps `npm run bench` from rotting: runs the harness as `npm run bench` does (its own helper processes,
 * autocannon, the Go proxy when Go is installed) on two cheap cases in --quick mode: a request/response case
 * driven by autocannon, and a self-driven one (exec: actions in the load process over the IPC channel).
 * Asserts a clean exit and a parsable BENCH_JSON line with real figures, not the figures themselves.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBench } from '../helpers/bench.ts';

interface BenchJson {
  cases: Array<{
    name: string;
    error?: string;
    targets: Array<{ name: string; rps: number | null; failures: number }>;
    figures?: { rounds?: Array<Array<{ target: string; execP50Ms: number; portForwardMiBps: number }>> };
  }>;
}

describe('npm run bench', () => {
  it('runs a quick passthrough and exec case and prints a BENCH_JSON line with non-zero figures', async () => {
    // a temporary directory of its own: what the bench and its processes leave behind is seen there
    const tmp = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    // ≈ 20 s on an idle machine; minutes when the two cores are shared with other suites
    const { code, out } = await runBench(['--quick', '--only=passthrough-configmap,exec'], {
      env: { TMPDIR: tmp },
      timeoutMs: 170_000,
    });
    // tsx keeps its compile cache there (tsx-<uid>): not the bench's
    const left = readdirSync(tmp).filter((f) => !f.startsWith('tsx-'));
    rmSync(tmp, { recursive: true, force: true });
    expect(code, out).toBe(0);
    // the fleets' configurations and kubectl's kubeconfig removed with the processes that read them
    expect(left).toEqual([]);
    const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
    expect(line, out).toBeDefined();
    const json = JSON.parse(line!.slice('BENCH_JSON '.length)) as BenchJson;

    const passthrough = json.cases.find((c) => c.name === 'passthrough-configmap');
    expect(passthrough?.error, out).toBeUndefined();
    for (const name of ['direct', 'fleet']) {
      const t = passthrough!.targets.find((x) => x.name === name);
      expect(t?.rps, `${name} throughput`).toBeGreaterThan(0);
      expect(t?.failures).toBe(0);
    }

    const exec = json.cases.find((c) => c.name === 'exec');
    expect(exec?.error, out).toBeUndefined();
    const fleet = exec!.figures!.rounds![0]!.find((r) => r.target === 'fleet');
    expect(fleet?.execP50Ms).toBeGreaterThan(0);
    expect(fleet?.portForwardMiBps).toBeGreaterThan(0);
  }, 180_000);
});

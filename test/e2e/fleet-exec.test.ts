import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { kubectlFleet } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
/** fx-b's command exits 3, the others 0; each says hi on stdout and its name on stderr */
const SCRIPT =
  'echo hi from $(hostname); echo err $(hostname) >&2; if [ "$(hostname)" = fx-b ]; then exit 3; fi';

const AT: Array<[string, string]> = [
  ['member1', 'fx-a'],
  ['member2', 'fx-b'],
  ['member3', 'fx-c'],
  ['member3', 'fx-d'],
];

function seed(s: ServedSimFleet): void {
  for (const [cluster, name] of AT)
    s.members.get(cluster)!.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'shop', labels: { fleetexec: 'web' } },
      // bound and running, as a kubelet leaves them: the simulated scheduler would otherwise bind a pod
      // created without a node and make it Pending again until its kubelet starts it
      spec: { nodeName: `${cluster}-worker`, containers: [{ name: 'app', image: 'busybox' }] },
      status: { phase: 'Running' },
    } as never);
}

// Node opens the upstream WebSockets with deploy/node/exec-transport.ts, workerd with its own fetch
describe.each(RUNTIMES)('kubectl fleet exec on %s', (runtime) => {
  const f = useSimFleet(runtime, { prepare: seed });
  let kubeconfig: string;
  beforeAll(async () => {
    kubeconfig = f.kubectl().kubeconfig;
    // exec refuses a pod that is not running: every seeded pod must be Running on its node first
    await vi.waitFor(
      () => {
        for (const [cluster, name] of AT)
          expect(
            (f.member(cluster).get(PODS, 'shop', name) as { status?: { phase?: string } })?.status?.phase,
          ).toBe('Running');
      },
      { timeout: 30_000, interval: 50 },
    );
  });

  it('runs in every matching pod, output prefixed by fleet pod name, per-pod exit codes', async () => {
    const r = await kubectlFleet(kubeconfig, [
      'exec',
      '-l',
      'fleetexec=web',
      '-n',
      'shop',
      '--',
      'sh',
      '-c',
      SCRIPT,
    ]);
    expect(r.code, r.stderr).toBe(1);
    const out = r.stdout.split('\n').filter(Boolean).sort();
    expect(out, r.stderr).toEqual([
      'fx-a.clusterspace.member1: hi from fx-a',
      'fx-b.clusterspace.member2: hi from fx-b',
      'fx-c.clusterspace.member3: hi from fx-c',
      'fx-d.clusterspace.member3: hi from fx-d',
    ]);
    expect(r.stderr).toContain('fx-c.clusterspace.member3: err fx-c');
    expect(r.stderr).toContain('fx-b.clusterspace.member2: exit code 3');
    expect(r.stderr).toContain('4 pod(s): 3 succeeded, 1 failed');
  });

  it('exits 0 when every pod succeeds; NDJSON for scripts with bounded concurrency', async () => {
    const ok = await kubectlFleet(kubeconfig, [
      'exec',
      '-l',
      'fleetexec=web',
      '-n',
      'shop',
      '--',
      'sh',
      '-c',
      'echo hi; exit 0',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.split('\n').filter(Boolean)).toHaveLength(4);
    const nd = await kubectlFleet(kubeconfig, [
      'exec',
      '-l',
      'fleetexec=web',
      '-n',
      'shop',
      '--max-concurrency',
      '1',
      '-o',
      'ndjson',
      '--',
      'sh',
      '-c',
      'echo one; exit 0',
    ]);
    expect(nd.code, nd.stderr).toBe(0);
    const events = nd.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    // one at a time: each pod's lines come before the next pod's, in fleet order
    expect(events.filter((e) => 'exitCode' in e).map((e) => e.pod)).toEqual([
      'fx-a.clusterspace.member1',
      'fx-b.clusterspace.member2',
      'fx-c.clusterspace.member3',
      'fx-d.clusterspace.member3',
    ]);
    expect(events.at(-1)).toEqual({ summary: { pods: 4, succeeded: 4, failed: {}, clusters: {} } });
  });

  it('a cluster that is down is reported and the plugin exits 1', async () => {
    f.member('member2').faults.down = true;
    try {
      const r = await kubectlFleet(kubeconfig, [
        'exec',
        '-l',
        'fleetexec=web',
        '-n',
        'shop',
        '--',
        'sh',
        '-c',
        'echo hi',
      ]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('fx-a.clusterspace.member1: hi');
      expect(r.stdout).not.toContain('fx-b');
      expect(r.stderr).toMatch(/cluster member2: /);
      expect(r.stderr).toContain('3 pod(s): 3 succeeded, 0 failed; 1 cluster(s) not asked');
    } finally {
      f.member('member2').faults.down = false;
    }
  });

  it('--clusterspace narrows the pods; bad input is a 400 Status', async () => {
    const r = await kubectlFleet(kubeconfig, [
      'exec',
      '-l',
      'fleetexec=web',
      '-n',
      'shop',
      '--clusterspace',
      'member3',
      '--',
      'echo',
      'x',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'fx-c.clusterspace.member3: x',
      'fx-d.clusterspace.member3: x',
    ]);
    const bad = await kubectlFleet(kubeconfig, [
      'exec',
      '-l',
      'fleetexec=web',
      '-n',
      'shop',
      '--max-concurrency',
      '0',
      '--',
      'echo',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/maxConcurrency must be an integer/);
  });
});

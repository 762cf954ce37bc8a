/**
 * `kubectl port-forward` to a port no container declares, as with `kubectl run web --image=nginx` (no
 * `--port`): the kubelet dials the port in the pod's network namespace whether declared or not, so the
 * simulated nginx answers HTTP there instead of echoing the request back. Through the fleet at the root,
 * kubectl 1.35, on Node and in workerd.
 */
import { describe, expect, it } from 'vitest';
import { until } from '../faults/fleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };

describe.each(RUNTIMES)('port-forward to an undeclared port on %s', (runtime) => {
  const f = useSimFleet(runtime);

  it('an nginx pod that declares no port answers HTTP on 80', async () => {
    const name = `pf-web-${runtime}`;
    const k = f.kubectl();
    const run = await k.run(['run', `${name}.clusterspace.member1`, '-n', 'default', '--image=nginx:1.27']);
    expect(run.stderr).toBe('');
    const m1 = f.member('member1');
    const pod = () => m1.get(PODS, 'default', name) as { spec: any; status?: { phase?: string } } | undefined;
    await until(() => pod()?.status?.phase === 'Running', 20_000, 'the pod running');
    expect(pod()!.spec.containers[0].ports).toBeUndefined();
    const p = k.spawn(['-n', 'default', 'port-forward', `${name}.clusterspace.member1`, '0:80']);
    try {
      const out = await p.waitFor(/Forwarding from 127\.0\.0\.1:\d+/);
      const port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)![1]);
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { Connection: 'close' } });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(name);
    } finally {
      p.stop();
    }
  });
});

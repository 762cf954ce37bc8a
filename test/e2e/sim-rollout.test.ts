/**
 * `kubectl rollout undo` of a Deployment created at run time, through the fleet at the root (Node and
 * workerd), against the simulated clusters: their deployment controller sets the Deployment's
 * `deployment.kubernetes.io/revision` and keeps the ReplicaSet history as kube-controller-manager's does
 * (a rolled-back-to ReplicaSet becomes the newest revision). Without the annotation kubectl's rollback
 * patch (`replace /metadata/annotations`) failed with a 422.
 */
import { describe, expect, it } from 'vitest';
import { until } from '../faults/fleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };

describe.each(RUNTIMES)('rollout undo of a new Deployment on %s', (runtime) => {
  const f = useSimFleet(runtime);

  it('revision 1, 2, then undo: back to the first image as revision 3', async () => {
    const name = `undo-${runtime}`;
    const fleetName = `${name}.clusterspace.member1`;
    const k = f.kubectl();
    const m1 = f.member('member1');
    const dep = () =>
      m1.get(DEPLOY, 'default', name) as
        | { metadata: { annotations?: Record<string, string> }; spec: any }
        | undefined;
    const revision = () => dep()?.metadata.annotations?.['deployment.kubernetes.io/revision'];
    const image = () => dep()?.spec.template.spec.containers[0].image;

    const created = await k.run(['create', 'deployment', fleetName, '-n', 'default', '--image=nginx:1.27']);
    expect(created.stderr).toBe('');
    await until(() => revision() === '1', 20_000, 'revision 1');
    const set = await k.run(['set', 'image', `deployment/${fleetName}`, '-n', 'default', 'nginx=nginx:1.28']);
    expect(set.stderr).toBe('');
    await until(() => revision() === '2', 20_000, 'revision 2');

    const undo = await k.run(['rollout', 'undo', `deployment/${fleetName}`, '-n', 'default']);
    expect([undo.code, undo.stderr]).toEqual([0, '']);
    expect(undo.stdout).toContain('rolled back');
    await until(() => revision() === '3', 20_000, 'revision 3');
    expect(image()).toBe('nginx:1.27');
    const history = await k.run(['rollout', 'history', `deployment/${fleetName}`, '-n', 'default']);
    expect(history.stdout).toMatch(/^2\s/m);
    expect(history.stdout).toMatch(/^3\s/m);
    expect(history.stdout).not.toMatch(/^1\s/m);
  });
});

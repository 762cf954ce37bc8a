/**
 * Writes by fleet name name what they refer to as the cluster knows it (issue 35): the real Helm 4 binary
 * installs test/fixtures/charts/refs with `fullnameOverride=x.clusterspace.member2` at the fleet root, so
 * every object AND every reference to one is `x.clusterspace.member2`; member2 must then hold a
 * ServiceAccount `x` and a Deployment whose pods use the service account, Secret and ConfigMap `x` (a real
 * kube-apiserver refuses a pod whose serviceAccountName has dots that name no account). The same for
 * `kubectl apply` (JSON) and a protobuf body (encoded by the simulator's own codec, as client-go would),
 * and a reference to another cluster is a 400 that names the field. On Node and in workerd.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { encodeProtobuf } from '../../sim/protobuf.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { type Helm, helmRunner } from '../helpers/helm.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CHART = resolve('test/fixtures/charts/refs');
const core = (resource: string) => ({ group: '', version: 'v1', resource });
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const ROLEBINDINGS = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' };
type Obj = KubeObject & Record<string, any>;

let helmRun: Helm;
/** Helm's output and errors together, as a failed expectation shows them */
const helm = async (kubeconfig: string, args: string[]) => {
  const r = await helmRun.run(kubeconfig, args);
  return { code: r.code, out: r.stdout + r.stderr };
};

beforeAll(() => {
  helmRun = helmRunner('fleet-refs-');
});
afterAll(() => helmRun.close());

const podManifest = (name: string, sa: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: {
    serviceAccountName: sa,
    containers: [{ name: 'c', image: 'nginx', envFrom: [{ configMapRef: { name: sa } }] }],
  },
});

describe.each(RUNTIMES)('references written by fleet name on %s', (runtime) => {
  const f = useSimFleet(runtime);

  it('helm install at the root with fullnameOverride: x.clusterspace.member2', async () => {
    const release = `refs-${runtime}`;
    const x = `x${runtime}`;
    const r = await helm(f.kubectl('').kubeconfig, [
      'install',
      release,
      CHART,
      '-n',
      'default',
      '--set',
      `fullnameOverride=${x}.clusterspace.member2`,
    ]);
    expect(r.code, r.out).toBe(0);
    const m2 = f.member('member2');
    expect(m2.get(core('serviceaccounts'), 'default', x)).toBeDefined();
    const sa = m2.get(core('serviceaccounts'), 'default', x) as Obj;
    expect(sa.imagePullSecrets).toEqual([{ name: x }]);
    const spec = (m2.get(DEPLOY, 'default', x) as Obj).spec.template.spec;
    expect(spec.serviceAccountName).toBe(x);
    expect(spec.imagePullSecrets).toEqual([{ name: x }]);
    expect(spec.containers[0].envFrom).toEqual([{ secretRef: { name: x } }]);
    expect(spec.containers[0].env[0].valueFrom.configMapKeyRef.name).toBe(x);
    expect(spec.volumes.map((v: Obj) => v.configMap?.name ?? v.secret?.secretName)).toEqual([x, x]);
    const rb = m2.get(ROLEBINDINGS, 'default', x) as Obj;
    expect(rb.roleRef.name).toBe(x);
    expect(rb.subjects[0].name).toBe(x);
    // and at the root the chart's objects read back by the names it gave them
    const got = await f
      .kubectl('')
      .run(['get', 'deploy', `${x}.clusterspace.member2`, '-n', 'default', '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).spec.template.spec.serviceAccountName).toBe(x);
    // an upgrade applies the manifest again (Helm 4: server-side apply patches) by the same names
    const up = await helm(f.kubectl('').kubeconfig, [
      'upgrade',
      release,
      CHART,
      '-n',
      'default',
      '--set',
      `fullnameOverride=${x}.clusterspace.member2`,
      '--set',
      'image=nginx:2',
    ]);
    expect(up.code, up.out).toBe(0);
    const after = (m2.get(DEPLOY, 'default', x) as Obj).spec.template.spec;
    expect(after.containers[0].image).toBe('nginx:2');
    expect(after.serviceAccountName).toBe(x);
    expect(after.containers[0].envFrom).toEqual([{ secretRef: { name: x } }]);
    // kubectl patch (a strategic merge patch, no kind in it) maps its references the same way
    const p = await f.kubectl('').run([
      'patch',
      'deploy',
      `${x}.clusterspace.member2`,
      '-n',
      'default',
      '-p',
      JSON.stringify({
        spec: { template: { spec: { serviceAccountName: `y${x}.clusterspace.member2` } } },
      }),
    ]);
    expect(p.code, p.stderr).toBe(0);
    expect((m2.get(DEPLOY, 'default', x) as Obj).spec.template.spec.serviceAccountName).toBe(`y${x}`);
    const un = await helm(f.kubectl('').kubeconfig, ['uninstall', release, '-n', 'default']);
    expect(un.code, un.out).toBe(0);
  }, 240_000);

  it('kubectl apply: a pod naming its service account by fleet name; another cluster is a 400', async () => {
    const k = f.kubectl('');
    const name = `sa-${runtime}`;
    let r = await k.run(['apply', '-f', '-'], {
      stdin: JSON.stringify(podManifest(`${name}.clusterspace.member2`, 'app.clusterspace.member2')),
    });
    expect(r.code, r.stderr).toBe(0);
    const pod = f.member('member2').get(core('pods'), 'default', name) as Obj;
    expect(pod.spec.serviceAccountName).toBe('app');
    expect(pod.spec.containers[0].envFrom[0].configMapRef.name).toBe('app');
    r = await k.run(['apply', '-f', '-'], {
      stdin: JSON.stringify(podManifest(`${name}-x.clusterspace.member2`, 'app.clusterspace.member1')),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.serviceAccountName');
    expect(r.stderr).toContain('member1');
    expect(f.member('member2').get(core('pods'), 'default', `${name}-x`)).toBeUndefined();
  }, 120_000);

  it('a protobuf pod body (what client-go sends) names its references plainly in the cluster', async () => {
    const name = `pb-${runtime}`;
    const body = encodeProtobuf(podManifest(`${name}.clusterspace.member2`, 'app.clusterspace.member2'))!;
    expect(body).toBeDefined();
    const post = (b: Uint8Array<ArrayBuffer>) =>
      fetch(`${f.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf', Accept: 'application/json' },
        body: b,
      });
    const r = await post(body);
    expect(r.status, await r.clone().text()).toBe(201);
    const pod = f.member('member2').get(core('pods'), 'default', name) as Obj;
    expect(pod.spec.serviceAccountName).toBe('app');
    expect(pod.spec.containers[0].envFrom[0].configMapRef.name).toBe('app');
    const bad = await post(
      encodeProtobuf(podManifest(`${name}-x.clusterspace.member2`, 'app.clusterspace.member1'))!,
    );
    expect(bad.status).toBe(400);
    const status = (await bad.json()) as { reason: string; message: string };
    expect(status.reason).toBe('BadRequest');
    expect(status.message).toContain('names cluster "member1"');
  }, 60_000);
});

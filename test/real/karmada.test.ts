/**
 * The fleet configured as the README tells a Karmada user (membership from Karmada's Clusters, every member
 * reached through karmada-aggregated-apiserver's cluster proxy), in front of a real Karmada v1.18 whose
 * members were joined in Push mode as `karmadactl join` does (testbed/karmada.ts): the Clusters as Karmada
 * writes them, kubectl's everyday reads at the root through the proxy, propagation by Karmada's own
 * controllers, and identity as the proxy enforces it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { impersonatorMay } from '../../testbed/karmada.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import {
  bed,
  type ClusterInfo,
  clusterKubectl,
  fleetKubectl,
  forwardedHealthz,
  ok,
  runningPod,
  until,
} from './bed.ts';

const ns = `karmada-${randomBytes(3).toString('hex')}`;
const b = bed();
const karmadaFleet = b.fleets.karmada!;
const fleet = fleetKubectl(karmadaFleet);
const members = b.members;
const direct = (m: ClusterInfo) => clusterKubectl(m);
const controlPlane = clusterKubectl(b.karmadaApiserver);

/** Waits for Karmada's unified auth to let the member's karmada-impersonator act as `name`. */
function impersonatable(m: ClusterInfo, resource: 'users' | 'groups', name: string): Promise<true> {
  return until(`${m.name}: karmada-impersonator may impersonate ${resource} ${name}`, async () => {
    const role = JSON.parse(
      await ok(direct(m), ['get', 'clusterrole', 'karmada-impersonator', '-o', 'json']),
    );
    return impersonatorMay(role, resource, name) || undefined;
  });
}

/** kubectl through the Karmada-mode fleet as another user (client certificate from the fleet's user CA). */
function fleetAs(user: string): Kubectl {
  const pair = b.users[user];
  if (!pair) throw new Error(`the bed issued no certificate for ${user}`);
  return new Kubectl(karmadaFleet.url, { caPem: b.fleetCA, clientCert: pair.cert, clientKey: pair.key });
}

describe('the Clusters, as Karmada writes them, through the fleet', () => {
  it('every member is a Push Cluster, Ready, with the API enablements and version Karmada collected', async () => {
    const list = JSON.parse(await ok(fleet, ['get', 'clusters.cluster.karmada.io', '-o', 'json']));
    const byName = new Map<string, any>(list.items.map((c: any) => [c.metadata.name, c]));
    expect([...byName.keys()].sort()).toEqual(members.map((m) => m.name).sort());
    for (const m of members) {
      const c = byName.get(m.name)!;
      expect(c.spec).toMatchObject({
        syncMode: 'Push',
        apiEndpoint: m.url,
        secretRef: { namespace: 'karmada-cluster', name: m.name },
        impersonatorSecretRef: { namespace: 'karmada-cluster', name: `${m.name}-impersonator` },
      });
      // karmadactl join: the member's kube-system namespace uid
      const kubeSystem = JSON.parse(await ok(direct(m), ['get', 'namespace', 'kube-system', '-o', 'json']));
      expect(c.spec.id).toBe(kubeSystem.metadata.uid);
      const ready = c.status.conditions.find((x: any) => x.type === 'Ready');
      expect(ready).toMatchObject({ status: 'True', reason: 'ClusterReady' });
      expect(c.status.kubernetesVersion).toBe('v1.35.4');
      const apps = c.status.apiEnablements.find((e: any) => e.groupVersion === 'apps/v1');
      expect(apps.resources).toContainEqual({ name: 'deployments', kind: 'Deployment' });
      expect(c.status.nodeSummary).toEqual({ totalNum: 1, readyNum: 1 });
    }
  });

  it("kubectl's Table for them is Karmada's (version, mode, ready)", async () => {
    const out = await ok(fleet, ['get', 'clusters']);
    expect(out.split('\n')[0]).toMatch(/^NAME\s+CLUSTER\s+VERSION\s+MODE\s+READY\s+AGE/);
    for (const m of members)
      expect(out).toMatch(new RegExp(`^${m.name}\\s+karmada\\s+v1\\.35\\.4\\s+Push\\s+True`, 'm'));
  });
});

describe('kubectl at the fleet root, members reached through Karmada’s cluster proxy', () => {
  const pods = new Map<string, string>();

  beforeAll(async () => {
    for (const m of members) {
      await ok(direct(m), ['create', 'namespace', ns]);
      await ok(direct(m), ['create', 'deployment', 'app', '--image=nginx', '--replicas=1', '-n', ns]);
    }
    for (const m of members) pods.set(m.name, await runningPod(direct(m), ns, `a Running pod in ${m.name}`));
  });

  afterAll(async () => {
    for (const m of members) await direct(m).run(['delete', 'namespace', ns, '--wait=false']);
  });

  it('get pods -A merges every member, each pod by its fleet name with its cluster', async () => {
    const out = await ok(fleet, ['get', 'pods', '-A']);
    for (const m of members)
      expect(out).toMatch(
        new RegExp(
          `^${ns}\\s+${pods.get(m.name)}\\.clusterspace\\.${m.name}\\s+${m.name}\\s+1/1\\s+Running`,
          'm',
        ),
      );
  });

  it('get, logs and exec by fleet name reach the member through the proxy', async () => {
    const m = members[1]!;
    const name = `${pods.get(m.name)}.clusterspace.${m.name}`;
    const got = JSON.parse(await ok(fleet, ['get', 'pod', name, '-n', ns, '-o', 'json']));
    const real = JSON.parse(await ok(direct(m), ['get', 'pod', pods.get(m.name)!, '-n', ns, '-o', 'json']));
    expect(got.metadata).toMatchObject({ name, uid: real.metadata.uid });
    expect(await ok(fleet, ['logs', name, '-n', ns])).toContain(m.logLine);
    expect(
      (await ok(fleet, ['exec', name, '-n', ns, '--', 'sh', '-c', 'echo via-karmada-proxy'])).trim(),
    ).toBe('via-karmada-proxy');
  });

  it('port-forward by fleet name goes through the proxy’s upgrade to what the member forwards to', async () => {
    const m = members[0]!;
    const pod = `pod/${pods.get(m.name)}.clusterspace.${m.name}`;
    expect(await forwardedHealthz(fleet, pod, ns, m.ca)).toEqual({ status: 200, body: 'ok' });
  });

  it('get -w streams through the proxy: an object created in a member afterwards, by its fleet name', async () => {
    const m = members[1]!;
    const w = fleet.spawn(['get', 'configmaps', '-n', ns, '-w', '--output-watch-events']);
    try {
      await w.waitFor(new RegExp(`kube-root-ca\\.crt\\.clusterspace\\.${members[2]!.name}`), 60_000);
      await ok(direct(m), ['create', 'configmap', 'watched', '-n', ns]);
      await w.waitFor(new RegExp(`ADDED\\s+watched\\.clusterspace\\.${m.name}`), 60_000);
    } finally {
      w.stop();
    }
  });

  it('writes by fleet name go through the proxy to that member only: create (protobuf), server-side apply, delete', async () => {
    const [m1, m2] = members as [ClusterInfo, ClusterInfo];
    await ok(fleet, ['create', 'configmap', `made.clusterspace.${m1.name}`, '--from-literal=a=b', '-n', ns]);
    const cm = `apiVersion: v1
kind: ConfigMap
metadata: {name: made.clusterspace.${m1.name}, namespace: ${ns}}
data: {a: c}
`;
    await ok(fleet, ['apply', '--server-side', '--force-conflicts', '-f', '-'], cm);
    const onMember = JSON.parse(
      await ok(direct(m1), ['get', 'configmap', 'made', '-n', ns, '-o', 'json', '--show-managed-fields']),
    );
    expect(onMember.data).toEqual({ a: 'c' });
    expect(onMember.metadata.managedFields.map((f: any) => f.manager)).toContain('kubectl');
    expect((await direct(m2).run(['get', 'configmap', 'made', '-n', ns])).code).not.toBe(0);
    await ok(fleet, ['delete', 'configmap', `made.clusterspace.${m1.name}`, '-n', ns]);
    expect((await direct(m1).run(['get', 'configmap', 'made', '-n', ns])).stderr).toMatch(/NotFound/);
  });

  it('one member by its clusterspace prefix answers as that member alone', async () => {
    const m = members[2]!;
    const out = await ok(
      new Kubectl(`${karmadaFleet.url}/clusterspaces/${m.name}`, {
        caPem: b.fleetCA,
        clientCert: b.admin.cert,
        clientKey: b.admin.key,
      }),
      ['get', 'pods', '-n', ns, '-o', 'name'],
    );
    expect(out.trim()).toBe(`pod/${pods.get(m.name)}`);
  });
});

describe('propagation: a Deployment and a PropagationPolicy applied at the root', () => {
  const [m1, m2, m3] = members as [ClusterInfo, ClusterInfo, ClusterInfo];
  const pns = `${ns}-pp`;
  const manifests = `apiVersion: v1
kind: Namespace
metadata: {name: ${pns}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${pns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: ${pns}}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [${m1.name}, ${m3.name}]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`;

  afterAll(async () => {
    await controlPlane.run(['delete', 'namespace', pns, '--wait=false']);
  });

  it('reaches the members Karmada chose, and the root lists the template and its copies with their clusters', async () => {
    // plain names at the root mean the control plane (federation): the template lands in karmada-apiserver
    await ok(fleet, ['apply', '-f', '-'], manifests);
    const template = JSON.parse(
      await ok(controlPlane, ['get', 'deployment', 'web', '-n', pns, '-o', 'json']),
    );
    expect(template.metadata.name).toBe('web');
    const policy = JSON.parse(
      await ok(controlPlane, ['get', 'propagationpolicy', 'web', '-n', pns, '-o', 'json']),
    );
    // karmada-webhook's defaulting, which the detector claims the template with
    expect(policy.metadata.labels['propagationpolicy.karmada.io/permanent-id']).toMatch(/^[0-9a-f-]{36}$/);

    // Karmada's scheduler picks the clusters; its binding says which
    const chosen = await until('the ResourceBinding scheduled', async () => {
      const rb = JSON.parse(await ok(fleet, ['get', 'resourcebindings', '-n', pns, '-o', 'json']));
      const clusters = (rb.items[0]?.spec?.clusters ?? []).map((c: any) => c.name).sort();
      return clusters.length ? clusters : undefined;
    });
    expect(chosen).toEqual([m1.name, m3.name].sort());
    for (const m of [m1, m3])
      await until(`web available in ${m.name}`, async () => {
        const d = JSON.parse(await ok(direct(m), ['get', 'deployment', 'web', '-n', pns, '-o', 'json']));
        return d.status?.availableReplicas === 1 ? true : undefined;
      });
    expect((await direct(m2).run(['get', 'deployment', 'web', '-n', pns])).code).not.toBe(0);

    const list = JSON.parse(await ok(fleet, ['get', 'deployments', '-n', pns, '-o', 'json']));
    const names = list.items.map((d: any) => d.metadata.name).sort();
    expect(names).toEqual(['web', `web.clusterspace.${m1.name}`, `web.clusterspace.${m3.name}`]);
    const table = await ok(fleet, ['get', 'deployments', '-n', pns]);
    expect(table).toMatch(/^web\s+karmada\s/m);
    for (const m of [m1, m3])
      expect(table).toMatch(new RegExp(`^web\\.clusterspace\\.${m.name}\\s+${m.name}\\s+1/1`, 'm'));
  });

  it('the template deleted at the root: Karmada removes its copies from the members (its binding collected, its Works withdrawn)', async () => {
    await ok(fleet, ['delete', 'deployment', 'web', '-n', pns]);
    for (const m of [m1, m3])
      await until(`web gone from ${m.name}`, async () => {
        const r = await direct(m).run(['get', 'deployment', 'web', '-n', pns]);
        return r.code !== 0 && r.stderr.includes('NotFound') ? true : undefined;
      });
    const left = await ok(fleet, ['get', 'deployments', '-n', pns, '-o', 'name']);
    expect(left.trim()).toBe('');
  });
});

describe('identity through Karmada’s cluster proxy', () => {
  const user = 'karmada-reader';
  const reader = fleetAs(user);
  const inm1 = `${ns}-id`;

  beforeAll(async () => {
    // the user may read pods on the control plane (so the root's own part answers) but holds no clusters/proxy
    await ok(controlPlane, [
      'create',
      'clusterrole',
      `${user}-pods`,
      '--verb=get,list,watch',
      '--resource=pods',
    ]);
    await ok(controlPlane, [
      'create',
      'clusterrolebinding',
      `${user}-pods`,
      `--clusterrole=${user}-pods`,
      `--user=${user}`,
    ]);
    await ok(direct(members[0]!), ['create', 'namespace', inm1]);
  });

  afterAll(async () => {
    await controlPlane.run(['delete', 'clusterrolebinding', `${user}-pods`, `cluster-proxy:${user}`]);
    await controlPlane.run(['delete', 'clusterrole', `${user}-pods`]);
    await direct(members[0]!).run(['delete', 'namespace', inm1, '--wait=false']);
  });

  it('a user without clusters/proxy gets a Status naming the right it lacks', async () => {
    const m = members[0]!;
    const r = await reader.run(['get', 'pods', '-n', `${inm1}.clusterspace.${m.name}`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `clusters.cluster.karmada.io "${m.name}" is forbidden: User "${user}" cannot get resource "clusters/proxy" in API group "cluster.karmada.io"`,
    );
    // at the root the control plane's own part answers; each member's refusal is a Warning naming it
    const root = await reader.run(['get', 'pods', '-A']);
    expect(root.code).toBe(0);
    for (const mm of members)
      expect(root.stderr).toContain(
        `Warning: cluster ${mm.name}: clusters.cluster.karmada.io "${mm.name}" is forbidden`,
      );
  });

  it('--as is the same caller: the admin acting as the user is refused the same way', async () => {
    const m = members[0]!;
    const r = await fleet.run(['get', 'pods', '-n', `${inm1}.clusterspace.${m.name}`, '--as', user]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`User "${user}" cannot get resource "clusters/proxy"`);
    // kubectl keeps discovery per server, not per user: the admin's next refresh must not replay the
    // Warnings that the user's partial discovery carried
    expect((await fleet.run(['api-resources', '--as', user])).stderr).toContain('Warning: cluster');
    const admin = await fleet.run(['api-resources']);
    expect([admin.code, admin.stderr]).toEqual([0, '']);
  });

  it('clusters/proxy held through a group only: the control plane lets it pass, the member refuses to impersonate the user', async () => {
    const grouped = 'karmada-grouped';
    const group = 'karmada-proxy-group';
    const m = members[0]!;
    await ok(controlPlane, [
      'create',
      'clusterrolebinding',
      `cluster-proxy:${group}`,
      '--clusterrole=cluster-proxy-admin',
      `--group=${group}`,
    ]);
    try {
      // once unified auth has synced, the impersonator may act as the group, not as its user
      await impersonatable(m, 'groups', group);
      const r = await fleetAs(grouped).run(['get', 'configmaps', '-n', `${inm1}.clusterspace.${m.name}`]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        `User "system:serviceaccount:karmada-cluster:karmada-impersonator" cannot impersonate resource "users"`,
      );
    } finally {
      await controlPlane.run(['delete', 'clusterrolebinding', `cluster-proxy:${group}`]);
    }
  });

  it('with clusters/proxy, the member decides with its own RBAC for the impersonated user', async () => {
    const [m, other] = members as [ClusterInfo, ClusterInfo];
    await ok(controlPlane, [
      'create',
      'clusterrolebinding',
      `cluster-proxy:${user}`,
      '--clusterrole=cluster-proxy-admin',
      `--user=${user}`,
    ]);
    await ok(direct(m), [
      'create',
      'rolebinding',
      'reader',
      '--clusterrole=view',
      `--user=${user}`,
      '-n',
      inm1,
    ]);
    // Karmada's unified auth lets the member's impersonator act as the user once it has synced
    for (const mm of [m, other]) await impersonatable(mm, 'users', user);
    expect(
      (await ok(reader, ['get', 'configmaps', '-n', `${inm1}.clusterspace.${m.name}`, '-o', 'name'])).trim(),
      // a namespace by fleet name names the cluster: its objects answer under their plain names (docs/names.md)
    ).toBe('configmap/kube-root-ca.crt');
    const refused = await reader.run(['get', 'configmaps', '-n', `${inm1}.clusterspace.${other.name}`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`User "${user}" cannot list resource "configmaps"`);
  });
});

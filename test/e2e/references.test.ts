/**
 * References lead back to the right cluster at the root URL (issue 15), with real kubectl 1.35 on Node
 * and in workerd: a member's node lists its pods, events name their objects by fleet name, a bound PV/PVC
 * pair names each other, endpoints name their pods, a deployment finds its ReplicaSet.
 */
import { describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const M = 'member2';
const fleet = (name: string) => `${name}.clusterspace.${M}`;

/** a bound pair and endpoints that name a pod and its node: what the PV binder and the endpoints controller write */
function seed(sims: ServedSimFleet): void {
  const sim = sims.members.get(M)!;
  sim.create(
    { group: '', version: 'v1', resource: 'persistentvolumes' },
    {
      metadata: { name: 'pv-data' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'standard',
        hostPath: { path: '/data' },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', apiVersion: 'v1' },
      },
      status: { phase: 'Bound' },
    },
  );
  sim.create(
    { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
    {
      metadata: { name: 'data', namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        storageClassName: 'standard',
        volumeName: 'pv-data',
      },
      status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
    },
  );
  const pod = sim.list(PODS).find((p) => (p as any).spec?.nodeName === `${M}-worker`)!;
  sim.create(
    { group: '', version: 'v1', resource: 'endpoints' },
    {
      metadata: { name: 'refs', namespace: pod.metadata.namespace },
      subsets: [
        {
          addresses: [
            {
              ip: '10.244.1.9',
              nodeName: `${M}-worker`,
              targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name },
            },
          ],
          ports: [{ port: 80, protocol: 'TCP' }],
        },
      ],
    },
  );
}

describe.each(RUNTIMES)('references at the root on %s', (runtime) => {
  const f = useSimFleet(runtime, { prepare: seed });
  const onWorker = () =>
    f
      .member(M)
      .list(PODS)
      .filter(
        (p: any) => p.spec?.nodeName === `${M}-worker` && !['Succeeded', 'Failed'].includes(p.status?.phase),
      )
      .map((p) => `${p.metadata.namespace}/${fleet(p.metadata.name!)}`)
      .sort();

  it('kubectl describe node <fleet node> lists the pods that member runs there', async () => {
    const want = onWorker();
    expect(want.length).toBeGreaterThan(0);
    const r = await f.kubectl().run(['describe', 'node', fleet(`${M}-worker`)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Non-terminated Pods:          (${want.length} in total)`);
    for (const p of want) expect(r.stdout).toMatch(new RegExp(`\\n\\s+${p.replace('/', '\\s+')}\\s`));
  });

  it('kubectl get pods -A --field-selector spec.nodeName=<fleet node> finds them, showing the fleet node', async () => {
    const k = f.kubectl();
    const r = await k.run([
      'get',
      'pods',
      '-A',
      '--field-selector',
      `spec.nodeName=${fleet(`${M}-worker`)},status.phase!=Succeeded,status.phase!=Failed`,
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name,NODE:.spec.nodeName',
      '--no-headers',
    ]);
    expect(r.stderr).toBe('');
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    expect(rows.map(([ns, n]) => `${ns}/${n}`).sort()).toEqual(onWorker());
    expect(new Set(rows.map((x) => x[2]))).toEqual(new Set([fleet(`${M}-worker`)]));
    // the wide Table's NODE column too; a plain node name at the root means the control plane's (none)
    const wide = await k.run(['get', 'pods', '-A', '-o', 'wide', '-l', `fleet.karmada.io/cluster=${M}`]);
    expect(wide.stdout).toContain(fleet(`${M}-worker`));
    const plain = await k.run(['get', 'pods', '-A', '--field-selector', `spec.nodeName=${M}-worker`]);
    expect(plain.stderr.trim()).toBe('No resources found');
  });

  it('kubectl get events shows members’ objects by fleet name in the OBJECT column', async () => {
    const r = await f.kubectl().run(['get', 'events', '-A', '-l', `fleet.karmada.io/cluster=${M}`]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/\bOBJECT\b/);
    const at = lines[0]!.indexOf('OBJECT');
    const objects = lines.slice(1).map((l) => l.slice(at).split(/\s+/)[0]!);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) expect(o).toMatch(new RegExp(`^[a-z]+/.+\\.clusterspace\\.${M}$`));
    // and each one is found at the root: following it reaches that cluster's object
    const [kind, name] = objects.find((o) => o.startsWith('pod/'))!.split('/');
    const ns = lines.find((l) => l.includes(`${kind}/${name}`))!.split(/\s+/)[0]!;
    const got = await f.kubectl().run(['get', kind!, name!, '-n', ns, '-o', 'name']);
    expect(got.stdout.trim()).toBe(`pod/${name}`);
  });

  it('kubectl describe pvc / pv on a bound pair name each other by fleet name', async () => {
    const pvc = await f.kubectl().run(['describe', 'pvc', fleet('data'), '-n', 'default']);
    expect(pvc.stderr).toBe('');
    expect(pvc.stdout).toMatch(new RegExp(`\\nVolume:\\s+${fleet('pv-data')}\\n`));
    const pv = await f.kubectl().run(['describe', 'pv', fleet('pv-data')]);
    expect(pv.stderr).toBe('');
    expect(pv.stdout).toMatch(new RegExp(`\\nClaim:\\s+default/${fleet('data')}\\n`));
    // (the simulator prints PVs and PVCs with the default Name/Created At columns, so their Claim and
    // Volume cells are covered by src/merge/objects/references.test.ts)
  });

  it('kubectl get endpoints: the addresses name their pods and nodes by fleet name', async () => {
    const ns = (
      f
        .member(M)
        .list({ group: '', version: 'v1', resource: 'endpoints' })
        .find((e) => e.metadata.name === 'refs') as any
    ).metadata.namespace as string;
    const r = await f.kubectl().run(['get', 'endpoints', '-n', ns]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`\\n${fleet('refs').replace(/\./g, '\\.')}\\s+${M}\\s+10\\.244\\.1\\.9:80\\s`),
    );
    const j = await f.kubectl().run(['get', 'endpoints', fleet('refs'), '-n', ns, '-o', 'json']);
    const addr = JSON.parse(j.stdout).subsets[0].addresses[0];
    expect(addr.nodeName).toBe(fleet(`${M}-worker`));
    expect(addr.targetRef.name).toMatch(new RegExp(`\\.clusterspace\\.${M}$`));
    const pod = await f.kubectl().run(['get', 'pod', addr.targetRef.name, '-n', ns, '-o', 'name']);
    expect(pod.stdout.trim()).toBe(`pod/${addr.targetRef.name}`);
  });

  it('kubectl describe deploy finds its ReplicaSet (NewReplicaSet)', async () => {
    const deps = await f
      .kubectl()
      .run([
        'get',
        'deploy',
        '-A',
        '-l',
        `fleet.karmada.io/cluster=${M}`,
        '-o',
        'custom-columns=NS:.metadata.namespace,N:.metadata.name',
        '--no-headers',
      ]);
    const [ns, name] = deps.stdout.trim().split('\n')[0]!.trim().split(/\s+/);
    const r = await f.kubectl().run(['describe', 'deploy', name!, '-n', ns!]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      new RegExp(`\\nNewReplicaSet:\\s+[a-z0-9-]+\\.clusterspace\\.${M} \\(\\d+/\\d+ replicas created\\)`),
    );
  });

  it('a create whose nodeName names another cluster’s node is a 400; its own is written plainly', async () => {
    const k = f.kubectl();
    const manifest = (node: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: fleet('pinned'), namespace: 'default' },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'nginx' }] },
      });
    const bad = await k.run(['create', '-f', '-'], {
      stdin: manifest('member1-worker.clusterspace.member1'),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.nodeName');
    const ok = await k.run(['create', '-f', '-'], { stdin: manifest(fleet(`${M}-worker`)) });
    expect(ok.stderr).toBe('');
    const stored = f.member(M).get(PODS, 'default', 'pinned') as any;
    expect(stored.spec.nodeName).toBe(`${M}-worker`);
  });
});

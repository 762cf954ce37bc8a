/**
 * Client libraries at the Karmada fleet's root (members through Karmada's cluster proxy), in front of real
 * kube-apiservers, as a controller or script pointed at the fleet runs them:
 *
 * - @kubernetes/client-node's informer (makeInformer) over ConfigMaps: synced with the fleet's list, then
 *   creates, updates and deletes made directly in two members each seen exactly once, by fleet name;
 * - Kubernetes' Python client (python3-kubernetes): a list across the fleet, a read and a create by fleet
 *   name, a watch that sees changes made in three members;
 * - leader election with client-go's algorithm over a Lease at the root: one leader, failover when it stops
 *   renewing, the Lease in the control plane only.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientNode } from '../helpers/clientnode.ts';
import { Candidate } from '../helpers/election.ts';
import { startPythonClient } from '../helpers/python.ts';
import { bed, type ClusterInfo, clusterKubectl, ensureNamespace, ok, runningPod, until } from './bed.ts';

const ns = `rc-${randomBytes(3).toString('hex')}`;

describe('clients at the Karmada fleet root, against real members', () => {
  const b = bed();
  const root = b.fleets.karmada.url;
  const tls = { ca: b.fleetCA, cert: b.admin.cert, key: b.admin.key };
  const members = b.members as [ClusterInfo, ClusterInfo, ClusterInfo];
  const everywhere = [b.karmadaApiserver, ...members];

  beforeAll(async () => {
    await ensureNamespace(everywhere, ns);
  });
  afterAll(async () => {
    for (const c of everywhere) await clusterKubectl(c).run(['delete', 'namespace', ns, '--wait=false']);
  });

  it('client-node informer: synced, then each change made directly in two members seen exactly once', async () => {
    const [m1, m2] = members;
    const { kc, core } = clientNode(root, tls);
    for (const m of [m1, m2]) await ok(clusterKubectl(m), ['create', 'configmap', 'seed', '-n', ns]);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const events: string[] = [];
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (o) => {
        const name = o.metadata?.name ?? '';
        // the members' own kube-root-ca.crt come and go with the namespace: only the test's objects count
        if (!name.startsWith('kube-root-ca.crt')) events.push(`${verb} ${name} ${o.data?.v ?? ''}`.trim());
      });
    let stopped = false;
    const errors: unknown[] = [];
    informer.on('error', (e) => {
      errors.push(e);
      if (!stopped) setTimeout(() => void (stopped || informer.start().catch(() => {})), 500);
    });
    await informer.start();
    try {
      const names = () => informer.list().map((o) => o.metadata!.name!);
      // synced: the seeds, and every member's own root CA ConfigMap by its fleet name
      const want0 = [
        `seed.clusterspace.${m1.name}`,
        `seed.clusterspace.${m2.name}`,
        ...members.map((m) => `kube-root-ca.crt.clusterspace.${m.name}`),
      ];
      await until('the informer synced', async () =>
        want0.every((n) => names().includes(n)) ? true : undefined,
      );
      expect(events.sort()).toEqual([`add seed.clusterspace.${m1.name}`, `add seed.clusterspace.${m2.name}`]);
      events.length = 0;

      const k1 = clusterKubectl(m1);
      const k2 = clusterKubectl(m2);
      await ok(k1, ['create', 'configmap', 'a', '-n', ns, '--from-literal=v=1']);
      await ok(k2, ['create', 'configmap', 'b', '-n', ns, '--from-literal=v=1']);
      await ok(k1, ['patch', 'configmap', 'a', '-n', ns, '-p', '{"data":{"v":"2"}}']);
      await ok(k2, ['delete', 'configmap', 'b', '-n', ns]);
      await ok(k1, ['delete', 'configmap', 'seed', '-n', ns]);
      const want = [
        `add a.clusterspace.${m1.name} 1`,
        `add b.clusterspace.${m2.name} 1`,
        `update a.clusterspace.${m1.name} 2`,
        `delete b.clusterspace.${m2.name} 1`,
        `delete seed.clusterspace.${m1.name}`,
      ].sort();
      await until('the five changes', async () => (events.length >= want.length ? true : undefined), 60_000);
      // nothing more arrives late (a repeat would be a duplicate event)
      await new Promise((r) => setTimeout(r, 3_000));
      expect(events.sort()).toEqual(want);
      const cache = new Map(informer.list().map((o) => [o.metadata!.name!, o.data?.v]));
      expect(cache.get(`a.clusterspace.${m1.name}`)).toBe('2');
      expect(cache.has(`b.clusterspace.${m2.name}`)).toBe(false);
      expect(cache.has(`seed.clusterspace.${m1.name}`)).toBe(false);
      expect(cache.has(`seed.clusterspace.${m2.name}`)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      stopped = true;
      await informer.stop();
    }
  }, 180_000);

  it('the Python client: lists across the fleet, reads and creates by fleet name, watches three members', async () => {
    const m2 = members[1];
    // a pod in member2 for the script to read back by its fleet name
    await ok(clusterKubectl(m2), ['create', 'deployment', 'py', '--image=nginx', '-n', ns]);
    const pod = await runningPod(clusterKubectl(m2), ns, 'a Running pod in member2');
    const dir = mkdtempSync(join(tmpdir(), 'real-py-'));
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const made = `made.clusterspace.${members[2].name}`;
    const py = startPythonClient([root, ns, made], {
      ...process.env,
      FLEET_CA_FILE: file('ca.pem', b.fleetCA),
      FLEET_CERT_FILE: file('cert.pem', b.admin.cert),
      FLEET_KEY_FILE: file('key.pem', b.admin.key),
      FLEET_WATCH_SECONDS: '90',
    });
    await Promise.race([py.watching, py.exited]);
    await Promise.all(
      members.map((m) => ok(clusterKubectl(m), ['create', 'configmap', `from-${m.name}`, '-n', ns])),
    );
    expect(await py.exited, py.err()).toBe(0);
    const r = JSON.parse(py.out()) as {
      pods: string[];
      listRV: string;
      read: { name: string; uid: string; labels: Record<string, string> };
      events: Array<{ type: string; name: string; rv: string }>;
      created: { name: string; uid: string; rv: string };
    };
    expect(r.pods.filter((x) => x.startsWith(`${ns}/`))).toEqual([`${ns}/${pod}.clusterspace.${m2.name}`]);
    expect(r.listRV).toMatch(/^[1-9][0-9]*$/);
    // read back by its fleet name: the member's pod itself
    expect(r.read.name).toBe(`${pod}.clusterspace.${m2.name}`);
    const real2 = JSON.parse(await ok(clusterKubectl(m2), ['get', 'pod', pod, '-n', ns, '-o', 'json']));
    expect(r.read.uid).toBe(real2.metadata.uid);
    expect(r.read.labels['fleet.karmada.io/cluster']).toBe(m2.name);
    expect(new Set(r.events.map((e) => e.name))).toEqual(
      new Set(members.map((m) => `from-${m.name}.clusterspace.${m.name}`)),
    );
    expect(r.events.every((e) => e.type === 'ADDED' && /^[1-9][0-9]*$/.test(e.rv))).toBe(true);
    // the create answered under the name it was asked by, and landed plain in member3 only
    expect(r.created.name).toBe(made);
    const real = JSON.parse(
      await ok(clusterKubectl(members[2]), ['get', 'configmap', 'made', '-n', ns, '-o', 'json']),
    );
    expect(real.metadata.uid).toBe(r.created.uid);
    expect(real.data).toEqual({ by: 'python' });
    for (const c of [b.karmadaApiserver, ...members.slice(0, 2)]) {
      const none = await clusterKubectl(c).run(['get', 'configmap', 'made', '-n', ns]);
      expect(none.stderr).toContain('NotFound');
    }
  }, 180_000);

  it('leader election over a Lease at the root: one leader, failover, the Lease in the control plane', async () => {
    const { kc } = clientNode(root, tls);
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const name = 'lock';
    // a 3 s lease, tried every 300 ms: each try is a read and a write through the fleet to a real apiserver
    const cands = ['a', 'b', 'c'].map((id) => new Candidate(id, api, ns, name, 3, 300));
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, cands.filter((c) => c.leading).length);
    }, 20);
    const lease = async (c: ClusterInfo) => {
      const r = await clusterKubectl(c).run(['get', 'lease', name, '-n', ns, '-o', 'json']);
      return r.code === 0 ? JSON.parse(r.stdout) : r.stderr.includes('NotFound') ? null : undefined;
    };
    try {
      for (const c of cands) c.start();
      await until('a leader', async () => (cands.some((c) => c.leading) ? true : undefined), 30_000);
      await new Promise((r) => setTimeout(r, 2_000));
      const first = cands.filter((c) => c.leading);
      expect(first).toHaveLength(1);
      expect((await lease(b.karmadaApiserver)).spec.holderIdentity).toBe(first[0]!.id);
      for (const m of members) expect(await lease(m)).toBeNull();

      first[0]!.stop();
      await until(
        'a new leader',
        async () => (cands.some((c) => c !== first[0] && c.leading) ? true : undefined),
        30_000,
      );
      await new Promise((r) => setTimeout(r, 1_500));
      const second = cands.filter((c) => c.leading);
      expect(second).toHaveLength(1);
      expect(second[0]!.id).not.toBe(first[0]!.id);
      const after = await lease(b.karmadaApiserver);
      expect(after.spec.holderIdentity).toBe(second[0]!.id);
      expect(after.spec.leaseTransitions).toBe(1);
      expect(most).toBe(1);
    } finally {
      clearInterval(sampler);
      for (const c of cands) c.stop();
    }
  }, 120_000);
});

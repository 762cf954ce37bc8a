/**
 * Real kubectl 1.35 against one cluster of a simulated Karmada fleet through the fleet-apiserver, with
 * `/clusterspaces/<cluster>` as the kubeconfig server URL: everything must behave as against that single
 * cluster. Runs on Node and in workerd; members are reached through the Karmada cluster proxy (the
 * default membership) and, for one member, statically.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

describe.each(RUNTIMES)('kubectl through /clusterspaces/<cluster> on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;

  beforeAll(() => {
    k = f.kubectl('/clusterspaces/member1');
  });

  it('get pods -A lists exactly member1’s pods', async () => {
    const r = await k.run([
      'get',
      'pods',
      '-A',
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name',
      '--no-headers',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).join('/'))
      .sort();
    const want = f.sims.members
      .get('member1')!
      .list(PODS)
      .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
      .sort();
    expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });

  it('get pods -A prints the server-side Table', async () => {
    const r = await k.run(['get', 'pods', '-A']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    expect(r.stdout).toContain('Running');
  });

  it('get pod X -o yaml returns that pod', async () => {
    const pod = f.sims.members.get('member1')!.list(PODS)[0]!;
    const r = await k.run(['get', 'pod', pod.metadata.name!, '-n', pod.metadata.namespace!, '-o', 'yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`name: ${pod.metadata.name}`);
    expect(r.stdout).toContain(`uid: ${pod.metadata.uid}`);
  });

  it('a missing object gives kubectl the cluster’s NotFound', async () => {
    const r = await k.run(['get', 'pod', 'no-such-pod', '-n', 'default']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error from server (NotFound): pods "no-such-pod" not found');
  });

  it('apply -f creates in member1 only, apply again patches, delete removes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-apply-'));
    const file = join(dir, 'cm.yaml');
    const name = `applied-${runtime}`;
    const manifest = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\ndata:\n  key: "${v}"\n`;
    writeFileSync(file, manifest('one'));
    let r = await k.run(['apply', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`configmap/${name} created`);
    expect(f.sims.members.get('member1')!.get(CONFIGMAPS, 'default', name)?.data).toEqual({ key: 'one' });
    expect(f.sims.members.get('member2')!.get(CONFIGMAPS, 'default', name)).toBeUndefined();

    writeFileSync(file, manifest('two'));
    r = await k.run(['apply', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`configmap/${name} configured`);
    expect(f.sims.members.get('member1')!.get(CONFIGMAPS, 'default', name)?.data).toEqual({ key: 'two' });

    r = await k.run(['delete', 'configmap', name, '-n', 'default']);
    expect(r.stdout.trim()).toBe(`configmap "${name}" deleted from default namespace`);
    expect(f.sims.members.get('member1')!.get(CONFIGMAPS, 'default', name)).toBeUndefined();
  });

  it('get --raw /version answers with the member’s version', async () => {
    const r = await k.run(['get', '--raw', '/version']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it('get pods -w shows a pod another client creates', async () => {
    const w = k.spawn(['get', 'pods', '-n', 'default', '-w']);
    try {
      // an empty namespace prints nothing until the first event: wait for the watch to reach the member
      const m1 = f.sims.members.get('member1')!;
      await until(() => m1.openWatches() > 0);
      const name = `watched-${runtime}`;
      const other = new Kubectl(`${f.url}/clusterspaces/member1`);
      const r = await other.run(['run', name, '--image=nginx:1.27', '-n', 'default']);
      expect(r.stdout.trim()).toBe(`pod/${name} created`);
      await w.waitFor(new RegExp(`${name}\\s+\\d/\\d\\s+\\w+`));
    } finally {
      w.stop();
    }
  });

  it('the karmada clusterspace is the control plane itself', async () => {
    const kk = new Kubectl(`${f.url}/clusterspaces/karmada`);
    const r = await kk.run(['get', 'clusters.cluster.karmada.io', '-o', 'name']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n').sort()).toEqual([
      'cluster.cluster.karmada.io/member1',
      'cluster.cluster.karmada.io/member2',
      'cluster.cluster.karmada.io/member3',
    ]);
  });

  it('a down member answers a Status within its timeout, kubectl prints it', async () => {
    f.sims.members.get('member3')!.faults.down = true;
    try {
      const k3 = new Kubectl(`${f.url}/clusterspaces/member3`);
      const t0 = Date.now();
      const r = await k3.run(['get', 'pods', '-n', 'default', '--request-timeout=20s']);
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /Error from server \((ServiceUnavailable|InternalError)\)|unavailable|refused/i,
      );
    } finally {
      f.sims.members.get('member3')!.faults.down = false;
    }
  });
});

async function until(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Namespaces by fleet name with real kubectl 1.35, on Node and in workerd (issue 12.7): `kubectl get ns`
 * lists member2's `shop` as `shop.clusterspace.member2`, and that name handed back with `-n` means
 * member2's `shop` for every verb: get, list, describe, logs, exec, watch, create (JSON and protobuf bodies),
 * apply, delete. The namespace names the cluster, so objects answer by their plain names, or by a fleet
 * name when one was given (docs/names.md); nothing reaches another cluster.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = 'shop.clusterspace.member2';

const lines = (s: string) =>
  s
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .sort();

describe.each(RUNTIMES)('namespaces by fleet name on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;
  let m1: SimCluster;
  let m2: SimCluster;
  let podName: string;

  beforeAll(() => {
    k = f.kubectl();
    m1 = f.member('member1');
    m2 = f.member('member2');
    const pod = m2
      .list(PODS)
      .find(
        (p) =>
          p.metadata.namespace === 'shop' &&
          (p as { status?: { phase?: string } }).status?.phase === 'Running',
      );
    if (!pod) throw new Error("the demo's member2 has no running pod in shop");
    podName = pod.metadata.name!;
  });

  it('kubectl get ns offers the name, and get pods -n <it> lists member2’s shop alone', async () => {
    const ns = await k.run(['get', 'ns', '-o', 'name']);
    expect(lines(ns.stdout)).toContain(`namespace/${NS}`);
    const r = await k.run(['get', 'pods', '-n', NS, '-o', 'name']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const want = m2
      .list(PODS)
      .filter((p) => p.metadata.namespace === 'shop')
      .map((p) => `pod/${p.metadata.name}`);
    expect(want.length).toBeGreaterThan(0);
    expect(lines(r.stdout)).toEqual(want.sort());
    // the default Table output too, and the objects say the namespace kubectl asked for
    const table = await k.run(['get', 'pods', '-n', NS]);
    expect([table.code, table.stderr]).toEqual([0, '']);
    expect(table.stdout).toMatch(new RegExp(`^${podName}\\s`, 'm'));
    expect(table.stdout).not.toContain('.clusterspace.');
    const json = JSON.parse((await k.run(['get', 'pods', '-n', NS, '-o', 'json'])).stdout) as {
      items: Array<{ metadata: { namespace: string } }>;
    };
    expect(new Set(json.items.map((i) => i.metadata.namespace))).toEqual(new Set([NS]));
  });

  it('get and describe a pod there by its plain name and by its fleet name: each as given', async () => {
    for (const name of [podName, `${podName}.clusterspace.member2`]) {
      const r = await k.run([
        'get',
        'pod',
        name,
        '-n',
        NS,
        '-o',
        'jsonpath={.metadata.name} {.metadata.namespace}',
      ]);
      expect([r.code, r.stderr, r.stdout]).toEqual([0, '', `${name} ${NS}`]);
    }
    const d = await k.run(['describe', 'pod', podName, '-n', NS]);
    expect(d.stderr).toBe('');
    expect(d.stdout).toMatch(new RegExp(`^Name:\\s+${podName}$`, 'm'));
    expect(d.stdout).toMatch(/^Namespace:\s+shop\.clusterspace\.member2$/m);
  });

  it('logs of a pod there', async () => {
    const line = `hello from ${runtime} by fleet namespace`;
    const container = (m2.list(PODS).find((p) => p.metadata.name === podName) as any).spec.containers[0].name;
    m2.appendLog('shop', podName, container, line);
    const r = await k.run(['logs', podName, '-n', NS, '-c', container, '--tail=1']);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, '', `${line}\n`]);
  });

  it('exec in a pod there', async () => {
    const r = await k.run(['-n', NS, 'exec', podName, '--', 'echo', `hi from ${runtime}`]);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, '', `hi from ${runtime}\n`]);
  });

  it('watches there: member2’s changes come, member1’s do not, in the namespace kubectl asked for', async () => {
    const w = k.spawn(['get', 'configmaps', '-n', NS, '--watch', '-o', 'name']);
    const j = k.spawn(['get', 'configmaps', '-n', NS, '--watch-only', '-o', 'json']);
    try {
      await w.waitFor(/configmap\//);
      // --watch-only prints nothing until an event: give its watch a moment to be open by writing until seen
      m1.create(CM, { metadata: { name: `w1-${runtime}`, namespace: 'shop' }, data: {} } as KubeObject);
      m2.create(CM, { metadata: { name: `w2-${runtime}`, namespace: 'shop' }, data: {} } as KubeObject);
      await w.waitFor(new RegExp(`configmap/w2-${runtime}\\n`));
      expect(w.output()).not.toContain(`w1-${runtime}`);
      for (let i = 0; !/"name": "w3-/.test(j.output()) && i < 50; i++) {
        m2.create(CM, {
          metadata: { name: `w3-${runtime}-${i}`, namespace: 'shop' },
          data: {},
        } as KubeObject);
        await j.waitFor(/"name": "w3-/, 500).catch(() => {});
      }
      expect(j.output()).toMatch(/"namespace": "shop\.clusterspace\.member2"/);
      expect(j.output()).not.toMatch(/"namespace": "shop"/);
    } finally {
      w.stop();
      j.stop();
    }
  });

  it('create (protobuf and JSON bodies), apply and delete there reach member2 only', async () => {
    const typed = `nbf-typed-${runtime}`;
    const made = await k.run(['create', 'configmap', typed, '-n', NS, '--from-literal', 'a=b']);
    expect([made.code, made.stderr]).toEqual([0, '']);
    expect(made.stdout).toContain(`configmap/${typed} created`);
    expect(m2.get(CM, 'shop', typed)?.data).toEqual({ a: 'b' });
    expect(m1.get(CM, 'shop', typed)).toBeUndefined();

    const file = `nbf-file-${runtime}`;
    const yaml = (v: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${file}\n  namespace: ${NS}\ndata:\n  v: "${v}"\n`;
    const created = await k.run(['create', '-f', '-'], { stdin: yaml('1') });
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(m2.get(CM, 'shop', file)?.data).toEqual({ v: '1' });
    const applied = await k.run(['apply', '-f', '-'], { stdin: yaml('2') });
    expect([applied.code, applied.stderr]).toEqual([0, expect.stringContaining('')]);
    expect(m2.get(CM, 'shop', file)?.data).toEqual({ v: '2' });

    for (const name of [typed, file]) {
      const del = await k.run(['delete', 'configmap', name, '-n', NS]);
      expect([del.code, del.stderr]).toEqual([0, '']);
      expect(m2.get(CM, 'shop', name)).toBeUndefined();
    }
    for (const sim of [m1, f.member('member3')])
      expect(sim.list(CM).some((c) => c.metadata.name?.startsWith('nbf-'))).toBe(false);
  });

  it('a fleet name against the clusterspace the URL names is a 400; an unknown cluster a 404', async () => {
    const against = await fetch(`${f.url}/api/v1/namespaces/${NS}/clusterspaces/member1/configmaps`);
    expect(against.status).toBe(400);
    expect(((await against.json()) as { message: string }).message).toContain('contradicts the clusterspace');
    const r = await k.run(['get', 'pods', '-n', 'shop.clusterspace.member9']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('namespaces "shop.clusterspace.member9" not found');
  });
});

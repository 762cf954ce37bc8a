/**
 * Names that stay valid (issue 13.3) with real kubectl 1.35, on Node and in workerd: a ConfigMap whose
 * name has 253 characters, created in member1 through /clusterspaces/member1, is shown at the root as
 * `<head>-<digest>.clusterspace-h.member1` (253 characters at most, a DNS-1123 subdomain) and kubectl gets,
 * describes, labels, replaces, watches and deletes it by that name; a fleet that never met the name finds
 * it by asking member1; a create by a shortened name is a clear 400. A namespace with a 63-character name
 * keeps the usual `<ns>.clusterspace.member1` (not shortened: 84 characters) and kubectl uses it for
 * get, describe, `-n` and delete alike.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { forgetShortened } from '../../src/merge/names/memo.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NSR = { group: '', version: 'v1', resource: 'namespaces' };
const EVENTS = { group: '', version: 'v1', resource: 'events' };
const M = 'member1';

/** the rule, written again from its description (the oracle): SHA-256's first 64 bits in base 36 */
function shortened(name: string, cluster: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`)
    .toString(36)
    .padStart(13, '0');
  const room = 253 - '.clusterspace-h.'.length - cluster.length - 13 - 1;
  const head = name.slice(0, room).replace(/[-.]+$/, '');
  return `${head}-${digest}.clusterspace-h.${cluster}`;
}

describe.each(RUNTIMES)('long names on %s', (runtime) => {
  const f = useSimFleet(runtime, { extra: { fresh: (s) => s.karmadaConfig() } });
  let root: Kubectl;
  let member: Kubectl;
  let m1: SimCluster;
  // 253 characters, dots and dashes inside, as kube allows
  const long = `app.config-${'a1b2c3d4e5'.repeat(24)}-${runtime}`.slice(0, 253);
  const short = shortened(long, M);
  const ns63 = `ns-${'x'.repeat(57)}-${runtime === 'node' ? 'nd' : 'wd'}`;
  const nsFleet = `${ns63}.clusterspace.${M}`;
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  beforeAll(async () => {
    root = f.kubectl();
    member = f.kubectl(`/clusterspaces/${M}`);
    m1 = f.member(M);
    expect(long.length).toBe(253);
    expect(ns63.length).toBe(63);
    const cm = await member.run(['create', 'configmap', long, '-n', 'default', '--from-literal=k=v']);
    expect([cm.code, cm.stderr]).toEqual([0, '']);
    const ns = await member.run(['create', 'namespace', ns63]);
    expect([ns.code, ns.stderr]).toEqual([0, '']);
  });

  it('the fleet shows the ConfigMap by a name of at most 253 characters, a DNS-1123 subdomain', async () => {
    expect(short.length).toBeLessThanOrEqual(253);
    expect(short).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    const names = await root.run(['get', 'configmaps', '-n', 'default', '-o', 'name']);
    expect([names.code, names.stderr]).toEqual([0, '']);
    expect(names.stdout.split('\n')).toContain(`configmap/${short}`);
    expect(names.stdout).not.toContain(long);
    // the Table: its name cell, and the CLUSTER column
    const table = await root.run(['get', 'configmaps', '-A']);
    expect(table.stdout).toMatch(
      new RegExp(`^default\\s+${short.replaceAll('.', '\\.')}\\s+${M}\\s+1\\s`, 'm'),
    );
  });

  it('get, get -o yaml, describe and a field selector by that name', async () => {
    const get = await root.run(['get', 'configmap', short, '-n', 'default']);
    expect([get.code, get.stderr]).toEqual([0, '']);
    expect(get.stdout).toContain(short);
    const yaml = await root.run(['get', 'configmap', short, '-n', 'default', '-o', 'yaml']);
    expect(yaml.stdout).toMatch(new RegExp(`^  name: ${short.replaceAll('.', '\\.')}$`, 'm'));
    expect(yaml.stdout).toMatch(/^ {2}k: v$/m);
    // an event about it, as a controller records it (the long name, in member1)
    m1.create(EVENTS, {
      metadata: { name: `long-name-event-${runtime}`, namespace: 'default' },
      involvedObject: {
        kind: 'ConfigMap',
        namespace: 'default',
        name: long,
        apiVersion: 'v1',
        uid: m1.get(CM, 'default', long)!.metadata.uid,
      },
      reason: 'Checked',
      message: 'seen by the e2e test',
      type: 'Normal',
      count: 1,
    } as unknown as KubeObject);
    const d = await root.run(['describe', 'configmap', short, '-n', 'default']);
    expect([d.code, d.stderr]).toEqual([0, '']);
    expect(d.stdout).toMatch(new RegExp(`^Name:\\s+${short.replaceAll('.', '\\.')}$`, 'm'));
    expect(d.stdout).toMatch(/Checked\s+.*seen by the e2e test/);
    const sel = await root.run([
      'get',
      'configmaps',
      '-A',
      '--field-selector',
      `metadata.name=${short}`,
      '-o',
      'name',
    ]);
    expect([sel.code, sel.stderr, sel.stdout]).toEqual([0, '', `configmap/${short}\n`]);
    // events name it the same way, and select by it
    const ev = await root.run([
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `involvedObject.name=${short}`,
      '-o',
      'jsonpath={.items[*].involvedObject.name}',
    ]);
    expect([ev.code, ev.stderr, ev.stdout]).toEqual([0, '', short]);
  });

  it('a fleet that never met the name finds it by asking the cluster', async () => {
    // on Node every fleet of this test shares this process's memo: forget it, as another replica would not know
    forgetShortened();
    const k = new Kubectl(f.extra('fresh').url);
    dirs.push(k.dir);
    const before = m1.requests.length;
    const r = await k.run([
      'get',
      'configmap',
      short,
      '-n',
      'default',
      '-o',
      'jsonpath={.metadata.name} {.data.k}',
    ]);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, '', `${short} v`]);
    // it listed member1's ConfigMaps (metadata only, a page at a time), then got the one by its own name
    const asked = m1.requests.slice(before).map((q) => {
      const u = new URL(q.url, 'https://member1.local');
      return `${q.method} ${decodeURIComponent(u.pathname + u.search)}`;
    });
    expect(asked).toContainEqual(
      expect.stringMatching(/^GET \/api\/v1\/namespaces\/default\/configmaps\?limit=500$/),
    );
    expect(asked).toContain(`GET /api/v1/namespaces/default/configmaps/${long}`);
    // a name that only looks like one: no such object
    const wrong = short.replace(/-[0-9a-z]{13}\./, '-0000000000000.');
    const nf = await k.run(['get', 'configmap', wrong, '-n', 'default']);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain(`configmaps "${wrong}" not found`);
  });

  it('writes by that name: label (patch), replace (update), and a create by it is a clear 400', async () => {
    const label = await root.run(['label', 'configmap', short, '-n', 'default', 'checked=yes']);
    expect([label.code, label.stderr, label.stdout]).toEqual([0, '', `configmap/${short} labeled\n`]);
    expect(m1.get(CM, 'default', long)?.metadata.labels?.checked).toBe('yes');
    const yaml = (await root.run(['get', 'configmap', short, '-n', 'default', '-o', 'yaml'])).stdout;
    const replaced = await root.run(['replace', '-f', '-'], { stdin: yaml.replace(/^ {2}k: v$/m, '  k: w') });
    expect([replaced.code, replaced.stderr]).toEqual([0, '']);
    expect((m1.get(CM, 'default', long) as { data?: Record<string, string> }).data?.k).toBe('w');
    // client-side apply: its last-applied annotation carries the shortened name, and goes to member1 plain
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: short, namespace: 'default' },
      data: { k: 'w' },
    });
    const applied = await root.run(['apply', '-f', '-'], { stdin: manifest });
    expect([applied.code, applied.stdout]).toEqual([0, `configmap/${short} configured\n`]);
    const stored = m1.get(CM, 'default', long)!.metadata.annotations?.[
      'kubectl.kubernetes.io/last-applied-configuration'
    ];
    expect(JSON.parse(stored!).metadata.name).toBe(long);
    const created = await root.run(['create', '-f', '-'], {
      stdin: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: short.replace(/-[0-9a-z]{13}\./, '-zzzzzzzzzzzzz.'), namespace: 'default' },
      }),
    });
    expect(created.code).toBe(1);
    expect(created.stderr).toContain('is a shortened fleet name');
    expect(created.stderr).toContain('a create must give the name the object gets');
  });

  it('a watch by that name sees its changes', async () => {
    const w = root.spawn([
      'get',
      'configmap',
      short,
      '-n',
      'default',
      '--watch',
      '-o',
      'jsonpath={.data.k}{"\\n"}',
    ]);
    try {
      await w.waitFor(/^w$/m);
      // the watch opens after the first answer is printed: change the object until the watch shows a change
      for (let i = 0; !/^watched-/m.test(w.output()) && i < 50; i++) {
        m1.update(CM, {
          ...(m1.get(CM, 'default', long) as KubeObject),
          data: { k: `watched-${i}` },
        } as KubeObject);
        await w.waitFor(/^watched-/m, 500).catch(() => {});
      }
      expect(w.output()).toMatch(/^watched-\d+$/m);
    } finally {
      w.stop();
    }
  });

  it('a pod of 253 characters: wait, logs and exec by its shortened name', async () => {
    const pod = `job-${'0123456789'.repeat(25)}`.slice(0, 253);
    const shortPod = shortened(pod, M);
    // not `kubectl run`: it names the container after the pod, and a container name is at most 63
    // characters (the member refuses it, as kube-apiserver does)
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace: 'default' },
      spec: { containers: [{ name: 'job', image: 'busybox:1.36', args: ['sleep', '3600'] }] },
    };
    const run = await member.run(['create', '-f', '-'], { stdin: JSON.stringify(manifest) });
    expect([run.code, run.stderr]).toEqual([0, '']);
    // kubectl wait lists and watches with metadata.name=<the shortened name>
    const wait = await root.run(
      ['wait', `pod/${shortPod}`, '-n', 'default', '--for=condition=Ready', '--timeout=60s'],
      {
        timeoutMs: 90_000,
      },
    );
    expect([wait.code, wait.stderr, wait.stdout]).toEqual([0, '', `pod/${shortPod} condition met\n`]);
    const container = (m1.get({ group: '', version: 'v1', resource: 'pods' }, 'default', pod) as any).spec
      .containers[0].name as string;
    m1.appendLog('default', pod, container, `hello from ${runtime}`);
    const logs = await root.run(['logs', shortPod, '-n', 'default', '--tail=1']);
    expect([logs.code, logs.stderr, logs.stdout]).toEqual([0, '', `hello from ${runtime}\n`]);
    const exec = await root.run(['exec', shortPod, '-n', 'default', '--', 'echo', `hi from ${runtime}`]);
    expect([exec.code, exec.stderr, exec.stdout]).toEqual([0, '', `hi from ${runtime}\n`]);
    const del = await root.run(['delete', 'pod', shortPod, '-n', 'default', '--wait=false']);
    expect(del.code).toBe(0);
  });

  it('references: a node of 250 characters is shown shortened in its pods, and kubectl follows it', async () => {
    const NODES = { group: '', version: 'v1', resource: 'nodes' };
    const PODS = { group: '', version: 'v1', resource: 'pods' };
    const node = `node-${'n'.repeat(240)}-${runtime === 'node' ? 'a' : 'b'}`;
    const shortNode = shortened(node, M);
    const worker = m1.get(NODES, undefined, `${M}-worker`) as KubeObject & Record<string, unknown>;
    m1.create(NODES, {
      ...worker,
      metadata: { name: node, labels: { 'kubernetes.io/hostname': node } },
    } as KubeObject);
    const podName = `on-long-node-${runtime}`;
    m1.create(PODS, {
      metadata: { name: podName, namespace: 'default' },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox:1.36' }] },
      status: { phase: 'Running' },
    } as unknown as KubeObject);
    const ref = await root.run([
      'get',
      'pod',
      `${podName}.clusterspace.${M}`,
      '-n',
      'default',
      '-o',
      'jsonpath={.spec.nodeName}',
    ]);
    expect([ref.code, ref.stderr, ref.stdout]).toEqual([0, '', shortNode]);
    const onNode = await root.run([
      'get',
      'pods',
      '-A',
      '--field-selector',
      `spec.nodeName=${shortNode}`,
      '-o',
      'name',
    ]);
    expect([onNode.code, onNode.stderr, onNode.stdout]).toEqual([
      0,
      '',
      `pod/${podName}.clusterspace.${M}\n`,
    ]);
    const d = await root.run(['describe', 'node', shortNode]);
    expect([d.code, d.stderr]).toEqual([0, '']);
    expect(d.stdout).toMatch(new RegExp(`^Name:\\s+${shortNode}$`, 'm'));
    expect(d.stdout).toContain(`${podName}.clusterspace.${M}`);
  });

  it('delete by that name removes it from member1', async () => {
    const r = await root.run(['delete', 'configmap', short, '-n', 'default']);
    expect([r.code, r.stderr, r.stdout]).toEqual([
      0,
      '',
      `configmap "${short}" deleted from default namespace\n`,
    ]);
    expect(m1.get(CM, 'default', long)).toBeUndefined();
  });

  it('a namespace of 63 characters keeps its fleet name; get, describe, -n and delete use it', async () => {
    expect(nsFleet.length).toBeLessThanOrEqual(253);
    const names = await root.run(['get', 'namespaces', '-o', 'name']);
    expect(names.stdout.split('\n')).toContain(`namespace/${nsFleet}`);
    const yaml = await root.run(['get', 'namespace', nsFleet, '-o', 'yaml']);
    expect([yaml.code, yaml.stderr]).toEqual([0, '']);
    expect(yaml.stdout).toMatch(new RegExp(`^  name: ${nsFleet.replaceAll('.', '\\.')}$`, 'm'));
    const d = await root.run(['describe', 'namespace', nsFleet]);
    expect([d.code, d.stderr]).toEqual([0, '']);
    expect(d.stdout).toMatch(new RegExp(`^Name:\\s+${nsFleet.replaceAll('.', '\\.')}$`, 'm'));
    const mk = await root.run(['create', 'configmap', 'inside', '-n', nsFleet, '--from-literal=a=b']);
    expect([mk.code, mk.stderr]).toEqual([0, '']);
    expect(m1.get(CM, ns63, 'inside')).toBeDefined();
    const cms = await root.run(['get', 'configmaps', '-n', nsFleet, '-o', 'name']);
    // the namespace names the cluster: its objects answer by their plain names (docs/names.md)
    expect(cms.stdout.split('\n')).toContain('configmap/inside');
    // as a kubeconfig context's namespace too (kubens writes it there): kubectl 1.35 takes it as it is
    const ctx = new Kubectl(f.url);
    dirs.push(ctx.dir);
    const set = await ctx.run(['config', 'set-context', '--current', `--namespace=${nsFleet}`]);
    expect(set.code).toBe(0);
    const inCtx = await ctx.run(['get', 'configmaps', '-o', 'name']);
    expect([inCtx.code, inCtx.stderr, inCtx.stdout]).toEqual([0, '', 'configmap/inside\n']);
    const del = await root.run(['delete', 'namespace', nsFleet, '--wait=false']);
    expect([del.code, del.stderr]).toEqual([0, '']);
    const gone = m1.get(NSR, '', ns63) as { status?: { phase?: string } } | undefined;
    expect(gone === undefined || gone.status?.phase === 'Terminating').toBe(true);
  });
});

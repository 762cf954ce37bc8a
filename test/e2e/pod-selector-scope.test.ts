/**
 * `kubectl exec|logs deploy/<name>.clusterspace.<member>` (and `svc/…`) reach that member's pod, with real
 * kubectl 1.35 on Node and in workerd, when every member runs a Deployment and a Service of the same name
 * and labels in the same namespace. kubectl GETs the workload, lists pods with its selector in the
 * namespace (at the root: every member) and takes the first; the fleet shows a workload's selector with
 * the term `fleet.karmada.io/cluster=<member>` at the root (src/merge/objects/podselector.ts), so that list asks
 * one member. Writes drop the term: `kubectl apply` twice says `unchanged`, `kubectl replace` of what
 * `get` showed stores the selector as it was, and so does a typed client's read-modify-write in protobuf.
 */
import { describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/index.ts';
import { encodeObject } from '../../sim/proto/envelope.ts';
import { until } from '../faults/fleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const K = 'fleet.karmada.io/cluster';
const MEMBERS = ['member1', 'member2', 'member3'];

const manifests = (app: string) =>
  MEMBERS.map(
    (m) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}.clusterspace.${m}
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ${app}
  template:
    metadata:
      labels:
        app: ${app}
    spec:
      containers:
      - name: app
        image: busybox
---
apiVersion: v1
kind: Service
metadata:
  name: ${app}.clusterspace.${m}
  namespace: default
spec:
  selector:
    app: ${app}
  ports:
  - port: 80
`,
  ).join('---\n');

describe.each(RUNTIMES)('a workload by fleet name selects its own member’s pods, on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const app = `pick-${runtime}`;
  /** the member's running pod of the Deployment */
  const podOf = (m: SimCluster) =>
    (m.list(PODS) as Array<Record<string, any>>).find(
      (p) =>
        p.metadata.namespace === 'default' &&
        p.metadata.labels?.app === app &&
        p.status?.phase === 'Running' &&
        !p.metadata.deletionTimestamp,
    )?.metadata.name as string | undefined;

  it('apply twice: unchanged; exec and logs on deploy/ and svc/ land in the named member', async () => {
    const k = f.kubectl();
    const first = await k.run(['apply', '-f', '-'], { stdin: manifests(app) });
    expect([first.code, first.stderr]).toEqual([0, '']);
    const again = await k.run(['apply', '-f', '-'], { stdin: manifests(app) });
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(again.stdout.trim().split('\n')).toEqual(
      MEMBERS.flatMap((m) => [
        `deployment.apps/${app}.clusterspace.${m} unchanged`,
        `service/${app}.clusterspace.${m} unchanged`,
      ]),
    );
    // no member stores the term
    for (const m of MEMBERS)
      expect((f.member(m).get(DEPLOY, 'default', app) as any).spec.selector).toEqual({
        matchLabels: { app },
      });
    await until(
      () => MEMBERS.every((m) => podOf(f.member(m)) !== undefined),
      60_000,
      'a running pod in each',
    );

    for (const m of ['member2', 'member3', 'member1']) {
      const pod = podOf(f.member(m))!;
      for (const target of [`deploy/${app}.clusterspace.${m}`, `svc/${app}.clusterspace.${m}`]) {
        const r = await k.run(['exec', target, '-n', 'default', '--', 'hostname'], { timeoutMs: 60_000 });
        expect([r.code, r.stdout, r.stderr], target).toEqual([0, `${pod}\n`, '']);
      }
      f.member(m).logs.append('default', pod, 'app', `hello from ${m}`, new Date());
      const logs = await k.run(['logs', `deploy/${app}.clusterspace.${m}`, '-n', 'default'], {
        timeoutMs: 60_000,
      });
      expect(logs.code).toBe(0);
      expect(logs.stderr).not.toMatch(/Found \d+ pods/);
      expect(logs.stdout).toContain(`hello from ${m}`);
      for (const other of MEMBERS.filter((o) => o !== m)) expect(logs.stdout).not.toContain(`from ${other}`);
    }
  });

  it('lists and watch events show the term at the root, a scope naming the cluster does not; replace drops it', async () => {
    const k = f.kubectl();
    const path = '/apis/apps/v1/namespaces/default/deployments?limit=500';
    const mine = (d: any) => d.metadata.name.startsWith(`${app}.`);
    const list = JSON.parse((await k.run(['get', '--raw', path])).stdout);
    expect(list.items.filter(mine).map((d: any) => [d.metadata.name, d.spec.selector.matchLabels])).toEqual(
      MEMBERS.map((m) => [`${app}.clusterspace.${m}`, { app, [K]: m }]),
    );
    const watch = await k.run(['get', '--raw', `${path}&watch=1&timeoutSeconds=1`], { timeoutMs: 60_000 });
    const events = watch.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => mine(e.object));
    expect(events.length).toBe(MEMBERS.length);
    for (const e of events) expect(e.object.spec.selector.matchLabels[K]).toBe(e.object.metadata.labels[K]);
    const scoped = await k.run(['get', 'deploy', app, '-n', 'default.clusterspace.member2', '-o', 'json']);
    expect(JSON.parse(scoped.stdout).spec.selector).toEqual({ matchLabels: { app } });

    // what `get` shows at the root, written back whole: stored as it was
    const shown = await k.run([
      'get',
      'deploy',
      `${app}.clusterspace.member2`,
      '-n',
      'default',
      '-o',
      'json',
    ]);
    expect(JSON.parse(shown.stdout).spec.selector.matchLabels[K]).toBe('member2');
    const replaced = await k.run(['replace', '-f', '-'], { stdin: shown.stdout });
    expect([replaced.code, replaced.stderr]).toEqual([0, '']);
    expect((f.member('member2').get(DEPLOY, 'default', app) as any).spec.selector).toEqual({
      matchLabels: { app },
    });
  });

  it('a typed client reads a Deployment and a Service at the root and writes them back in protobuf: stored without the term', async () => {
    const SERVICES = { group: '', version: 'v1', resource: 'services' };
    for (const [path, gvr, change] of [
      [`/apis/apps/v1/namespaces/default/deployments/${app}.clusterspace.member3`, DEPLOY, { replicas: 2 }],
      [
        `/api/v1/namespaces/default/services/${app}.clusterspace.member3`,
        SERVICES,
        { sessionAffinity: 'ClientIP' },
      ],
    ] as const) {
      const got = await fetch(`${f.url}${path}`, {
        headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' },
      });
      expect(got.status).toBe(200);
      const obj = (await got.json()) as Record<string, any>;
      const sel = obj.spec.selector.matchLabels ?? obj.spec.selector;
      expect(sel[K], path).toBe('member3');
      const put = await fetch(`${f.url}${path}`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/vnd.kubernetes.protobuf',
          accept: 'application/json',
        },
        body: encodeObject({ ...obj, spec: { ...obj.spec, ...change } }),
      });
      expect(put.status, await put.clone().text()).toBe(200);
      const stored = f.member('member3').get(gvr, 'default', app) as Record<string, any>;
      expect(stored.spec).toMatchObject(change);
      expect(stored.spec.selector, path).toEqual(gvr === DEPLOY ? { matchLabels: { app } } : { app });
    }
  });
});

/**
 * The everyday kubectl 1.35 commands (issue 10, Build 5) through the fleet, each read back from the owning
 * cluster itself: at the root URL with fleet names (`<name>.clusterspace.member2`) and through
 * `/clusterspaces/member2` with plain names. Most of them send protobuf bodies (kubectl's typed clients):
 * what lands in member2 must carry the plain name, no fleet marker, and exactly what was asked.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';
import { createTestCA } from '../helpers/tls.ts';

const core = (resource: string) => ({ group: '', version: 'v1', resource });
const SECRETS = core('secrets');
const PODS = core('pods');
const MARK = 'fleet.karmada.io/cluster';
const NS = 'shop';

type Obj = KubeObject & Record<string, any>;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString();

/** What a direct read of member2 must show: the object, under its plain name, without fleet markers. */
function readBack(
  m: SimCluster,
  gvr: { group: string; version: string; resource: string },
  name: string,
  ns?: string,
): Obj {
  const o = m.get(gvr, ns, name) as Obj | undefined;
  expect(o, `${gvr.resource}/${name} in member2`).toBeDefined();
  expect(o!.metadata.labels?.[MARK]).toBeUndefined();
  expect(o!.metadata.annotations?.[MARK]).toBeUndefined();
  return o!;
}

async function until(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const MODES = [
  { mode: 'root, by fleet name', path: '', fleet: (n: string) => `${n}.clusterspace.member2` },
  { mode: 'through /clusterspaces/member2', path: '/clusterspaces/member2', fleet: (n: string) => n },
] as const;

describe.each(RUNTIMES)('everyday kubectl on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-everyday-'));
  let m2: SimCluster;
  beforeAll(() => {
    m2 = f.member('member2');
  });

  describe.each(MODES)('$mode', ({ mode, path, fleet }) => {
    let k: Kubectl;
    // each mode writes to member2 under names of its own
    const tag = `${runtime === 'node' ? 'n' : 'w'}${path ? 'p' : 'r'}`;
    const nm = (base: string) => `${base}-${tag}`;
    const run = async (args: string[], stdin?: string) => {
      const r = await k.run(args, stdin === undefined ? {} : { stdin });
      return r;
    };
    const ok = async (args: string[], want: RegExp | string) => {
      const r = await run(args);
      expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
      expect(r.code).toBe(0);
      if (typeof want === 'string') expect(r.stdout.trim()).toBe(want);
      else expect(r.stdout).toMatch(want);
      return r;
    };
    beforeAll(() => {
      k = f.kubectl(path);
    });

    it('create secret generic, tls and docker-registry', async () => {
      const g = nm('plain');
      await ok(
        ['create', 'secret', 'generic', fleet(g), '-n', NS, '--from-literal=user=admin'],
        `secret/${fleet(g)} created`,
      );
      const s = readBack(m2, SECRETS, g, NS);
      expect(s.data).toEqual({ user: b64('admin') });
      expect(s.type).toBe('Opaque');

      const pair = createTestCA().server();
      const cert = join(dir, `${tag}.crt`);
      const key = join(dir, `${tag}.key`);
      writeFileSync(cert, pair.cert);
      writeFileSync(key, pair.key);
      const t = nm('tls');
      await ok(
        ['create', 'secret', 'tls', fleet(t), '-n', NS, `--cert=${cert}`, `--key=${key}`],
        `secret/${fleet(t)} created`,
      );
      const ts = readBack(m2, SECRETS, t, NS);
      expect(ts.type).toBe('kubernetes.io/tls');
      expect(unb64(ts.data['tls.crt'])).toBe(pair.cert);
      expect(unb64(ts.data['tls.key'])).toBe(pair.key);

      const d = nm('pull');
      await ok(
        [
          'create',
          'secret',
          'docker-registry',
          fleet(d),
          '-n',
          NS,
          '--docker-server=registry.example.com',
          '--docker-username=bot',
          '--docker-password=s3cret',
        ],
        `secret/${fleet(d)} created`,
      );
      const ds = readBack(m2, SECRETS, d, NS);
      expect(ds.type).toBe('kubernetes.io/dockerconfigjson');
      const auths = JSON.parse(unb64(ds.data['.dockerconfigjson'])).auths;
      expect(auths['registry.example.com']).toMatchObject({
        username: 'bot',
        password: 's3cret',
        auth: b64('bot:s3cret'),
      });
    });

    it('create deployment, and it becomes ready in member2', async () => {
      const d = nm('web');
      await ok(
        ['create', 'deployment', fleet(d), '-n', NS, '--image=nginx:1.27', '--replicas=2', '--port=80'],
        `deployment.apps/${fleet(d)} created`,
      );
      const gvr = { group: 'apps', version: 'v1', resource: 'deployments' };
      const dep = readBack(m2, gvr, d, NS);
      expect(dep.spec.replicas).toBe(2);
      expect(dep.spec.template.spec.containers[0]).toMatchObject({
        name: 'nginx',
        image: 'nginx:1.27',
        ports: [{ containerPort: 80 }],
      });
      // kubectl labels the pods with the name it was given: the fleet name at the root (a valid label value)
      expect(dep.spec.selector.matchLabels).toEqual({ app: fleet(d) });
      await until(() => (m2.get(gvr, NS, d) as Obj)?.status?.readyReplicas === 2);
      await ok(
        ['rollout', 'status', `deployment/${fleet(d)}`, '-n', NS, '--timeout=20s'],
        /successfully rolled out/,
      );
    });

    it('create namespace', async () => {
      const n = nm('team');
      await ok(['create', 'namespace', fleet(n)], `namespace/${fleet(n)} created`);
      const ns = readBack(m2, core('namespaces'), n);
      expect(ns.status.phase).toBe('Active');
      expect(ns.metadata.labels?.['kubernetes.io/metadata.name']).toBe(n);
    });

    it('create job and cronjob', async () => {
      const j = nm('once');
      await ok(
        ['create', 'job', fleet(j), '-n', NS, '--image=busybox:1.36', '--', 'echo', 'hi'],
        `job.batch/${fleet(j)} created`,
      );
      const job = readBack(m2, { group: 'batch', version: 'v1', resource: 'jobs' }, j, NS);
      expect(job.spec.template.spec.containers[0]).toMatchObject({
        image: 'busybox:1.36',
        command: ['echo', 'hi'],
      });
      expect(job.spec.template.spec.restartPolicy).toBe('Never');

      const c = nm('nightly');
      await ok(
        [
          'create',
          'cronjob',
          fleet(c),
          '-n',
          NS,
          '--image=busybox:1.36',
          '--schedule=*/5 * * * *',
          '--',
          'date',
        ],
        `cronjob.batch/${fleet(c)} created`,
      );
      const cj = readBack(m2, { group: 'batch', version: 'v1', resource: 'cronjobs' }, c, NS);
      expect(cj.spec.schedule).toBe('*/5 * * * *');
      expect(cj.spec.jobTemplate.spec.template.spec.containers[0].command).toEqual(['date']);
    });

    it('create service clusterip and serviceaccount', async () => {
      const s = nm('api');
      await ok(
        ['create', 'service', 'clusterip', fleet(s), '-n', NS, '--tcp=80:8080'],
        `service/${fleet(s)} created`,
      );
      const svc = readBack(m2, core('services'), s, NS);
      expect(svc.spec.type).toBe('ClusterIP');
      expect(svc.spec.ports[0]).toMatchObject({
        name: '80-8080',
        port: 80,
        targetPort: 8080,
        protocol: 'TCP',
      });

      const a = nm('robot');
      await ok(['create', 'serviceaccount', fleet(a), '-n', NS], `serviceaccount/${fleet(a)} created`);
      readBack(m2, core('serviceaccounts'), a, NS);
    });

    it('create role and rolebinding', async () => {
      const r = nm('reader');
      await ok(
        ['create', 'role', fleet(r), '-n', NS, '--verb=get,list', '--resource=pods,secrets'],
        `role.rbac.authorization.k8s.io/${fleet(r)} created`,
      );
      const rbac = (resource: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource });
      const role = readBack(m2, rbac('roles'), r, NS);
      expect(role.rules).toEqual([
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'secrets'] },
      ]);

      const b = nm('reader-binding');
      // roleRef names the Role inside member2: its plain name
      await ok(
        ['create', 'rolebinding', fleet(b), '-n', NS, `--role=${r}`, '--user=alice'],
        `rolebinding.rbac.authorization.k8s.io/${fleet(b)} created`,
      );
      const rb = readBack(m2, rbac('rolebindings'), b, NS);
      expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: r });
      expect(rb.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }]);
    });

    it('create quota, priorityclass, poddisruptionbudget and ingress', async () => {
      const q = nm('limits');
      await ok(
        ['create', 'quota', fleet(q), '-n', NS, '--hard=pods=10,requests.cpu=2'],
        `resourcequota/${fleet(q)} created`,
      );
      expect(readBack(m2, core('resourcequotas'), q, NS).spec.hard).toEqual({
        pods: '10',
        'requests.cpu': '2',
      });

      const p = nm('urgent');
      await ok(
        ['create', 'priorityclass', fleet(p), '--value=1000', '--description=for the pager'],
        `priorityclass.scheduling.k8s.io/${fleet(p)} created`,
      );
      const pc = readBack(m2, { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' }, p);
      expect(pc).toMatchObject({ value: 1000, description: 'for the pager' });

      const d = nm('keep-one');
      await ok(
        ['create', 'poddisruptionbudget', fleet(d), '-n', NS, '--selector=app=web', '--min-available=1'],
        `poddisruptionbudget.policy/${fleet(d)} created`,
      );
      const pdb = readBack(m2, { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' }, d, NS);
      expect(pdb.spec).toMatchObject({ minAvailable: 1, selector: { matchLabels: { app: 'web' } } });

      const i = nm('front');
      await ok(
        ['create', 'ingress', fleet(i), '-n', NS, '--rule=shop.example.com/cart*=cart:8080'],
        `ingress.networking.k8s.io/${fleet(i)} created`,
      );
      const ing = readBack(m2, { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' }, i, NS);
      expect(ing.spec.rules[0]).toEqual({
        host: 'shop.example.com',
        http: {
          paths: [
            {
              path: '/cart',
              pathType: 'Prefix',
              backend: { service: { name: 'cart', port: { number: 8080 } } },
            },
          ],
        },
      });
    });

    it('create token for a service account of member2', async () => {
      const a = nm('tokened');
      await ok(['create', 'serviceaccount', fleet(a), '-n', NS], `serviceaccount/${fleet(a)} created`);
      const r = await ok(
        ['create', 'token', fleet(a), '-n', NS, '--duration=20m', '--audience=fleet-test'],
        /^[\w-]+\.[\w-]+\.[\w-]+\n?$/,
      );
      const claims = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString());
      const sa = readBack(m2, core('serviceaccounts'), a, NS);
      expect(claims.sub).toBe(`system:serviceaccount:${NS}:${a}`);
      expect(claims['kubernetes.io'].serviceaccount).toEqual({ name: a, uid: sa.metadata.uid });
      expect(claims.aud).toEqual(['fleet-test']);
      expect(claims.exp - claims.iat).toBe(1200);
    });

    it('auth reconcile creates and then keeps RBAC objects', async () => {
      const r = nm('reconciled');
      const file = join(dir, `${tag}-rbac.yaml`);
      writeFileSync(
        file,
        `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ${fleet(r)}, namespace: ${NS}}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ${fleet(r)}, namespace: ${NS}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${r}}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: bob}]
`,
      );
      // kubectl explains on stderr what reconciliation changed: creations the first time, nothing after
      let res = await run(['auth', 'reconcile', '-f', file]);
      expect(res.code).toBe(0);
      expect(res.stderr).toContain('reconciliation required create');
      expect(res.stdout).toContain(`role.rbac.authorization.k8s.io/${fleet(r)} reconciled`);
      expect(res.stdout).toContain(`rolebinding.rbac.authorization.k8s.io/${fleet(r)} reconciled`);
      const rbac = (resource: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource });
      expect(readBack(m2, rbac('roles'), r, NS).rules).toEqual([
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      ]);
      expect(readBack(m2, rbac('rolebindings'), r, NS).subjects[0].name).toBe('bob');
      res = await run(['auth', 'reconcile', '-f', file]);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain(`role.rbac.authorization.k8s.io/${fleet(r)} reconciled`);
      // a rule more: kubectl GETs the Role and PUTs it back in protobuf with the resourceVersion it read
      // (a composite one at the root), which must reach member2 as member2's own
      const before = readBack(m2, rbac('roles'), r, NS).metadata.resourceVersion;
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace(
          'verbs: [get]}',
          'verbs: [get]}, {apiGroups: [""], resources: [secrets], verbs: [list]}',
        ),
      );
      res = await run(['auth', 'reconcile', '-f', file]);
      expect(res.code).toBe(0);
      expect(res.stderr).toContain('reconciliation required update');
      const role = readBack(m2, rbac('roles'), r, NS);
      expect(role.rules).toEqual([
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
      ]);
      expect(role.metadata.resourceVersion).not.toBe(before);
    });

    it('cp to and from a pod of member2', async () => {
      const pod = m2
        .list(PODS, NS)
        .find((p) => (p as Obj).status?.phase === 'Running' && p.metadata.name!.startsWith('web-'))!;
      const src = join(dir, `${tag}-in.txt`);
      const content = `copied ${tag} ${'x'.repeat(2000)}\n`;
      writeFileSync(src, content);
      const remote = `${NS}/${fleet(pod.metadata.name!)}:/tmp/${tag}.txt`;
      let r = await run(['cp', '-c', 'web', src, remote]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const back = join(dir, `${tag}-out.txt`);
      r = await run(['cp', '-c', 'web', remote, back]);
      expect(r.stderr).toBe('');
      expect(readFileSync(back, 'utf8')).toBe(content);
      // the file is in member2's pod: read it there directly
      const direct = f.kubectl('/clusterspaces/member2');
      r = await direct.run([
        'exec',
        '-n',
        NS,
        pod.metadata.name!,
        '-c',
        'web',
        '--',
        'cat',
        `/tmp/${tag}.txt`,
      ]);
      expect(r.stdout).toBe(content);
    });

    it('debug adds an ephemeral container that runs in member2', async () => {
      const pod = m2
        .list(PODS, NS)
        .find((p) => (p as Obj).status?.phase === 'Running' && p.metadata.name!.startsWith('web-'))!;
      const c = `dbg-${tag}`;
      const r = await run([
        'debug',
        '-n',
        NS,
        fleet(pod.metadata.name!),
        `--image=busybox:1.36`,
        '--profile=general',
        `--container=${c}`,
        '--',
        'sh',
        '-c',
        'echo debugging $HOSTNAME',
      ]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const live = () => m2.get(PODS, NS, pod.metadata.name!) as Obj;
      expect(live().spec.ephemeralContainers.find((e: any) => e.name === c)).toMatchObject({
        image: 'busybox:1.36',
        command: ['sh', '-c', 'echo debugging $HOSTNAME'],
      });
      await until(() =>
        live().status.ephemeralContainerStatuses?.some((s: any) => s.name === c && s.state.terminated),
      );
      const logs = await run(['logs', '-n', NS, fleet(pod.metadata.name!), '-c', c]);
      expect(logs.stdout).toBe(`debugging ${pod.metadata.name}\n`);
    });

    it('apply validates fields on the server: strict refuses an unknown field, warn lets it through', async () => {
      const d = nm('typo');
      const file = join(dir, `${tag}-typo.yaml`);
      writeFileSync(
        file,
        `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${fleet(d)}, namespace: ${NS}}
spec:
  replicaz: 3
  selector: {matchLabels: {app: ${d}}}
  template:
    metadata: {labels: {app: ${d}}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
`,
      );
      let r = await run(['apply', '--validate=strict', '-f', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicaz"',
      );
      const gvr = { group: 'apps', version: 'v1', resource: 'deployments' };
      expect(m2.get(gvr, NS, d)).toBeUndefined();
      r = await run(['apply', '--validate=warn', '-f', file]);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('Warning: unknown field "spec.replicaz"');
      expect(r.stdout.trim()).toBe(`deployment.apps/${fleet(d)} created`);
      readBack(m2, gvr, d, NS);
    });

    it('auth whoami and auth can-i', async () => {
      const who = await run(['auth', 'whoami', '-o', 'json']);
      expect(who.stderr).toBe('');
      expect(JSON.parse(who.stdout).status.userInfo.username).toBeTruthy();
      const yes = await run(['auth', 'can-i', 'create', 'deployments', '-n', NS]);
      expect(yes.stderr).toBe('');
      expect(yes.stdout.trim()).toBe('yes');
      const list = await run(['auth', 'can-i', '--list', '-n', NS]);
      expect(list.stderr).toBe('');
      expect(list.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
      expect(list.stdout).toMatch(/\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/);
      void mode;
    });
  });
});

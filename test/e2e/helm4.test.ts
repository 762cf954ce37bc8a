/**
 * The real Helm 4 binary (client-go 1.35: protobuf release Secrets, watches for --wait) installing a tiny
 * chart (test/fixtures/charts/tiny: a ConfigMap, a Deployment, a Service) through the fleet, on Node and in
 * workerd:
 *
 * - through `/clusterspaces/member1`, as against that one cluster: release Secret and objects in member1;
 * - at the fleet root, where plain names mean the control plane (federation on): the release record lives
 *   in the control plane's namespace, and the chart names its objects `<name>.clusterspace.member2`
 *   (`--set cluster=member2`), so the workload lands in member2 and `--wait` watches it there;
 * - at the fleet root with `-n default.clusterspace.member2` and the chart's plain names: release and
 *   objects in member2, every object answered under the name Helm gave it (docs/names.md), so upgrade and
 *   rollback patch them in place (they once deleted them all);
 * - `helm list -A` at the root lists the releases of every cluster.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { type Helm, type HelmResult, helmRunner } from '../helpers/helm.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CHART = resolve('test/fixtures/charts/tiny');
const core = (resource: string) => ({ group: '', version: 'v1', resource });
const CM = core('configmaps');
const SVC = core('services');
const SECRETS = core('secrets');
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const MARK = 'fleet.karmada.io/cluster';
/** Helm's --wait budget: generous, as two noisy cores running other suites slow every watch down */
const WAIT = '90s';
/** a whole install-to-uninstall test: six Helm runs, three of them waiting */
const TEST_TIMEOUT = 240_000;

type Obj = KubeObject & Record<string, any>;

let helmRun: Helm;
const helm = (kubeconfig: string, args: string[], timeoutMs?: number) =>
  helmRun.run(kubeconfig, args, timeoutMs);

function expectOk(r: HelmResult, what: string): void {
  expect(r.stderr, what).toBe('');
  expect(r.code, `${what}\n${r.stdout}`).toBe(0);
}

/** The release's Secrets in a cluster (Helm's storage: one per revision, labelled owner=helm). */
function releaseSecrets(m: SimCluster, ns: string, release: string): Obj[] {
  return (m.list(SECRETS, ns) as Obj[])
    .filter((s) => s.metadata.labels?.owner === 'helm' && s.metadata.labels?.name === release)
    .sort((a, b) => Number(a.metadata.labels!.version) - Number(b.metadata.labels!.version));
}

/** Everything the chart made, as a direct read of the cluster shows it. */
function workload(m: SimCluster, ns: string, name: string) {
  return {
    cm: m.get(CM, ns, name) as Obj | undefined,
    deploy: m.get(DEPLOY, ns, name) as Obj | undefined,
    svc: m.get(SVC, ns, name) as Obj | undefined,
  };
}

function expectClean(o: Obj | undefined): void {
  expect(o).toBeDefined();
  expect(o!.metadata.name).not.toContain('.clusterspace.');
  expect(o!.metadata.labels?.[MARK]).toBeUndefined();
  expect(o!.metadata.annotations?.[MARK]).toBeUndefined();
}

beforeAll(() => {
  helmRun = helmRunner('fleet-helm4-');
});
afterAll(() => helmRun.close());

describe.each(RUNTIMES)('Helm 4 through the fleet on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const r1 = `tiny-${runtime}-m1`;
  const r2 = `tiny-${runtime}-root`;
  const r3 = `tiny-${runtime}-nsform`;
  // helm list -A's releases, names of their own so that a failure above cannot leave one in the way
  const l1 = `list-${runtime}-m1`;
  const l2 = `list-${runtime}-root`;
  const l3 = `list-${runtime}-m3`;

  it(
    'install --wait, status, upgrade --wait, history, rollback, uninstall --wait through /clusterspaces/member1',
    async () => {
      const kc = f.kubectl('/clusterspaces/member1').kubeconfig;
      const m1 = f.member('member1');
      let r = await helm(kc, ['install', r1, CHART, '-n', 'shop', '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm install');
      expect(r.stdout).toContain('STATUS: deployed');
      let w = workload(m1, 'shop', r1);
      expect(w.cm?.data).toEqual({ message: 'one' });
      expect(w.deploy?.status?.readyReplicas).toBe(2);
      expect(w.svc?.spec?.ports?.[0]?.port).toBe(80);
      expect(releaseSecrets(m1, 'shop', r1).map((s) => s.metadata.labels!.status)).toEqual(['deployed']);
      expect(f.member('member2').get(CM, 'shop', r1)).toBeUndefined();
      // Helm's release Secret went as client-go's typed clients write: a protobuf body, protobuf answers first
      const created = m1.requests.find(
        (q) => q.method === 'POST' && new URL(q.url).pathname === '/api/v1/namespaces/shop/secrets',
      );
      expect(created?.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
      expect(created?.headers.accept).toBe('application/vnd.kubernetes.protobuf,application/json');

      r = await helm(kc, ['status', r1, '-n', 'shop']);
      expectOk(r, 'helm status');
      expect(r.stdout).toMatch(/STATUS: deployed\nREVISION: 1\n/);

      r = await helm(kc, [
        'upgrade',
        r1,
        CHART,
        '-n',
        'shop',
        '--set',
        'message=two',
        '--wait',
        '--timeout',
        '30s',
      ]);
      expectOk(r, 'helm upgrade');
      w = workload(m1, 'shop', r1);
      expect(w.cm?.data).toEqual({ message: 'two' });
      expect(w.deploy?.spec?.template?.metadata?.annotations?.message).toBe('two');
      expect(w.deploy?.status?.updatedReplicas).toBe(2);

      r = await helm(kc, ['history', r1, '-n', 'shop', '-o', 'json']);
      expectOk(r, 'helm history');
      expect(JSON.parse(r.stdout).map((h: any) => [h.revision, h.status])).toEqual([
        [1, 'superseded'],
        [2, 'deployed'],
      ]);

      r = await helm(kc, ['rollback', r1, '1', '-n', 'shop', '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm rollback');
      expect(workload(m1, 'shop', r1).cm?.data).toEqual({ message: 'one' });
      expect(releaseSecrets(m1, 'shop', r1).map((s) => s.metadata.labels!.status)).toEqual([
        'superseded',
        'superseded',
        'deployed',
      ]);

      r = await helm(kc, ['uninstall', r1, '-n', 'shop', '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm uninstall');
      w = workload(m1, 'shop', r1);
      expect([w.cm, w.deploy, w.svc]).toEqual([undefined, undefined, undefined]);
      expect(releaseSecrets(m1, 'shop', r1)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'at the root: the release record in the control plane, the workload in member2 by fleet name',
    async () => {
      const kc = f.kubectl('').kubeconfig;
      const m2 = f.member('member2');
      const karmada = f.sims.karmada;
      const set = ['--set', 'cluster=member2'];
      let r = await helm(kc, ['install', r2, CHART, '-n', 'default', ...set, '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm install at the root');
      let w = workload(m2, 'default', r2);
      for (const o of [w.cm, w.deploy, w.svc]) expectClean(o);
      expect(w.cm?.data).toEqual({ message: 'one' });
      expect(w.deploy?.status?.readyReplicas).toBe(2);
      expect(releaseSecrets(karmada, 'default', r2).map((s) => s.metadata.labels!.status)).toEqual([
        'deployed',
      ]);
      expect(releaseSecrets(m2, 'default', r2)).toEqual([]);

      r = await helm(kc, ['status', r2, '-n', 'default']);
      expectOk(r, 'helm status at the root');
      expect(r.stdout).toMatch(/STATUS: deployed\nREVISION: 1\n/);

      r = await helm(kc, [
        'upgrade',
        r2,
        CHART,
        '-n',
        'default',
        ...set,
        '--set',
        'message=two',
        '--wait',
        '--timeout',
        '30s',
      ]);
      expectOk(r, 'helm upgrade at the root');
      expect(workload(m2, 'default', r2).cm?.data).toEqual({ message: 'two' });

      r = await helm(kc, ['history', r2, '-n', 'default', '-o', 'json']);
      expectOk(r, 'helm history at the root');
      expect(JSON.parse(r.stdout).map((h: any) => h.status)).toEqual(['superseded', 'deployed']);

      r = await helm(kc, ['rollback', r2, '1', '-n', 'default', '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm rollback at the root');
      w = workload(m2, 'default', r2);
      expect(w.cm?.data).toEqual({ message: 'one' });
      expectClean(w.cm);

      r = await helm(kc, ['uninstall', r2, '-n', 'default', '--wait', '--timeout', WAIT]);
      expectOk(r, 'helm uninstall at the root');
      w = workload(m2, 'default', r2);
      expect([w.cm, w.deploy, w.svc]).toEqual([undefined, undefined, undefined]);
      expect(releaseSecrets(karmada, 'default', r2)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'at the root with -n <ns>.clusterspace.member2 and plain names: install, upgrade, rollback, uninstall keep every object',
    async () => {
      // issue 29: objects answered under their fleet names made Helm's upgrade diff delete them all
      const kc = f.kubectl('').kubeconfig;
      const m2 = f.member('member2');
      const ns = 'default.clusterspace.member2';
      const run = (args: string[]) => helm(kc, [...args, '-n', ns, '--wait', '--timeout', WAIT]);
      const uids = () => {
        const w = workload(m2, 'default', r3);
        return [w.cm, w.deploy, w.svc].map((o) => o?.metadata.uid);
      };
      let r = await run(['install', r3, CHART]);
      expectOk(r, 'helm install -n <fleet namespace>');
      let w = workload(m2, 'default', r3);
      for (const o of [w.cm, w.deploy, w.svc]) expectClean(o);
      expect(w.deploy?.status?.readyReplicas).toBe(2);
      expect(releaseSecrets(m2, 'default', r3).map((s) => s.metadata.labels!.status)).toEqual(['deployed']);
      const installed = uids();
      expect(installed.every(Boolean)).toBe(true);

      r = await run(['upgrade', r3, CHART, '--set', 'message=two', '--set', 'replicas=3']);
      expectOk(r, 'helm upgrade -n <fleet namespace>');
      expect(r.stdout).not.toContain('deleting');
      w = workload(m2, 'default', r3);
      expect(w.cm?.data).toEqual({ message: 'two' });
      expect(w.deploy?.spec?.replicas).toBe(3);
      expect(w.deploy?.status?.readyReplicas).toBe(3);
      // patched in place, nothing deleted and made again
      expect(uids()).toEqual(installed);

      r = await run(['rollback', r3, '1']);
      expectOk(r, 'helm rollback -n <fleet namespace>');
      w = workload(m2, 'default', r3);
      expect(w.cm?.data).toEqual({ message: 'one' });
      expect(w.deploy?.spec?.replicas).toBe(2);
      expect(uids()).toEqual(installed);
      expect(releaseSecrets(m2, 'default', r3).map((s) => s.metadata.labels!.status)).toEqual([
        'superseded',
        'superseded',
        'deployed',
      ]);

      r = await run(['uninstall', r3]);
      expectOk(r, 'helm uninstall -n <fleet namespace>');
      w = workload(m2, 'default', r3);
      expect([w.cm, w.deploy, w.svc]).toEqual([undefined, undefined, undefined]);
      expect(releaseSecrets(m2, 'default', r3)).toEqual([]);
      for (const s of [f.sims.karmada, f.member('member1'), f.member('member3')])
        expect(s.get(CM, 'default', r3)).toBeUndefined();
    },
    TEST_TIMEOUT,
  );

  it(
    'helm list -A at the root lists the releases of every cluster',
    async () => {
      const root = f.kubectl('').kubeconfig;
      let r = await helm(f.kubectl('/clusterspaces/member1').kubeconfig, [
        'install',
        l1,
        CHART,
        '-n',
        'shop',
      ]);
      expectOk(r, 'install in member1');
      r = await helm(f.kubectl('/clusterspaces/member3').kubeconfig, ['install', l3, CHART, '-n', 'default']);
      expectOk(r, 'install in member3');
      r = await helm(root, ['install', l2, CHART, '-n', 'default', '--set', 'cluster=member2']);
      expectOk(r, 'install at the root');
      r = await helm(root, ['list', '-A', '-o', 'json']);
      expectOk(r, 'helm list -A');
      const listed = JSON.parse(r.stdout).map((x: any) => `${x.namespace}/${x.name}:${x.status}`);
      expect(listed.sort()).toEqual(
        [`default/${l2}:deployed`, `default/${l3}:deployed`, `shop/${l1}:deployed`].sort(),
      );
      expect(releaseSecrets(f.member('member1'), 'shop', l1)).toHaveLength(1);
      expect(releaseSecrets(f.member('member3'), 'default', l3)).toHaveLength(1);
      expect(releaseSecrets(f.sims.karmada, 'default', l2)).toHaveLength(1);
    },
    TEST_TIMEOUT,
  );
});

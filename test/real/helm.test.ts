/**
 * The real Helm 4 binary at the Karmada fleet's root (members through Karmada's cluster proxy), in front
 * of real kube-apiservers whose pods kwok runs: test/fixtures/charts/refs (ServiceAccount, ConfigMap,
 * Secret, Role, RoleBinding and a Deployment whose pods refer to all of them) installed, upgraded with a
 * changed value, rolled back and uninstalled, every step with --wait:
 *
 * - in a fleet-named namespace (`-n <ns>.clusterspace.member2`) with the chart's plain names: release
 *   record and objects in member2, patched in place;
 * - at the root with fleet names (`fullnameOverride=x.clusterspace.member1`): the release record in the
 *   control plane (a plain name at the root), objects and every reference to one plain in member1.
 *
 * Checked with each member's own kubectl: names and references plain, the pods Running with them.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Helm, type HelmResult, helmRunner } from '../helpers/helm.ts';
import { bed, type ClusterInfo, clusterKubectl, ensureNamespace, ok, until } from './bed.ts';

const CHART = resolve('test/fixtures/charts/refs');
/** Helm's --wait budget: a kwok pod runs in seconds, but two loaded cores slow every watch */
const WAIT = '120s';
const TEST_TIMEOUT = 600_000;
const ns = `rh-${randomBytes(3).toString('hex')}`;
const KINDS = ['serviceaccount', 'configmap', 'secret', 'role', 'rolebinding', 'deployment'];

type Obj = Record<string, any>;

let helmRun: Helm;
beforeAll(() => {
  helmRun = helmRunner('real-helm-');
});
afterAll(() => helmRun.close());

function expectOk(r: HelmResult, what: string): void {
  expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(0);
}

async function getJson(m: ClusterInfo, args: string[]): Promise<Obj> {
  return JSON.parse(await ok(clusterKubectl(m), ['get', ...args, '-o', 'json']));
}

/** The chart's objects in member `m`, by kind (undefined where absent). */
async function objects(m: ClusterInfo, name: string): Promise<Record<string, Obj | undefined>> {
  const out: Record<string, Obj | undefined> = {};
  for (const kind of KINDS) {
    const r = await clusterKubectl(m).run(['get', kind, name, '-n', ns, '-o', 'json']);
    out[kind] = r.code === 0 ? JSON.parse(r.stdout) : undefined;
    if (r.code !== 0) expect(r.stderr).toContain('NotFound');
  }
  return out;
}

/** Helm's release Secrets in `m`'s `ns`, oldest revision first, as `name:status`. */
async function releases(m: ClusterInfo, release: string): Promise<string[]> {
  const l = await getJson(m, ['secrets', '-n', ns, '-l', `owner=helm,name=${release}`]);
  return (l.items as Obj[])
    .sort((a, b) => Number(a.metadata.labels.version) - Number(b.metadata.labels.version))
    .map((s) => `${s.metadata.labels.version}:${s.metadata.labels.status}`);
}

/**
 * Every reference in `m`'s objects named `x` is `x` (plain), and a Running pod of the Deployment uses the
 * image `image`, the service account and the ConfigMap volume `x`. Returns the objects' uids.
 */
async function expectLanded(m: ClusterInfo, x: string, image: string): Promise<string[]> {
  const o = await objects(m, x);
  for (const kind of KINDS) {
    expect(o[kind], `${kind} ${x} in ${m.name}`).toBeDefined();
    expect(o[kind]!.metadata.name).toBe(x);
  }
  expect(o.serviceaccount!.imagePullSecrets).toEqual([{ name: x }]);
  expect(o.rolebinding!.roleRef.name).toBe(x);
  // the subject's namespace as the member knows it, not the fleet name Helm wrote
  expect(o.rolebinding!.subjects).toEqual([{ kind: 'ServiceAccount', name: x, namespace: ns }]);
  const spec = o.deployment!.spec.template.spec;
  expect(spec.serviceAccountName).toBe(x);
  expect(spec.containers[0].image).toBe(image);
  expect(spec.volumes.map((v: Obj) => v.configMap?.name ?? v.secret?.secretName)).toEqual([x, x]);
  // kwok ran a pod of the current template, with the references resolved by the real apiserver
  const pod = await until(`a Running ${image} pod of ${x} in ${m.name}`, async () => {
    const pods = await getJson(m, ['pods', '-n', ns]);
    return (pods.items as Obj[]).find(
      (p) =>
        p.metadata.name.startsWith(`${x}-`) &&
        p.status?.phase === 'Running' &&
        !p.metadata.deletionTimestamp &&
        p.spec.containers[0].image === image,
    );
  });
  expect(pod.spec.serviceAccountName).toBe(x);
  expect(pod.spec.volumes.find((v: Obj) => v.name === 'config').configMap.name).toBe(x);
  return KINDS.map((k) => o[k]!.metadata.uid as string);
}

describe('Helm 4 at the Karmada fleet root, against real members', () => {
  const b = bed();
  const kc = b.fleets.karmada.kubeconfig;
  const [m1, m2] = b.members as [ClusterInfo, ClusterInfo, ClusterInfo];
  const helm = (args: string[]) => helmRun.run(kc, [...args, '--wait', '--timeout', WAIT], 240_000);

  beforeAll(async () => {
    await ensureNamespace([b.karmadaApiserver, ...b.members], ns);
  });
  afterAll(async () => {
    for (const c of [b.karmadaApiserver, ...b.members])
      await clusterKubectl(c).run(['delete', 'namespace', ns, '--wait=false']);
  });

  it(
    '-n <ns>.clusterspace.member2 with plain names: install, upgrade, rollback, uninstall in member2',
    async () => {
      const release = 'plain';
      const space = ['-n', `${ns}.clusterspace.${m2.name}`];
      let r = await helm(['install', release, CHART, ...space]);
      expectOk(r, 'helm install -n <fleet namespace>');
      const uids = await expectLanded(m2, release, 'nginx');
      expect(await releases(m2, release)).toEqual(['1:deployed']);

      r = await helm(['upgrade', release, CHART, ...space, '--set', 'image=nginx:2']);
      expectOk(r, 'helm upgrade -n <fleet namespace>');
      // patched in place: the same objects, none deleted and made again
      expect(await expectLanded(m2, release, 'nginx:2')).toEqual(uids);

      r = await helm(['rollback', release, '1', ...space]);
      expectOk(r, 'helm rollback -n <fleet namespace>');
      expect(await expectLanded(m2, release, 'nginx')).toEqual(uids);
      expect(await releases(m2, release)).toEqual(['1:superseded', '2:superseded', '3:deployed']);
      for (const other of [m1, b.members[2]!, b.karmadaApiserver])
        expect(Object.values(await objects(other, release)).filter(Boolean)).toEqual([]);

      r = await helm(['uninstall', release, ...space]);
      expectOk(r, 'helm uninstall -n <fleet namespace>');
      expect(Object.values(await objects(m2, release)).filter(Boolean)).toEqual([]);
      expect(await releases(m2, release)).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'at the root with fullnameOverride=x.clusterspace.member1: record in the control plane, objects plain in member1',
    async () => {
      const release = 'named';
      const x = 'x';
      const set = ['-n', ns, '--set', `fullnameOverride=${x}.clusterspace.${m1.name}`];
      let r = await helm(['install', release, CHART, ...set]);
      expectOk(r, 'helm install at the root');
      const uids = await expectLanded(m1, x, 'nginx');
      expect(await releases(b.karmadaApiserver, release)).toEqual(['1:deployed']);
      expect(await releases(m1, release)).toEqual([]);

      r = await helm(['upgrade', release, CHART, ...set, '--set', 'image=nginx:2']);
      expectOk(r, 'helm upgrade at the root');
      expect(await expectLanded(m1, x, 'nginx:2')).toEqual(uids);

      r = await helm(['rollback', release, '1', '-n', ns]);
      expectOk(r, 'helm rollback at the root');
      expect(await expectLanded(m1, x, 'nginx')).toEqual(uids);
      expect(await releases(b.karmadaApiserver, release)).toEqual([
        '1:superseded',
        '2:superseded',
        '3:deployed',
      ]);
      for (const other of [m2, b.members[2]!, b.karmadaApiserver])
        expect(Object.values(await objects(other, x)).filter(Boolean)).toEqual([]);

      r = await helm(['uninstall', release, '-n', ns]);
      expectOk(r, 'helm uninstall at the root');
      expect(Object.values(await objects(m1, x)).filter(Boolean)).toEqual([]);
      expect(await releases(b.karmadaApiserver, release)).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});

/**
 * Issue 32 on the real bed: the client-go and controller-runtime tests of test/clientgo (run against the
 * simulated fleet by test/e2e/client-go.test.ts) against the bed's fleets, as the bed's admin user with its
 * client certificate, over TLS. What the simulated demo seeds, the real clusters get here first (the shop
 * namespace's Deployments and a Running pod with an http port, the widgets CRD in member2 and the control
 * plane only); the Go tests arrange and check the clusters through test/real/control.ts. What needs the
 * simulated clusters' knobs (cut watches, a 410, a member down, a member joining) the Go tests leave out
 * on FLEET_BED=real and log why.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { impersonatorMay } from '../../testbed/karmada.ts';
import { goTestBinary, runGoTest } from '../helpers/gotest.ts';
import { bed, type FleetInfo, until } from './bed.ts';
import { crdObject, type RealControl, serveRealControl } from './control.ts';

/** The Go tests run here (every one of the simulated fleet's but the fault-proxy soak), with a time budget (ms) */
const CASES: Array<[string, number, Record<string, string>?]> = [
  ['TestTypedByFleetName', 120_000],
  ['TestDynamicWidgets', 60_000],
  ['TestMetadataClientAndInformer', 60_000],
  ['TestDiscoveryAndRESTMapper', 180_000],
  ['TestSharedInformers', 150_000, { KUBE_FEATURE_WatchListClient: 'true' }],
  ['TestSharedInformers', 150_000, { KUBE_FEATURE_WatchListClient: 'false' }],
  ['TestInformerSoak', 150_000],
  ['TestServerSideApply', 60_000],
  ['TestImpersonate', 30_000],
  ['TestLeaderElection', 90_000],
  ['TestExec', 90_000],
  ['TestPortForward', 90_000],
  ['TestControllerRuntimeManager', 180_000],
];
/** the user TestImpersonate acts as, and its groups */
const JANE = { user: 'jane', groups: ['fleet-devs', 'auditors'] };
const FLEETS = (process.env.FLEET_REAL_FLEETS ?? 'karmada,direct').split(',') as Array<'karmada' | 'direct'>;

const b = bed();
let control: RealControl;
let binary: string;
const creds = mkdtempSync(join(tmpdir(), 'clientgo-real-'));
const files = { ca: join(creds, 'ca.pem'), cert: join(creds, 'cert.pem'), key: join(creds, 'key.pem') };

beforeAll(async () => {
  writeFileSync(files.ca, b.fleetCA);
  writeFileSync(files.cert, b.admin.cert);
  writeFileSync(files.key, b.admin.key, { mode: 0o600 });
  [binary, control] = await Promise.all([goTestBinary().then((x) => x.binary), serveRealControl(b)]);
  const c = (name: string) => control.clusters.get(name)!;
  const all = [...control.clusters.values()];
  await Promise.all(all.map((x) => x.ensureNamespace('shop')));
  // the demo's custom resource: served by member2 and the control plane only
  const widgets = crdObject('example.fleet.io', 'Widget');
  for (const name of ['member2', 'karmada']) {
    await c(name).installCrd(widgets);
    await c(name).put({
      cluster: name,
      resource: 'widgets',
      ns: 'shop',
      name: `w-${name}`,
      object: { spec: { size: 1, color: 'blue' } },
    });
  }
  // the demo's web Deployment, in member1 and member2 with different replicas, its pods serving "http"
  for (const [name, replicas] of [
    ['member1', 1],
    ['member2', 2],
  ] as const) {
    const labels = { app: 'web' };
    await c(name).put({
      cluster: name,
      resource: 'deployments',
      ns: 'shop',
      name: 'web',
      object: {
        spec: {
          replicas,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [{ name: 'web', image: 'nginx', ports: [{ name: 'http', containerPort: 80 }] }],
            },
          },
        },
      },
    });
  }
  await until('a Running web pod in member2', async () => {
    const l = await c('member2').ok('GET', '/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb');
    return (l.items as any[]).some((p) => p.status?.phase === 'Running') || undefined;
  });
  // TestImpersonate: Karmada's proxy lets a user through with clusters/proxy bound to it by name, and the
  // member's karmada-impersonator may act as the users and groups such bindings name (unified auth)
  await c('karmada').put({
    cluster: 'karmada',
    resource: 'clusterrolebindings',
    name: 'clientgo-jane',
    object: {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-proxy-admin' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: JANE.user },
        ...JANE.groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
      ],
    },
  });
  for (const m of b.members)
    await until(`${m.name}: karmada-impersonator may act as ${JANE.user} and her groups`, async () => {
      const role = await c(m.name).ok(
        'GET',
        '/apis/rbac.authorization.k8s.io/v1/clusterroles/karmada-impersonator',
      );
      return (
        (impersonatorMay(role, 'users', JANE.user) &&
          JANE.groups.every((g) => impersonatorMay(role, 'groups', g))) ||
        undefined
      );
    });
}, 1_800_000);

afterAll(async () => {
  await control?.close();
  rmSync(creds, { recursive: true, force: true });
});

describe.each(FLEETS)(
  'client-go and controller-runtime against the real bed through the %s fleet',
  (which) => {
    const fleet = (): FleetInfo => b.fleets[which];
    for (const [name, ms, extraEnv] of CASES)
      it(
        `${name}${extraEnv ? ` ${Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`)}` : ''}`,
        async () => {
          const env = {
            FLEET_URL: fleet().url,
            FLEET_CONTROL: control.url,
            // the Go tests' namespaces and leases are named for it: one set per fleet
            FLEET_RUNTIME: `real-${which}`,
            FLEET_BED: 'real',
            FLEET_CA_FILE: files.ca,
            FLEET_CERT_FILE: files.cert,
            FLEET_KEY_FILE: files.key,
            // TestExec on the real bed: member2 spoken to directly, to tell the member's behaviour from the fleet's
            FLEET_MEMBER2_KUBECONFIG: b.members.find((m) => m.name === 'member2')!.kubeconfig,
            ...extraEnv,
          };
          const r = await runGoTest(binary, name, env, ms);
          const subtests = r.subtests.map((s) => `${s.outcome} ${s.name} (${s.elapsed ?? '?'} s)`).join('\n');
          const logged = r.output.split('\n').filter((l) => /^\s+\w+_test\.go:\d+: /.test(l));
          if (r.outcome === 'pass' && logged.length)
            console.log(`${name} via ${which}:\n${logged.join('\n')}`);
          expect(r.outcome, `${name} via ${which}:\n${subtests}\n--- output ---\n${r.output}`).toBe('pass');
        },
        ms + 15_000,
      );
  },
);

/**
 * Propagation at the fleet root (issue 34) in front of the real Karmada v1.18 (testbed/karmada.ts): a
 * Deployment, a PropagationPolicy dividing it by weight and an OverridePolicy changing one member's image,
 * applied at the root and propagated by Karmada's own controllers (detector, scheduler, binding,
 * execution, work-status). kubectl at the root shows the template with its clusters and each copy with
 * its template, in sync after the override; once dispatching is suspended (Karmada would otherwise put a
 * changed copy back) a copy changed directly in its member is flagged Drifted, and `kubectl fleet diff`
 * names the field.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlFleet, tableCell } from '../helpers/kubectl.ts';
import { bed, type ClusterInfo, clusterKubectl, fleetKubectl, ok, until } from './bed.ts';

const ns = `prop-${randomBytes(3).toString('hex')}`;
const b = bed();
const fleet = fleetKubectl(b.fleets.karmada!);
const controlPlane = clusterKubectl(b.karmadaApiserver);
const [m1, m2, m3] = b.members as [ClusterInfo, ClusterInfo, ClusterInfo];

const manifests = `apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: 'nginx:1.27'}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: ${ns}}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [${m1.name}, ${m3.name}]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [${m1.name}]}, weight: 2}
        - {targetCluster: {clusterNames: [${m3.name}]}, weight: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-${m3.name}, namespace: ${ns}}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [${m3.name}]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: '1.26'}]
`;

describe('propagation at the root, by Karmada’s own controllers', () => {
  beforeAll(async () => {
    await ok(fleet, ['apply', '-f', '-'], manifests);
  });

  afterAll(async () => {
    await controlPlane.run(['delete', 'namespace', ns, '--wait=false']);
  });

  it('the template row says where it went (weighted replicas), each copy its template, in sync after the override', async () => {
    const table = await until(
      'the root Table shows the template placed and both copies in sync',
      async () => {
        const out = await ok(fleet, ['get', 'deployments', '-n', ns]);
        const placed = tableCell(out, 'web', 'PROPAGATED TO') === `${m1.name}(2),${m3.name}(1)`;
        const synced = [m1, m3].every(
          (m) => tableCell(out, `web.clusterspace.${m.name}`, 'DRIFT') === 'InSync',
        );
        return placed && synced ? out : undefined;
      },
      180_000,
    );
    console.log(`kubectl get deployments -n ${ns}\n${table}`);
    for (const m of [m1, m3]) expect(tableCell(table, `web.clusterspace.${m.name}`, 'TEMPLATE')).toBe('web');
    expect(table).not.toContain(`web.clusterspace.${m2.name}`);
    // the override is what Karmada applied in m3: its copy runs 1.26 and is still in sync
    const copy = JSON.parse(
      await ok(clusterKubectl(m3), ['get', 'deployment', 'web', '-n', ns, '-o', 'json']),
    );
    expect(copy.spec.template.spec.containers[0].image).toBe('nginx:1.26');
    expect(copy.spec.replicas).toBe(1);
    // the labels and annotations Karmada wrote on the copy, which the fleet reads
    expect(copy.metadata.labels['resourcebinding.karmada.io/permanent-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(copy.metadata.annotations).toMatchObject({
      'resourcebinding.karmada.io/name': 'web-deployment',
      'resourcebinding.karmada.io/namespace': ns,
      'work.karmada.io/namespace': `karmada-es-${m3.name}`,
    });

    const wide = await until('the binding status aggregated', async () => {
      const out = await ok(fleet, ['get', 'deployments', '-n', ns, '-o', 'wide']);
      return tableCell(out, 'web', 'KARMADA STATUS') === 'applied 2/2, healthy 2/2' ? out : undefined;
    });
    expect(tableCell(wide, `web.clusterspace.${m1.name}`, 'KARMADA STATUS')).toBe('applied, healthy');

    // the selector the template names picks its copies, and only them
    const t = JSON.parse(await ok(fleet, ['get', 'deployment', 'web', '-n', ns, '-o', 'json']));
    const selector = t.metadata.annotations['fleet.karmada.io/copies-selector'];
    expect(selector).toBe(
      `resourcebinding.karmada.io/permanent-id=${copy.metadata.labels['resourcebinding.karmada.io/permanent-id']}`,
    );
    const names = await ok(fleet, ['get', 'deployments', '-A', '-l', selector, '-o', 'name']);
    expect(names.trim().split('\n').sort()).toEqual(
      [m1, m3].map((m) => `deployment.apps/web.clusterspace.${m.name}`).sort(),
    );
  });

  it('kubectl get -w prints one table: the watch events carry the propagation columns', async () => {
    const w = fleet.spawn(['get', 'deployments', '-n', ns, '-w']);
    const rows = (name: string) =>
      w
        .output()
        .split('\n')
        .filter((l) => l.split(/\s+/)[0] === name)
        .map((l) => l.trim().split(/\s+/));
    try {
      await w.waitFor(new RegExp(`^web\\.clusterspace\\.${m3.name}\\s`, 'm'), 60_000);
      // changed at the root until its events come (the watch opens after the list is printed)
      await until(
        'the template and its copies came as watch events',
        async () => {
          await ok(fleet, ['label', 'deployment', 'web', '-n', ns, `watched=${Date.now()}`, '--overwrite']);
          const seen = ['web', `web.clusterspace.${m1.name}`, `web.clusterspace.${m3.name}`].every(
            (n) => rows(n).length > 1,
          );
          return seen || undefined;
        },
        120_000,
      );
    } finally {
      w.stop();
    }
    const out = w.output();
    console.log(`kubectl get deployments -n ${ns} -w\n${out}`);
    expect(
      out.split('\n').filter((l) => l.startsWith('NAME')),
      out,
    ).toEqual([
      expect.stringMatching(
        /^NAME\s+CLUSTER\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+PROPAGATED TO\s+TEMPLATE\s+DRIFT\s*$/,
      ),
    ]);
    for (const r of rows('web')) expect(r.at(-1), out).toBe(`${m1.name}(2),${m3.name}(1)`);
    for (const m of [m1, m3])
      for (const r of rows(`web.clusterspace.${m.name}`)) {
        expect(r[1], out).toBe(m.name);
        expect(r.at(-2), out).toBe('web');
        expect(r.at(-1), out).toMatch(/^(InSync|Drifted|Unknown)$/);
      }
  });

  it('with dispatching suspended, a copy changed in its member is flagged Drifted; kubectl fleet diff names the field', async () => {
    await ok(fleet, [
      'patch',
      'propagationpolicy',
      'web',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"suspension":{"dispatching":true}}}',
    ]);
    await until('both Works suspended', async () => {
      const works = JSON.parse(await ok(controlPlane, ['get', 'works', '-A', '-o', 'json']));
      const mine = works.items.filter((w: any) =>
        w.spec?.workload?.manifests?.some((m: any) => m.metadata?.namespace === ns),
      );
      return mine.length === 2 && mine.every((w: any) => w.spec.suspendDispatching === true)
        ? true
        : undefined;
    });
    await ok(clusterKubectl(m1), ['set', 'image', 'deployment/web', 'web=nginx:1.25', '-n', ns]);

    const table = await until('the root Table flags the changed copy', async () => {
      const out = await ok(fleet, ['get', 'deployments', '-n', ns]);
      return tableCell(out, `web.clusterspace.${m1.name}`, 'DRIFT') === 'Drifted' ? out : undefined;
    });
    console.log(`kubectl get deployments -n ${ns}  (after the change in ${m1.name})\n${table}`);
    expect(tableCell(table, `web.clusterspace.${m3.name}`, 'DRIFT')).toBe('InSync');

    const diff = await kubectlFleet(fleet.kubeconfig, ['diff', 'deployment', 'web', '-n', ns]);
    console.log(`kubectl fleet diff deployment web -n ${ns}\n${diff.stdout}`);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toBe(
      [
        `web.clusterspace.${m1.name}\tDrifted`,
        '  spec.template.spec.containers[0].image: template "nginx:1.27", member "nginx:1.25"',
        `web.clusterspace.${m3.name}\tInSync`,
        '',
      ].join('\n'),
    );
    const d = await ok(fleet, ['describe', 'deployment', `web.clusterspace.${m1.name}`, '-n', ns]);
    expect(d).toMatch(/fleet\.karmada\.io\/drift: Drifted: spec\.template\.spec\.containers\[0\]\.image$/m);
  });
});

/**
 * Propagation of a cluster-scoped template at the fleet root in front of the real Karmada v1.18
 * (testbed/karmada.ts): a ClusterRole and a ClusterPropagationPolicy applied at the root, bound by
 * Karmada's detector with a ClusterResourceBinding and propagated by its own controllers. kubectl at the
 * root shows the template with its clusters and each copy with its template, in a list, a watch and
 * `kubectl describe`; with dispatching suspended a copy changed in its member is Drifted, and
 * `kubectl fleet diff` names the field.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlFleet, tableCell } from '../helpers/kubectl.ts';
import { bed, type ClusterInfo, clusterKubectl, fleetKubectl, ok, until } from './bed.ts';

const name = `reader-${randomBytes(3).toString('hex')}`;
const b = bed();
const fleet = fleetKubectl(b.fleets.karmada!);
const controlPlane = clusterKubectl(b.karmadaApiserver);
const [m1, m2, m3] = b.members as [ClusterInfo, ClusterInfo, ClusterInfo];

const manifests = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${name}, labels: {app: ${name}}}
rules: [{apiGroups: [''], resources: [pods], verbs: [get, list]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: ${name}}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: ${name}}]
  placement:
    clusterAffinity: {clusterNames: [${m1.name}, ${m3.name}]}
`;

const get = ['get', 'clusterroles', '-l', `app=${name}`];
const copyOf = (m: ClusterInfo) => `${name}.clusterspace.${m.name}`;

describe('a cluster-scoped template’s propagation at the root, by Karmada’s own controllers', () => {
  beforeAll(async () => {
    await ok(fleet, ['apply', '-f', '-'], manifests);
  });

  afterAll(async () => {
    await controlPlane.run(['delete', 'clusterpropagationpolicy', name, '--wait=false']);
    await controlPlane.run(['delete', 'clusterrole', name, '--wait=false']);
  });

  it('the ClusterRole row says where it went, each copy its template, in sync', async () => {
    const table = await until(
      'the root Table shows the ClusterRole placed and both copies in sync',
      async () => {
        const out = await ok(fleet, get);
        const placed = tableCell(out, name, 'PROPAGATED TO') === `${m1.name},${m3.name}`;
        const synced = [m1, m3].every((m) => tableCell(out, copyOf(m), 'DRIFT') === 'InSync');
        return placed && synced ? out : undefined;
      },
      180_000,
    );
    console.log(`kubectl get clusterroles -l app=${name}\n${table}`);
    for (const m of [m1, m3]) expect(tableCell(table, copyOf(m), 'TEMPLATE')).toBe(name);
    expect(table).not.toContain(copyOf(m2));

    // what Karmada made: a ClusterResourceBinding, matched by its spec.resource
    const crbs = JSON.parse(await ok(controlPlane, ['get', 'clusterresourcebindings', '-o', 'json']));
    const crb = crbs.items.find(
      (c: any) => c.spec.resource.kind === 'ClusterRole' && c.spec.resource.name === name,
    );
    expect(crb.spec.clusters.map((c: any) => c.name).sort()).toEqual([m1.name, m3.name].sort());
    const copy = JSON.parse(await ok(clusterKubectl(m3), ['get', 'clusterrole', name, '-o', 'json']));
    const id = copy.metadata.labels['clusterresourcebinding.karmada.io/permanent-id'];
    expect(id).toBe(crb.metadata.labels['clusterresourcebinding.karmada.io/permanent-id']);
    expect(copy.metadata.annotations).toMatchObject({
      'clusterresourcebinding.karmada.io/name': crb.metadata.name,
      'work.karmada.io/namespace': `karmada-es-${m3.name}`,
    });

    const wide = await until('the binding status aggregated', async () => {
      const out = await ok(fleet, [...get, '-o', 'wide']);
      return /^applied 2\/2, /.test(tableCell(out, name, 'KARMADA STATUS') ?? '') ? out : undefined;
    });
    console.log(`kubectl get clusterroles -l app=${name} -o wide\n${wide}`);

    // the selector the template names picks its copies, and only them
    const t = JSON.parse(await ok(fleet, ['get', 'clusterrole', name, '-o', 'json']));
    const selector = t.metadata.annotations['fleet.karmada.io/copies-selector'];
    expect(selector).toBe(`clusterresourcebinding.karmada.io/permanent-id=${id}`);
    const names = await ok(fleet, ['get', 'clusterroles', '-l', selector, '-o', 'name']);
    expect(names.trim().split('\n').sort()).toEqual(
      [m1, m3].map((m) => `clusterrole.rbac.authorization.k8s.io/${copyOf(m)}`).sort(),
    );
    const d = await ok(fleet, ['describe', 'clusterrole', name]);
    expect(d).toMatch(new RegExp(`fleet\\.karmada\\.io/propagated-to: ${m1.name},${m3.name}$`, 'm'));
    const dc = await ok(fleet, ['describe', 'clusterrole', copyOf(m1)]);
    expect(dc).toMatch(new RegExp(`fleet\\.karmada\\.io/template: ${name}$`, 'm'));
  });

  it('kubectl get -w prints one table whose rows carry the propagation cells', async () => {
    const w = fleet.spawn([...get, '-w']);
    const rows = (row: string) =>
      w
        .output()
        .split('\n')
        .filter((l) => l.split(/\s+/)[0] === row)
        .map((l) => l.trim().split(/\s+/));
    try {
      await w.waitFor(new RegExp(`^${copyOf(m3).replace(/\./g, '\\.')}\\s`, 'm'), 60_000);
      await until(
        'the template came as a watch event',
        async () => {
          await ok(fleet, ['label', 'clusterrole', name, `watched=${Date.now()}`, '--overwrite']);
          return rows(name).length > 1 || undefined;
        },
        120_000,
      );
    } finally {
      w.stop();
    }
    const out = w.output();
    console.log(`kubectl get clusterroles -l app=${name} -w\n${out}`);
    expect(
      out.split('\n').filter((l) => l.startsWith('NAME')),
      out,
    ).toEqual([expect.stringMatching(/^NAME\s+CLUSTER\s+CREATED AT\s+PROPAGATED TO\s+TEMPLATE\s+DRIFT\s*$/)]);
    for (const r of rows(name)) expect(r.at(-1), out).toBe(`${m1.name},${m3.name}`);
    for (const m of [m1, m3]) for (const r of rows(copyOf(m))) expect(r.at(-2), out).toBe(name);
  });

  it('with dispatching suspended, a copy changed in its member is Drifted; kubectl fleet diff names the field', async () => {
    await ok(fleet, [
      'patch',
      'clusterpropagationpolicy',
      name,
      '--type=merge',
      '-p',
      '{"spec":{"suspension":{"dispatching":true}}}',
    ]);
    await until('both Works suspended', async () => {
      const works = JSON.parse(await ok(controlPlane, ['get', 'works', '-A', '-o', 'json']));
      const mine = works.items.filter((w: any) =>
        w.spec?.workload?.manifests?.some((m: any) => m.kind === 'ClusterRole' && m.metadata?.name === name),
      );
      return mine.length === 2 && mine.every((w: any) => w.spec.suspendDispatching === true)
        ? true
        : undefined;
    });
    await ok(clusterKubectl(m1), [
      'patch',
      'clusterrole',
      name,
      '--type=json',
      '-p',
      '[{"op":"add","path":"/rules/0/verbs/-","value":"watch"}]',
    ]);

    const table = await until('the root Table flags the changed copy', async () => {
      const out = await ok(fleet, get);
      return tableCell(out, copyOf(m1), 'DRIFT') === 'Drifted' ? out : undefined;
    });
    console.log(`kubectl get clusterroles -l app=${name}  (after the change in ${m1.name})\n${table}`);
    expect(tableCell(table, copyOf(m3), 'DRIFT')).toBe('InSync');

    const diff = await kubectlFleet(fleet.kubeconfig, ['diff', 'clusterrole', name]);
    console.log(`kubectl fleet diff clusterrole ${name}\n${diff.stdout}`);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toBe(
      [
        `${copyOf(m1)}\tDrifted`,
        '  rules[0].verbs: template ["get","list"], member ["get","list","watch"]',
        `${copyOf(m3)}\tInSync`,
        '',
      ].join('\n'),
    );
  });
});

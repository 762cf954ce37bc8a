import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { propagate } from '../../sim/index.ts';
import { propagateClusterRole } from '../../sim/testing.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { kubectlFleet, tableCellOf } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CR = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const CPP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'clusterpropagationpolicies' };
const NAME = 'fleet-reader';
const HEADER = /^NAME\s+CLUSTER\s+CREATED AT\s+PROPAGATED TO\s+TEMPLATE\s+DRIFT\s*$/;

function seed(s: ServedSimFleet): () => void {
  const k = s.karmada;
  propagateClusterRole(k, ['member1', 'member3'], { name: NAME, labels: { app: NAME } });
  return k.timer(() => propagate(k), 100, true);
}

describe.each(RUNTIMES)('a cluster-scoped template’s propagation at the root on %s', (runtime) => {
  const f = useSimFleet(runtime, { prepare: seed });
  const k = () => f.kubectl();
  const get = ['get', 'clusterroles', '-l', `app=${NAME}`];

  beforeAll(async () => {
    await vi.waitFor(
      async () => {
        const r = await k().run(get);
        expect(r.stdout).toMatch(/fleet-reader\.clusterspace\.member3/);
      },
      { timeout: 30_000, interval: 200 },
    );
  });

  it('kubectl get: the ClusterRole says where it went, each copy its template, in sync', async () => {
    const r = await k().run(get);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(HEADER);
    expect(tableCellOf(r.stdout, NAME, 'CLUSTER')).toBe('karmada');
    expect(tableCellOf(r.stdout, NAME, 'PROPAGATED TO')).toBe('member1,member3');
    for (const m of ['member1', 'member3']) {
      expect(tableCellOf(r.stdout, `${NAME}.clusterspace.${m}`, 'TEMPLATE')).toBe(NAME);
      expect(tableCellOf(r.stdout, `${NAME}.clusterspace.${m}`, 'DRIFT')).toBe('InSync');
    }
    expect(r.stdout).not.toMatch(/clusterspace\.member2/);

    const wide = await k().run([...get, '-o', 'wide']);
    expect(tableCellOf(wide.stdout, NAME, 'KARMADA STATUS')).toBe('applied 2/2, healthy 2/2');
    const json = JSON.parse((await k().run([...get, '-o', 'json'])).stdout);
    const tmpl = json.items.find((i: any) => i.metadata.name === NAME);
    const selector = tmpl.metadata.annotations['fleet.karmada.io/copies-selector'];
    expect(selector).toMatch(/^clusterresourcebinding\.karmada\.io\/permanent-id=[0-9a-f-]{36}$/);
    // the selector the template names picks its copies, and only them
    const copies = await k().run(['get', 'clusterroles', '-l', selector, '-o', 'name']);
    expect(copies.stdout.trim().split('\n').sort()).toEqual([
      `clusterrole.rbac.authorization.k8s.io/${NAME}.clusterspace.member1`,
      `clusterrole.rbac.authorization.k8s.io/${NAME}.clusterspace.member3`,
    ]);
  });

  it('kubectl describe shows it (the GET at the root) for the template and a copy', async () => {
    const d = await k().run(['describe', 'clusterrole', NAME]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/fleet\.karmada\.io\/propagated-to: member1,member3$/m);
    expect(d.stdout).toMatch(
      /fleet\.karmada\.io\/copies-selector: clusterresourcebinding\.karmada\.io\/permanent-id=/,
    );
    const c = await k().run(['describe', 'clusterrole', `${NAME}.clusterspace.member3`]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/fleet\.karmada\.io\/template: fleet-reader$/m);
    expect(c.stdout).toMatch(/fleet\.karmada\.io\/drift: InSync$/m);
  });

  it('kubectl get -w prints one table whose rows carry the propagation cells', async () => {
    const w = k().spawn([...get, '-w']);
    try {
      await w.waitFor(/^fleet-reader\.clusterspace\.member3\s/m);
      await vi.waitFor(
        () => {
          for (const sim of [f.sims.karmada, ...f.sims.members.values()])
            expect(sim.openWatches()).toBeGreaterThan(0);
        },
        { timeout: 30_000, interval: 100 },
      );
      const tpl = f.sims.karmada.get(CR, undefined, NAME) as any;
      tpl.metadata.labels = { ...tpl.metadata.labels, watched: 'yes' };
      f.sims.karmada.update(CR, tpl);
      await vi.waitFor(
        () =>
          expect(
            w
              .output()
              .split('\n')
              .filter((l) => l.startsWith(`${NAME} `)).length,
          ).toBeGreaterThan(1),
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      w.stop();
    }
    const out = w.output();
    expect(
      out.split('\n').filter((l) => l.startsWith('NAME')),
      out,
    ).toEqual([expect.stringMatching(HEADER)]);
    for (const row of out.split('\n').filter((l) => l.startsWith(`${NAME} `)))
      expect(row.trim().split(/\s+/).at(-1), out).toBe('member1,member3');
  });

  it('a copy changed while dispatching is suspended is Drifted, and fleet diff names the field', async () => {
    const karmada = f.sims.karmada;
    const cpp = karmada.get(CPP, undefined, NAME) as any;
    karmada.update(CPP, { ...cpp, spec: { ...cpp.spec, suspension: { dispatching: true } } });
    await vi.waitFor(() => {
      const works = karmada.list({
        group: 'work.karmada.io',
        version: 'v1alpha1',
        resource: 'works',
      }) as any[];
      expect(works.filter((w) => w.metadata.name.startsWith(NAME) && w.spec?.suspendDispatching).length).toBe(
        2,
      );
    });
    const m1 = f.member('member1');
    const copy = m1.get(CR, undefined, NAME) as any;
    copy.rules[0].verbs = ['get', 'list', 'watch'];
    m1.update(CR, copy);

    const r = await k().run(get);
    expect(tableCellOf(r.stdout, `${NAME}.clusterspace.member1`, 'DRIFT')).toBe('Drifted');
    expect(tableCellOf(r.stdout, `${NAME}.clusterspace.member3`, 'DRIFT')).toBe('InSync');

    const diff = await kubectlFleet(k().kubeconfig, ['diff', 'clusterrole', NAME]);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toBe(
      [
        `${NAME}.clusterspace.member1\tDrifted`,
        '  rules[0].verbs: template ["get","list"], member ["get","list","watch"]',
        `${NAME}.clusterspace.member3\tInSync`,
        '',
      ].join('\n'),
    );
  });
});

import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { propagate } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { kubectlFleet, tableCellOf } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const NS = 'prop';
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const PP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'propagationpolicies' };
const OP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'overridepolicies' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

function seed(s: ServedSimFleet): () => void {
  const k = s.karmada;
  for (const c of [k, ...s.members.values()])
    c.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } as never);
  k.create(DEPLOY, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: NS,
      labels: { app: 'web' },
      generation: 1,
      // applied with kubectl: the record names the object, which the fleet view shows by its fleet name
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: NS } })}\n`,
      },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    },
  } as never);
  k.create(PP, {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name: 'web', namespace: NS },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      placement: {
        clusterAffinity: { clusterNames: ['member1', 'member2'] },
        replicaScheduling: {
          replicaSchedulingType: 'Divided',
          replicaDivisionPreference: 'Weighted',
          weightPreference: {
            staticWeightList: [
              { targetCluster: { clusterNames: ['member1'] }, weight: 2 },
              { targetCluster: { clusterNames: ['member2'] }, weight: 1 },
            ],
          },
        },
      },
    },
  } as never);
  k.create(OP, {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'OverridePolicy',
    metadata: { name: 'web-member2', namespace: NS },
    spec: {
      resourceSelectors: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
      overrideRules: [
        {
          targetCluster: { clusterNames: ['member2'] },
          overriders: { imageOverrider: [{ component: 'Tag', operator: 'replace', value: '1.26' }] },
        },
      ],
    },
  } as never);
  propagate(k);
  // Karmada's controllers keep at it: copies put back, statuses aggregated
  return k.timer(() => propagate(k), 100, true);
}

describe.each(RUNTIMES)('propagation at the root on %s', (runtime) => {
  const f = useSimFleet(runtime, { prepare: seed });
  const k = () => f.kubectl();

  beforeAll(async () => {
    await vi.waitFor(
      async () => {
        const r = await k().run(['get', 'deployments', '-n', NS]);
        expect(r.stdout).toMatch(/web\.clusterspace\.member2/);
      },
      { timeout: 30_000, interval: 200 },
    );
  });

  it('the template row says where it went, each copy its template, in sync after the overrides', async () => {
    const r = await k().run(['get', 'deployments', '-n', NS]);
    expect(r.code, r.stderr).toBe(0);
    const table = r.stdout;
    expect(table.split('\n')[0]).toMatch(
      /^NAME\s+CLUSTER\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+PROPAGATED TO\s+TEMPLATE\s+DRIFT\s*$/,
    );
    expect(tableCellOf(table, 'web', 'PROPAGATED TO')).toBe('member1(2),member2(1)');
    for (const m of ['member1', 'member2']) {
      expect(tableCellOf(table, `web.clusterspace.${m}`, 'CLUSTER')).toBe(m);
      expect(tableCellOf(table, `web.clusterspace.${m}`, 'TEMPLATE')).toBe('web');
      // member2 runs nginx:1.26 by the OverridePolicy: that is what Karmada applied, not drift
      expect(tableCellOf(table, `web.clusterspace.${m}`, 'DRIFT')).toBe('InSync');
    }
    expect(f.member('member2').get(DEPLOY, NS, 'web')).toMatchObject({
      spec: { replicas: 1, template: { spec: { containers: [{ image: 'nginx:1.26' }] } } },
    });
  });

  it('kubectl get -w prints one table: the watch events carry the propagation columns of the list', async () => {
    const w = k().spawn(['get', 'deployments', '-n', NS, '-w']);
    const rows = (name: string) =>
      w
        .output()
        .split('\n')
        .filter((l) => l.split(/\s+/)[0] === name)
        .map((l) => l.trim().split(/\s+/));
    try {
      await w.waitFor(/^web\.clusterspace\.member2\s/m);
      // the list is printed; the change below must come as watch events, so the watches are open first
      await vi.waitFor(
        () => {
          for (const sim of [f.sims.karmada, ...f.sims.members.values()])
            expect(sim.openWatches()).toBeGreaterThan(0);
        },
        { timeout: 30_000, interval: 100 },
      );
      const tpl = f.sims.karmada.get(DEPLOY, NS, 'web') as any;
      tpl.metadata.labels = { ...tpl.metadata.labels, watched: 'yes' };
      f.sims.karmada.update(DEPLOY, tpl);
      // the template's event, and its copies' once Karmada carries the change to them
      await vi.waitFor(
        () => {
          expect(rows('web').length).toBeGreaterThan(1);
          for (const m of ['member1', 'member2'])
            expect(rows(`web.clusterspace.${m}`).length).toBeGreaterThan(1);
        },
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      w.stop();
    }
    const out = w.output();
    expect(
      out.split('\n').filter((l) => l.startsWith('NAME')),
      out,
    ).toEqual([
      expect.stringMatching(
        /^NAME\s+CLUSTER\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+PROPAGATED TO\s+TEMPLATE\s+DRIFT\s*$/,
      ),
    ]);
    // every row, the list's and the events', ends in the propagation cells
    for (const r of rows('web')) {
      expect(r[1], out).toBe('karmada');
      expect(r.at(-1), out).toBe('member1(2),member2(1)');
    }
    for (const m of ['member1', 'member2'])
      for (const r of rows(`web.clusterspace.${m}`)) {
        expect(r[1], out).toBe(m);
        expect(r.slice(-2), out).toEqual(['web', 'InSync']);
      }
  });

  it('-o wide adds the binding status; -o json carries it as annotations', async () => {
    const wide = await k().run(['get', 'deployments', '-n', NS, '-o', 'wide']);
    expect(wide.code, wide.stderr).toBe(0);
    expect(tableCellOf(wide.stdout, 'web', 'KARMADA STATUS')).toMatch(/^applied 2\/2, healthy [0-2]\/2$/);
    const json = JSON.parse((await k().run(['get', 'deployments', '-n', NS, '-o', 'json'])).stdout);
    const byName = new Map<string, any>(json.items.map((d: any) => [d.metadata.name, d]));
    const ann = byName.get('web').metadata.annotations;
    expect(ann).toMatchObject({
      'fleet.karmada.io/propagated-to': 'member1(2),member2(1)',
      'fleet.karmada.io/propagation-status': expect.stringMatching(/^applied 2\/2, healthy [0-2]\/2$/),
    });
    const selector = ann['fleet.karmada.io/copies-selector'];
    expect(selector).toMatch(/^resourcebinding\.karmada\.io\/permanent-id=[0-9a-f-]{36}$/);
    expect(byName.get('web.clusterspace.member1').metadata.annotations).toMatchObject({
      'fleet.karmada.io/template': 'web',
      'fleet.karmada.io/drift': 'InSync',
    });

    // the selector the template names picks its copies, and only them
    const copies = await k().run(['get', 'deployments', '-A', '-l', selector, '-o', 'name']);
    expect(copies.stdout.trim().split('\n').sort()).toEqual([
      'deployment.apps/web.clusterspace.member1',
      'deployment.apps/web.clusterspace.member2',
    ]);
  });

  it('kubectl describe shows it (the GET at the root), and a template written back does not store it', async () => {
    const d = await k().run(['describe', 'deployment', 'web', '-n', NS]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/fleet\.karmada\.io\/propagated-to: member1\(2\),member2\(1\)$/m);
    expect(d.stdout).toMatch(
      /fleet\.karmada\.io\/copies-selector: resourcebinding\.karmada\.io\/permanent-id=/,
    );
    const c = await k().run(['describe', 'deployment', 'web.clusterspace.member2', '-n', NS]);
    expect(c.stdout).toMatch(/fleet\.karmada\.io\/drift: InSync$/m);
    expect(c.stdout).toMatch(/fleet\.karmada\.io\/template: web$/m);

    const got = await k().run(['get', 'deployment', 'web', '-n', NS, '-o', 'json']);
    const obj = JSON.parse(got.stdout);
    expect(obj.metadata.annotations).toHaveProperty(['fleet.karmada.io/propagated-to']);
    obj.metadata.labels.tier = 'front';
    const put = await k().run(['replace', '-f', '-'], { stdin: JSON.stringify(obj) });
    expect(put.code, put.stderr).toBe(0);
    const stored = f.sims.karmada.get(DEPLOY, NS, 'web') as any;
    expect(stored.metadata.labels.tier).toBe('front');
    expect(Object.keys(stored.metadata.annotations).filter((a) => a.startsWith('fleet.'))).toEqual([]);
    // Karmada carries the template's change to both copies (before the next test suspends dispatching)
    await vi.waitFor(() => {
      for (const m of ['member1', 'member2'])
        expect((f.member(m).get(DEPLOY, NS, 'web') as any).metadata.labels.tier).toBe('front');
    });
  });

  it('a copy changed in its member while dispatching is suspended is flagged Drifted, and fleet diff names the field', async () => {
    const karmada = f.sims.karmada;
    const pp = karmada.get(PP, NS, 'web') as any;
    karmada.update(PP, { ...pp, spec: { ...pp.spec, suspension: { dispatching: true } } });
    await vi.waitFor(() => {
      const works = karmada.list({
        group: 'work.karmada.io',
        version: 'v1alpha1',
        resource: 'works',
      }) as any[];
      expect(works.filter((w) => w.spec?.suspendDispatching).length).toBe(2);
    });
    const m1 = f.member('member1');
    const copy = m1.get(DEPLOY, NS, 'web') as any;
    copy.spec.template.spec.containers[0].image = 'nginx:1.25';
    m1.update(DEPLOY, copy);

    const r = await k().run(['get', 'deployments', '-n', NS]);
    expect(tableCellOf(r.stdout, 'web.clusterspace.member1', 'DRIFT')).toBe('Drifted');
    expect(tableCellOf(r.stdout, 'web.clusterspace.member2', 'DRIFT')).toBe('InSync');

    const diff = await kubectlFleet(k().kubeconfig, ['diff', 'deployment', 'web', '-n', NS]);
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toBe(
      [
        'web.clusterspace.member1\tDrifted',
        '  spec.template.spec.containers[0].image: template "nginx:1.27", member "nginx:1.25"',
        'web.clusterspace.member2\tInSync',
        '',
      ].join('\n'),
    );
  });

  it('the drifts endpoint refuses what it cannot answer with a Status', async () => {
    const missing = await k().run([
      'get',
      '--raw',
      `/apis/fleet.karmada.io/v1alpha1/namespaces/${NS}/drifts?apiVersion=apps/v1&kind=Deployment`,
    ]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('drifts need name');
    const none = await k().run([
      'get',
      '--raw',
      `/apis/fleet.karmada.io/v1alpha1/namespaces/${NS}/drifts?apiVersion=apps/v1&kind=Deployment&name=nope`,
    ]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/NotFound|not found/);
  });
});

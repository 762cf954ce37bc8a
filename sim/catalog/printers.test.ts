import { describe, expect, it } from 'vitest';
import { buildCatalog } from './index.ts';
import { defaultPrinter, formatLabels, PRINTERS, podPrinter, selectorString } from './printers.ts';
import table from './testdata/table_get_pod_kubectl-v1.29.3.json' with { type: 'json' };
import type { KubeObject } from './types.ts';

const now = new Date('2025-07-01T00:00:00Z');

describe('every printer gives as many cells as columns', () => {
  for (const role of ['member', 'karmada'] as const) {
    const catalog = buildCatalog({ role, crds: true, kubernetesVersion: 'v1.35.0' });
    it(`${role}: every resource has a printer with well-formed columns`, () => {
      for (const r of catalog.resources) {
        const p = r.printer!;
        expect(p, `${r.group}/${r.resource}`).toBeDefined();
        const names = p.columns.filter((c) => c.format === 'name');
        expect(names.length, `${r.resource} has one name column`).toBe(1);
        for (const c of p.columns) {
          expect(['string', 'integer', 'number', 'boolean', 'date']).toContain(c.type);
          expect([0, 1]).toContain(c.priority);
          expect(c.description.length).toBeGreaterThan(0);
        }
      }
    });
    it(`${role}: every sample object prints a full row`, () => {
      for (const cluster of role === 'karmada' ? ['karmada'] : ['member1', 'member2', 'member3']) {
        for (const s of catalog.sampleObjects(cluster)) {
          const p = catalog.find(s.group, s.version, s.resource)!.printer!;
          const cells = p.cells(s.object, now);
          expect(cells.length, `${s.resource}/${s.object.metadata.name}`).toBe(p.columns.length);
          for (const c of cells)
            expect(c === null || ['string', 'number', 'boolean'].includes(typeof c)).toBe(true);
        }
      }
    });
    it(`${role}: printers cope with a bare object`, () => {
      for (const r of catalog.resources) {
        const p = r.printer!;
        expect(p.cells({ metadata: { name: 'x' } }, now).length).toBe(p.columns.length);
      }
    });
  }
});

describe('pod printer', () => {
  const created = table.rows[0]!.object.metadata.creationTimestamp;
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'hello-world', namespace: 'default', creationTimestamp: created },
    spec: {
      containers: [{ name: 'hello-world', image: 'gcr.io/google-samples/hello-app:1.0' }],
      nodeName: 'c1-node1',
    },
    status: {
      phase: 'Running',
      podIP: '10.0.15.103',
      podIPs: [{ ip: '10.0.15.103' }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: 'hello-world',
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: created } },
        },
      ],
    },
  };
  const at = new Date(Date.parse(created) + 34 * 60_000 + 20_000);

  it('has exactly the columns of a real kube-apiserver', () => {
    expect(podPrinter.columns).toEqual(table.columnDefinitions);
  });
  it('prints the row of a real kube-apiserver', () => {
    expect(podPrinter.cells(pod, at)).toEqual(table.rows[0]!.cells);
  });

  const variant = (status: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    podPrinter.cells({ ...pod, ...extra, status: { ...(pod.status as object), ...status } }, at);

  it('shows restarts with the time of the last one', () => {
    const cells = variant({
      containerStatuses: [
        {
          name: 'hello-world',
          ready: true,
          restartCount: 2,
          state: { running: {} },
          lastState: {
            terminated: { exitCode: 1, finishedAt: new Date(at.getTime() - 5 * 60_000).toISOString() },
          },
        },
      ],
    });
    expect(cells.slice(1, 4)).toEqual(['1/1', 'Running', '2 (5m ago)']);
  });
  it('shows the waiting reason', () => {
    const cells = variant({
      containerStatuses: [
        {
          name: 'hello-world',
          ready: false,
          restartCount: 7,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
        },
      ],
    });
    expect(cells.slice(1, 4)).toEqual(['0/1', 'CrashLoopBackOff', '7']);
  });
  it('shows init progress, Terminating, Completed and pending pods', () => {
    const init = podPrinter.cells(
      {
        ...pod,
        spec: { ...(pod.spec as object), initContainers: [{ name: 'init' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'init', state: { running: {} } }],
          containerStatuses: [],
        },
      },
      at,
    );
    expect(init[2]).toBe('Init:0/1');
    const terminating = podPrinter.cells(
      { ...pod, metadata: { ...pod.metadata, deletionTimestamp: created } },
      at,
    );
    expect(terminating[2]).toBe('Terminating');
    const done = variant({
      phase: 'Succeeded',
      containerStatuses: [
        {
          name: 'hello-world',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed' } },
        },
      ],
    });
    expect(done.slice(1, 3)).toEqual(['0/1', 'Completed']);
    const pending = podPrinter.cells(
      { metadata: { name: 'p' }, spec: { containers: [{ name: 'a' }] }, status: { phase: 'Pending' } },
      at,
    );
    expect(pending).toEqual([
      'p',
      '0/1',
      'Pending',
      '0',
      '<unknown>',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });
  it('counts readiness gates', () => {
    const cells = podPrinter.cells(
      {
        ...pod,
        spec: { ...(pod.spec as object), readinessGates: [{ conditionType: 'example.com/lb' }] },
        status: { ...(pod.status as object), conditions: [{ type: 'example.com/lb', status: 'False' }] },
      },
      at,
    );
    expect(cells[8]).toBe('0/1');
  });
});

describe('other printers', () => {
  const ts = '2025-06-30T23:00:00Z';
  it('deployment', () => {
    const cells = PRINTERS['apps/deployments']!.cells(
      {
        metadata: { name: 'web', creationTimestamp: ts },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            spec: {
              containers: [
                { name: 'nginx', image: 'nginx:1.27' },
                { name: 'side', image: 'busybox' },
              ],
            },
          },
        },
        status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
      },
      now,
    );
    expect(cells).toEqual(['web', '2/3', 3, 2, '60m', 'nginx,side', 'nginx:1.27,busybox', 'app=web']);
  });
  it('service', () => {
    const cells = PRINTERS['/services']!.cells(
      {
        metadata: { name: 'lb', creationTimestamp: ts },
        spec: {
          type: 'LoadBalancer',
          clusterIP: '10.96.3.4',
          clusterIPs: ['10.96.3.4'],
          ports: [
            { port: 80, nodePort: 30080, protocol: 'TCP' },
            { port: 53, protocol: 'UDP' },
          ],
          selector: { b: '2', a: '1' },
        },
        status: { loadBalancer: {} },
      },
      now,
    );
    expect(cells).toEqual([
      'lb',
      'LoadBalancer',
      '10.96.3.4',
      '<pending>',
      '80:30080/TCP,53/UDP',
      '60m',
      'a=1,b=2',
    ]);
  });
  it('node', () => {
    const cells = PRINTERS['/nodes']!.cells(
      {
        metadata: {
          name: 'n1',
          creationTimestamp: ts,
          labels: { 'node-role.kubernetes.io/control-plane': '' },
        },
        spec: { unschedulable: true },
        status: { conditions: [{ type: 'Ready', status: 'False' }], nodeInfo: { kubeletVersion: 'v1.35.0' } },
      },
      now,
    );
    expect(cells.slice(0, 5)).toEqual([
      'n1',
      'NotReady,SchedulingDisabled',
      'control-plane',
      '60m',
      'v1.35.0',
    ]);
    expect(cells.slice(5)).toEqual(['<none>', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  });
  it('karmada cluster', () => {
    const p = PRINTERS['cluster.karmada.io/clusters']!;
    expect(p.columns.filter((c) => c.priority === 0).map((c) => c.name)).toEqual([
      'Name',
      'Version',
      'Mode',
      'Ready',
      'Age',
    ]);
    const cells = p.cells(
      {
        metadata: { name: 'member1', creationTimestamp: ts },
        spec: { syncMode: 'Push' },
        status: { kubernetesVersion: 'v1.35.0', conditions: [{ type: 'Ready', status: 'True' }] },
      },
      now,
    );
    expect(cells.slice(0, 5)).toEqual(['member1', 'v1.35.0', 'Push', 'True', '60m']);
  });
  it('widgets print like a CRD with additionalPrinterColumns', () => {
    const p = PRINTERS['example.fleet.io/widgets']!;
    expect(p.columns.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Size', 'integer'],
      ['Color', 'string'],
      ['Age', 'date'],
    ]);
    expect(
      p.cells({ metadata: { name: 'w', creationTimestamp: ts }, spec: { size: 3, color: 'red' } }, now),
    ).toEqual(['w', 3, 'red', '60m']);
    expect(p.cells({ metadata: { name: 'w' } }, now)).toEqual(['w', null, null, null]);
  });
  it('the default printer is Name and Created At', () => {
    expect(defaultPrinter.columns.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    expect(defaultPrinter.cells({ metadata: { name: 'admin', creationTimestamp: ts } }, now)).toEqual([
      'admin',
      ts,
    ]);
  });
  it('label helpers', () => {
    expect(formatLabels({})).toBe('<none>');
    expect(formatLabels({ b: '1', a: '2' })).toBe('a=2,b=1');
    expect(
      selectorString({
        matchLabels: { app: 'x' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'gone', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=x,!gone,tier in (a,b)');
  });
});

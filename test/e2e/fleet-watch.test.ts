/**
 * The merged watch with real clients, on Node and in workerd: kubectl get -w / wait / rollout status, and a
 * @kubernetes/client-node informer that must converge to exactly the union of the clusters' objects —
 * through upstream cuts, an upstream 410, a cluster restart, and a randomized run of writes and cuts.
 */
import * as k8s from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { KubeObject } from '../../sim/index.ts';
import { clientNode } from '../helpers/clientnode.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const PODS = { group: '', version: 'v1', resource: 'pods' };
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
/** how long the randomized run writes and cuts, per runtime (FLEET_SOAK_MS overrides) */
const SOAK_MS = Number(process.env.FLEET_SOAK_MS ?? 45_000);

async function until(cond: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what} not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function openUpstreamWatches(sims: ServedSimFleet): number {
  return [sims.karmada, ...sims.members.values()].reduce((n, s) => n + s.openWatches(), 0);
}

/** what the fleet should show for a namespace's configmaps: every member's, by fleet name */
function unionOf(sims: ServedSimFleet, ns: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const [name, sim] of sims.members)
    for (const o of sim.list(CM, ns))
      out.set(`${o.metadata.name}.clusterspace.${name}`, (o as { data?: { v?: string } }).data?.v);
  return out;
}

function cacheOf(informer: k8s.ObjectCache<k8s.V1ConfigMap>): Map<string, string | undefined> {
  return new Map(informer.list().map((o) => [o.metadata!.name!, o.data?.v]));
}

function sameMaps(a: Map<string, unknown>, b: Map<string, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.has(k) || b.get(k) !== v) return false;
  return true;
}

describe.each(RUNTIMES)('merged watch on %s', (runtime) => {
  const ns = `watch-${runtime}`;
  const f = useSimFleet(runtime, {
    prepare: (sims) => {
      for (const sim of [sims.karmada, ...sims.members.values()])
        sim.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: ns } });
    },
  });
  let k: Kubectl;

  beforeAll(() => {
    k = f.kubectl();
  });

  it('kubectl get pods -A -w prints ADDED/MODIFIED/DELETED rows with fleet names from three clusters', async () => {
    const w = k.spawn(['get', 'pods', '-n', ns, '-w', '--output-watch-events']);
    try {
      await until(
        () => [...f.sims.members.values()].every((s) => s.openWatches() > 0),
        30_000,
        'watches open',
      );
      for (const [name, sim] of f.sims.members) {
        sim.create(PODS, {
          metadata: { name: `p-${name}`, namespace: ns },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        });
      }
      for (const name of f.sims.members.keys())
        await w.waitFor(new RegExp(`ADDED\\s+p-${name}\\.clusterspace\\.${name}\\s+${name}\\s`));
      for (const name of f.sims.members.keys())
        await w.waitFor(
          new RegExp(`MODIFIED\\s+p-${name}\\.clusterspace\\.${name}\\s+${name}\\s+1/1\\s+Running`),
        );
      for (const [name, sim] of f.sims.members) sim.remove(PODS, ns, `p-${name}`);
      for (const name of f.sims.members.keys())
        await w.waitFor(new RegExp(`DELETED\\s+p-${name}\\.clusterspace\\.${name}\\s`));
    } finally {
      w.stop();
    }
    await until(() => openUpstreamWatches(f.sims) === 0, 30_000, 'upstream watches closed');
  });

  it('kubectl wait, rollout status and delete --wait return when the cluster makes the change', async () => {
    const m2 = f.sims.members.get('member2')!;
    m2.create(PODS, {
      metadata: { name: 'waited', namespace: ns },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const r = await k.run([
      'wait',
      '--for=condition=Ready',
      'pod/waited.clusterspace.member2',
      '-n',
      ns,
      '--timeout=30s',
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('pod/waited.clusterspace.member2 condition met');

    const dep = m2.get(DEPLOY, 'shop', 'web')!;
    const tpl = (
      dep as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> } } } }
    ).spec.template;
    tpl.metadata.annotations = {
      ...(tpl.metadata.annotations ?? {}),
      'kubectl.kubernetes.io/restartedAt': new Date().toISOString(),
    };
    m2.update(DEPLOY, dep);
    const rs = await k.run([
      'rollout',
      'status',
      'deploy/web.clusterspace.member2',
      '-n',
      'shop',
      '--timeout=60s',
    ]);
    expect(rs.stderr).toBe('');
    expect(rs.stdout).toContain('deployment "web.clusterspace.member2" successfully rolled out');

    // delete waits (a watch narrowed to the fleet name) until the cluster has removed the pod
    const del = await k.run([
      'delete',
      'pod',
      'waited.clusterspace.member2',
      '-n',
      ns,
      '--wait',
      '--timeout=30s',
    ]);
    expect(del.stderr).toBe('');
    expect(del.stdout.trim()).toBe(`pod "waited.clusterspace.member2" deleted from ${ns} namespace`);
    expect(m2.get(PODS, ns, 'waited')).toBeUndefined();
  });

  it('a client-node informer converges to the union, through cuts, a 410 and a cluster restart', async () => {
    const { kc, core } = clientNode(f.url);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const informer = k8s.makeInformer(kc, path, () => core.listNamespacedConfigMap({ namespace: ns }));
    let stopped = false;
    informer.on('error', () => {
      // as controllers do: back off and start again (but not once the test stopped it)
      if (!stopped) setTimeout(() => void (stopped || informer.start().catch(() => {})), 200);
    });
    const put = (cluster: string, name: string, v: string) => {
      const sim = f.sims.members.get(cluster)!;
      const cur = sim.get(CM, ns, name);
      if (cur) sim.update(CM, { ...cur, data: { v } } as KubeObject);
      else sim.create(CM, { metadata: { name, namespace: ns }, data: { v } });
    };
    for (const c of f.sims.members.keys()) put(c, 'seed', '0');
    await informer.start();
    const converged = (what: string) =>
      until(() => sameMaps(cacheOf(informer), unionOf(f.sims, ns)), 30_000, what);
    try {
      await converged('initial list');
      put('member1', 'a', '1');
      put('member3', 'b', '1');
      await converged('live events');

      // a cut upstream stream is resumed invisibly
      f.sims.members.get('member2')!.cutWatches();
      put('member2', 'c', '1');
      f.sims.members.get('member1')!.remove(CM, ns, 'a');
      await converged('after a cut');

      // a 410 on resume: the client gets an ERROR 410, relists, and converges
      const m3 = f.sims.members.get('member3')!;
      put('member3', 'b', '2');
      m3.compact();
      put('member3', 'd', '1');
      m3.cutWatches();
      await converged('after a 410');

      // one cluster restarts: down, changes while down, back
      m3.faults.down = true;
      m3.cutWatches();
      m3.remove(CM, ns, 'd');
      put('member3', 'e', '1');
      await new Promise((r) => setTimeout(r, 300));
      m3.faults.down = false;
      await converged('after a restart');
    } finally {
      stopped = true;
      await informer.stop();
    }
    await until(
      () => openUpstreamWatches(f.sims) === 0,
      30_000,
      'upstream watches closed after the informer stopped',
    );
  });

  it(
    'random writes and cuts in every cluster: the informer ends equal to the clusters, nothing lost',
    async () => {
      const { kc, core } = clientNode(f.url);
      const space = `${ns}-soak`;
      for (const sim of [f.sims.karmada, ...f.sims.members.values()])
        sim.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: space } });
      const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${space}/configmaps`, () =>
        core.listNamespacedConfigMap({ namespace: space }),
      );
      let stopped = false;
      informer.on('error', () => {
        if (!stopped) setTimeout(() => void (stopped || informer.start().catch(() => {})), 200);
      });
      await informer.start();
      // deterministic pseudo-random sequence: a failure can be replayed
      let seed = 20261129;
      const rnd = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const clusters = [...f.sims.members.keys()];
      const deadline = Date.now() + SOAK_MS;
      let ops = 0;
      try {
        while (Date.now() < deadline) {
          const sim = f.sims.members.get(clusters[rnd(clusters.length)]!)!;
          const name = `o${rnd(25)}`;
          const cur = sim.get(CM, space, name);
          const op = rnd(10);
          if (op < 4) {
            if (cur) sim.update(CM, { ...cur, data: { v: String(ops) } } as KubeObject);
            else sim.create(CM, { metadata: { name, namespace: space }, data: { v: String(ops) } });
          } else if (op < 7) {
            if (cur) sim.remove(CM, space, name);
          } else if (op < 8) {
            sim.cutWatches();
          }
          ops++;
          if (ops % 20 === 0) await new Promise((r) => setTimeout(r, 15));
        }
        await until(
          () => sameMaps(cacheOf(informer), unionOf(f.sims, space)),
          30_000,
          `informer equal to the clusters after ${ops} operations`,
        );
      } finally {
        stopped = true;
        await informer.stop();
      }
      expect(ops).toBeGreaterThan(200);
    },
    SOAK_MS + 60_000,
  );

  it('every event carries a decimal composite RV; a watch from another fleet’s RV gets a 410 ERROR', async () => {
    const res = await fetch(
      `${f.url}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=1999999999012345`,
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    const ev = JSON.parse(text.trim().split('\n')[0]!) as {
      type: string;
      object: { code: number; reason: string };
    };
    expect(ev.type).toBe('ERROR');
    expect(ev.object.code).toBe(410);
    expect(ev.object.reason).toBe('Expired');
  });

  it('WatchList: every cluster’s initial objects, then exactly one initial-events-end bookmark', async () => {
    const ac = new AbortController();
    const res = await fetch(
      `${f.url}/api/v1/namespaces/shop/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      { signal: ac.signal },
    );
    expect(res.status).toBe(200);
    const want = new Set(
      [...f.sims.members].flatMap(([c, s]) =>
        s.list(PODS, 'shop').map((p) => `${p.metadata.name}.clusterspace.${c}`),
      ),
    );
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    const added = new Set<string>();
    let bookmarks = 0;
    let endRV = '';
    while (!endRV) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value);
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const ev = JSON.parse(buf.slice(0, nl)) as {
          type: string;
          object: { metadata: Record<string, any> };
        };
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
        expect(ev.object.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
        if (ev.type === 'ADDED') {
          expect(endRV).toBe('');
          added.add(ev.object.metadata.name);
        }
        if (
          ev.type === 'BOOKMARK' &&
          ev.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true'
        ) {
          bookmarks++;
          endRV = ev.object.metadata.resourceVersion;
        }
      }
    }
    ac.abort();
    expect(bookmarks).toBe(1);
    expect(added).toEqual(want);
  });
});

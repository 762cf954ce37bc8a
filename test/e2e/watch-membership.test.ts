/**
 * A merged watch while the fleet's membership changes (Karmada Cluster objects added and removed), on
 * Node and in workerd, watched by a @kubernetes/client-node informer as a controller would:
 * - a cluster that joins streams its objects as ADDED into the running watch (no relist, no reconnect),
 *   and its later changes follow;
 * - a cluster that leaves ends the watch with a 410, so the informer relists and drops that cluster's
 *   objects (DELETE callbacks);
 * - a resourceVersion minted before a change gets a 410 (relist), never a resume that misses events, and
 *   the bookmark after the joined cluster's objects carries an RV that resumes.
 */
import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { type KubeObject, SimCluster } from '../../sim/index.ts';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { CM } from '../faults/scenario.ts';
import { clientNode } from '../helpers/clientnode.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const NS = { group: '', version: 'v1', resource: 'namespaces' };
const JOINED = 'fleet.karmada.io/watch-joined';

describe.each(RUNTIMES)('merged watch across membership changes on %s', (runtime) => {
  const f = useSimFleet(runtime, { sims: { seed: false } });

  function seed(sim: SimCluster, ns: string, name: string, v = '1'): void {
    if (!sim.get(NS, '', ns)) sim.create(NS, { metadata: { name: ns } });
    sim.create(CM, { metadata: { name, namespace: ns }, data: { v } } as KubeObject);
  }

  it('an informer sees a joined cluster as ADDED in its running watch and a left one as DELETED', async () => {
    const ns = `wm-${runtime}`;
    const { karmada, members } = f.sims;
    for (const [name, sim] of members) seed(sim, ns, `cm-${name}`);
    const { kc, core } = clientNode(f.url);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const seen: string[] = [];
    let connects = 0;
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}:${o.data?.v}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    informer.on('connect', () => connects++);
    informer.on('error', () => {});
    await informer.start();
    const names = () =>
      informer
        .list(ns)
        .map((o) => o.metadata?.name)
        .sort();
    try {
      await until(() => names().length === 3, 20_000, 'the initial list');
      const connectsBefore = connects;

      const member4 = new SimCluster({ name: 'member4', seed: false });
      seed(member4, ns, 'cm-member4-a');
      seed(member4, ns, 'cm-member4-b');
      karmada.addMember('member4', member4);
      await until(() => names().includes('cm-member4-b.clusterspace.member4'), 30_000, 'member4 objects');
      expect(seen.filter((s) => s.includes('member4'))).toEqual([
        'add cm-member4-a.clusterspace.member4',
        'add cm-member4-b.clusterspace.member4',
      ]);
      // the joined cluster's later changes, and the other clusters', flow through the same watch
      member4.update(CM, { ...member4.get(CM, ns, 'cm-member4-a')!, data: { v: '2' } } as KubeObject);
      const m1 = members.get('member1')!;
      m1.update(CM, { ...m1.get(CM, ns, 'cm-member1')!, data: { v: '2' } } as KubeObject);
      await until(
        () =>
          seen.includes('update cm-member4-a.clusterspace.member4:2') &&
          seen.includes('update cm-member1.clusterspace.member1:2'),
        20_000,
        'updates after the join',
      );
      expect(connects).toBe(connectsBefore);
      expect(seen.filter((s) => s.startsWith('delete'))).toEqual([]);

      karmada.removeMember('member2');
      await until(() => !names().includes('cm-member2.clusterspace.member2'), 30_000, 'member2 dropped');
      expect(seen).toContain('delete cm-member2.clusterspace.member2');
      expect(names()).toEqual([
        'cm-member1.clusterspace.member1',
        'cm-member3.clusterspace.member3',
        'cm-member4-a.clusterspace.member4',
        'cm-member4-b.clusterspace.member4',
      ]);
      // nothing else was dropped on the way
      expect(seen.filter((s) => s.startsWith('delete'))).toEqual(['delete cm-member2.clusterspace.member2']);
    } finally {
      await informer.stop();
    }
  });

  it('an RV from before a change gets 410; the bookmark after the joined objects resumes', async () => {
    const ns = `wm-rv-${runtime}`;
    const { karmada, members } = f.sims;
    for (const [name, sim] of members) seed(sim, ns, `cm-${name}`);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const w = await openWatch(`${f.url}${path}?watch=true&allowWatchBookmarks=true`);
    try {
      await until(() => w.events.filter((e) => e.type === 'ADDED').length >= members.size, 20_000, 'start');
      const before = w.events.at(-1)!.object.metadata!.resourceVersion!;
      const member5 = new SimCluster({ name: 'member5', seed: false });
      seed(member5, ns, 'cm-member5');
      karmada.addMember('member5', member5);
      await until(
        () => w.events.some((e) => e.object.metadata?.annotations?.[JOINED] === 'member5'),
        30_000,
        'the joined bookmark',
      );
      const added = w.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata!.name);
      expect(added).toContain('cm-member5.clusterspace.member5');
      const joined = w.events.find((e) => e.object.metadata?.annotations?.[JOINED] === 'member5')!;
      expect(joined.type).toBe('BOOKMARK');
      // resume from before the change: 410, the client relists
      const old = await openWatch(`${f.url}${path}?watch=true&resourceVersion=${before}`);
      await until(() => old.events.length > 0, 20_000, 'the old resume');
      expect(old.events[0]).toMatchObject({ type: 'ERROR', object: { code: 410 } });
      old.close();
      // resume from the bookmark: a change made after it arrives, nothing before it again
      const rv = joined.object.metadata!.resourceVersion!;
      const again = await openWatch(`${f.url}${path}?watch=true&resourceVersion=${rv}`);
      member5.update(CM, { ...member5.get(CM, ns, 'cm-member5')!, data: { v: '9' } } as KubeObject);
      await until(() => again.events.length > 0, 20_000, 'the resumed watch');
      expect(again.events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual([
        'MODIFIED cm-member5.clusterspace.member5',
      ]);
      again.close();
    } finally {
      w.close();
      karmada.removeMember('member5');
    }
  });
});

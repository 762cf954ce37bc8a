/**
 * The merged watch through the fault proxy, on Node and in workerd: a member's stream cut on live events
 * is resumed invisibly (every object once), and so is one cut during the initial events of a member the
 * list (and so the client's RV) left out. Rows of issue 11 that the fleet does not hold yet are kept in
 * test/faults/pending/ until the watch is fixed.
 */
import { describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { added, duplicates, fleetNames, putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

describe.each(RUNTIMES)('merged watch through faults on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  it.each([
    ['cut (FIN)', { kind: 'cutAfterEvents', events: 1 }],
    ['RST', { kind: 'rstAfterEvents', events: 1 }],
    ['an ERROR 500 event', { kind: 'statusAfterEvents', events: 1, code: 500 }],
  ] as const)(
    'a live watch %s after 1 event resumes: every later object exactly once',
    async (what, fault) => {
      const ns = `fw-live-${runtime}-${what.replace(/\W/g, '').toLowerCase()}`;
      seedNamespace(ff, ns, { member1: 1, member2: 1, member3: 1 });
      const list = (await (await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
        metadata: { resourceVersion: string };
      };
      const rule = ff.cluster('member2').on({ query: { watch: true } }, fault);
      const w = await openWatch(
        `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
      );
      try {
        expect(w.status).toBe(200);
        await until(
          () =>
            ff
              .cluster('member2')
              .requests()
              .some((r) => r.query.get('watch')),
          20_000,
          'member2 watch',
        );
        for (let i = 0; i < 3; i++) putCm(ff, 'member2', ns, `live-${i}`);
        putCm(ff, 'member1', ns, 'live-m1');
        const want = [0, 1, 2]
          .map((i) => `live-${i}.clusterspace.member2`)
          .concat('live-m1.clusterspace.member1');
        await until(() => want.every((n) => added(w).includes(n)), 30_000, `live objects (got ${added(w)})`);
        // one more after the resume, so a late duplicate would have had time to show
        putCm(ff, 'member2', ns, 'after');
        await until(() => added(w).includes('after.clusterspace.member2'), 30_000, 'object after the resume');
        expect(rule.applied).toBe(1);
        expect(duplicates(added(w))).toEqual({});
        expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
        expect(w.ended).toBe(false);
      } finally {
        w.close();
      }
    },
  );

  it('a member refusing its watch for a while: the other members stream on, the member catches up', async () => {
    const ns = `fw-refuse-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const names = await fleetNames(ff, ns);
    const rule = ff.cluster('member2').on({ query: { watch: true } }, { kind: 'refuse' }, { times: 3 });
    const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true`);
    try {
      putCm(ff, 'member1', ns, 'during');
      await until(() => added(w).includes('during.clusterspace.member1'), 30_000, 'member1 event');
      await until(() => rule.applied === 3, 30_000, 'three refusals');
      putCm(ff, 'member2', ns, 'later');
      await until(() => added(w).includes('later.clusterspace.member2'), 30_000, 'member2 caught up');
      for (const n of names) expect(added(w)).toContain(n);
    } finally {
      w.close();
    }
  });
  // the soak's finding: a list that left member2 out gives a composite RV with no entry for it, so the
  // watch from that RV starts member2 from its current state (ADDED in key order, not RV order); a cut
  // during those must not resume from the last RV seen
  it('a watch from a list that left a member out: that member cut during its initial events, every object once', async () => {
    const ns = `fw-leftout-${runtime}`;
    seedNamespace(ff, ns, { member1: 2, member2: 4 });
    const names = await fleetNames(ff, ns);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    ff.cluster('member2').on({ path, query: { watch: false } }, { kind: 'rst' }, { times: 2 });
    const res = await fetch(`${ff.url}${path}`);
    const list = (await res.json()) as { metadata: { resourceVersion: string }; items: unknown[] };
    expect(res.headers.get('warning') ?? '', 'member2 left out, with a Warning').toMatch(/member2/);
    expect(list.items.length).toBe(2);
    const rule = ff
      .cluster('member2')
      .on({ path, query: { watch: true } }, { kind: 'cutAfterEvents', events: 1 });
    const w = await openWatch(
      `${ff.url}${path}?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
    );
    try {
      const member2 = names.filter((n) => n.endsWith('.clusterspace.member2'));
      await until(
        () => member2.every((n) => added(w).includes(n)),
        30_000,
        `member2's objects (got ${added(w)})`,
      );
      expect(rule.applied).toBe(1);
      // one more, so that a late duplicate would have had time to show
      putCm(ff, 'member2', ns, 'after');
      await until(() => added(w).includes('after.clusterspace.member2'), 30_000, 'object after the resume');
      expect(duplicates(added(w))).toEqual({});
      expect(
        added(w).filter((n) => n.endsWith('.clusterspace.member1')),
        'member1 from its RV: nothing old',
      ).toEqual([]);
      expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    } finally {
      w.close();
    }
  });
});

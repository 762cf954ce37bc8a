/**
 * The merged watch through the fault proxy, on Node and in workerd: a member's stream cut on live events
 * is resumed invisibly (every object once). Rows of issue 11 that the fleet does not hold yet are kept in
 * test/faults/pending/ until the watch is fixed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { type FaultFleet, startFaultFleet, until } from '../faults/fleet.ts';
import { added, duplicates, fleetNames, putCm, seedNamespace } from '../faults/scenario.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

describe.each(RUNTIMES)('merged watch through faults on %s', (runtime) => {
  let ff: FaultFleet;
  beforeAll(async () => {
    ff = await startFaultFleet(runtime);
  });
  afterEach(() => ff.reset());
  afterAll(async () => {
    await ff?.stop();
  });

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
});

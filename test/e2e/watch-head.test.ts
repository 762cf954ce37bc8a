/**
 * The merged watch's head goes out shortly after the first member answered 200, not when the slowest
 * did (issue 33, watches): a member whose watch head is held back (the fault proxy's stall) does not
 * hold back the fast members' events; when it then fails (its 2 s timeout), a client taking bookmarks
 * is told by the fleet's watch-unavailable notice and /metrics counts it; once back, it joins the stream.
 * On Node and in workerd.
 */
import { describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { added, putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

const UNAVAILABLE = 'fleet.karmada.io/watch-unavailable';

describe.each(RUNTIMES)('merged watch head with a slow member on %s', (runtime) => {
  // a 2 s member timeout: the stalled member's watch fails within the test, after the head went out
  const ff = useFaultFleet(runtime, { memberEndpoint: { timeoutSeconds: 2 } });

  it('a fast member’s event arrives before the slow member answers; its later failure is a notice', async () => {
    const ns = `wh-slow-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1, member3: 1 });
    const list = (await (await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
      metadata: { resourceVersion: string };
    };
    const partialBefore = await partialCount(ff.url, 'member2');
    // member2's first watch: no byte of its head, the socket open (its timeout fails it)
    const rule = ff
      .cluster('member2')
      .on({ query: { watch: true } }, { kind: 'stall', phase: 'headers', bytes: 0 });
    const w = await openWatch(
      `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
    );
    try {
      expect(w.status).toBe(200);
      // the head came while member2's watch had not answered: no Warning could name it yet
      expect(rule.applied).toBe(1);
      expect(w.headers.get('warning')).toBeNull();
      putCm(ff, 'member1', ns, 'fast');
      await until(() => added(w).includes('fast.clusterspace.member1'), 20_000, 'member1 event');
      // member2 has not failed yet (the notice comes only from its failure): the event went first
      const noticeAt = () =>
        w.events.findIndex(
          (e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.[UNAVAILABLE]?.includes('member2'),
        );
      const fastAt = w.events.findIndex((e) => e.object.metadata?.name === 'fast.clusterspace.member1');
      await until(
        () => noticeAt() >= 0,
        20_000,
        `member2's watch-unavailable notice (got ${JSON.stringify(w.events)})`,
      );
      expect(fastAt).toBeLessThan(noticeAt());
      expect(w.events[noticeAt()]!.object.metadata!.annotations![UNAVAILABLE]).toMatch(
        /^cluster member2: timed out/,
      );
      // counted as a merged answer without member2
      expect(await partialCount(ff.url, 'member2')).toBe(partialBefore + 1);
      // back (the stall was for one watch): member2 joins the stream
      putCm(ff, 'member2', ns, 'late');
      await until(() => added(w).includes('late.clusterspace.member2'), 30_000, 'member2 joined');
      expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
      expect(w.ended).toBe(false);
    } finally {
      w.close();
    }
  });

  it('a client without bookmarks gets the fast member’s events and no bookmark line', async () => {
    const ns = `wh-plain-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const list = (await (await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
      metadata: { resourceVersion: string };
    };
    ff.cluster('member2').on({ query: { watch: true } }, { kind: 'stall', phase: 'headers', bytes: 0 });
    const w = await openWatch(
      `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
    );
    try {
      expect(w.status).toBe(200);
      // the head did not wait for member2's failure: a Warning would have named it
      expect(w.headers.get('warning')).toBeNull();
      putCm(ff, 'member1', ns, 'fast');
      await until(() => added(w).includes('fast.clusterspace.member1'), 20_000, 'member1 event');
      putCm(ff, 'member2', ns, 'late');
      await until(() => added(w).includes('late.clusterspace.member2'), 30_000, 'member2 joined');
      expect(w.events.filter((e) => e.type !== 'ADDED')).toEqual([]);
    } finally {
      w.close();
    }
  });
});

describe.each(RUNTIMES)('merged WatchList with a slow member on %s', (runtime) => {
  const ff = useFaultFleet(runtime, { memberEndpoint: { timeoutSeconds: 2 } });

  it('one initial-events-end, after the fast members’ objects and the slow member’s failure', async () => {
    const ns = `wh-wl-${runtime}`;
    seedNamespace(ff, ns, { member1: 2, member2: 2, member3: 2 });
    ff.cluster('member2').on({ query: { watch: true } }, { kind: 'stall', phase: 'headers', bytes: 0 });
    const w = await openWatch(
      `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
    );
    try {
      expect(w.status).toBe(200);
      expect(w.headers.get('warning')).toBeNull();
      const isEnd = (e: (typeof w.events)[number]) =>
        e.type === 'BOOKMARK' && e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true';
      await until(() => w.events.some(isEnd), 20_000, 'initial-events-end');
      const endAt = w.events.findIndex(isEnd);
      const before = added(w).filter((_, i) => i < endAt);
      for (const m of ['member1', 'member3'])
        expect(before.filter((n) => n.endsWith(`.clusterspace.${m}`))).toHaveLength(2);
      // member2 is back after its failure: its objects follow, and no second end
      await until(
        () => added(w).filter((n) => n.endsWith('.clusterspace.member2')).length === 2,
        30_000,
        'member2 objects',
      );
      expect(w.events.filter(isEnd)).toHaveLength(1);
      expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    } finally {
      w.close();
    }
  });
});

/** fleet_partial_responses_total{cluster} as /metrics says it (0 when absent) */
async function partialCount(url: string, cluster: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^fleet_partial_responses_total\\{cluster="${cluster}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

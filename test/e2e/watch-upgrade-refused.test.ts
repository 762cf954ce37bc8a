/**
 * The fleet asks some plain watches of a cluster as WatchLists of its own accord (src/watch/plan.ts): from
 * RV "" or "0", and for a cluster that a composite RV has no entry for (the list it came from left that
 * cluster out), so that the end of the cluster's initial events is known. A cluster that refuses that form
 * (an older kube-apiserver, or the WatchList gate off: a 4xx naming sendInitialEvents) is asked the plain
 * watch the client asked, and the client is not warned about the fleet's own choice; when the plain watch
 * fails too, that failure is the cluster's own and gets its Warning, as any failed start does. Through the
 * fault proxy, on Node and in workerd; `kubectl get -w` shows what a user sees.
 */
import { describe, expect, it } from 'vitest';
import { UNAVAILABLE_ANNOTATION } from '../../src/watch/event.ts';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { added, fleetNames, putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

const REFUSAL = 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';

describe.each(RUNTIMES)('a cluster that refuses the fleet’s own WatchList, on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  const refuseWatchList = () =>
    ff
      .cluster('member2')
      .on(
        { query: { watch: true, sendInitialEvents: 'true' } },
        { kind: 'status', code: 422, message: REFUSAL },
        { times: Number.POSITIVE_INFINITY },
      );

  /** a list that leaves member2 out (its list is reset twice): the composite RV has no entry for it */
  async function listWithoutMember2(ns: string): Promise<string> {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    ff.cluster('member2').on({ path, query: { watch: false } }, { kind: 'rst' }, { times: 2 });
    const res = await fetch(`${ff.url}${path}`);
    expect(res.headers.get('warning') ?? '', 'member2 left out of the list').toMatch(/member2/);
    return ((await res.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  }

  it('a watch from a composite RV without member2: member2 refuses the WatchList form, no Warning, its objects come', async () => {
    const ns = `wur-composite-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 2 });
    const names = await fleetNames(ff, ns);
    const rv = await listWithoutMember2(ns);
    const rule = refuseWatchList();
    const w = await openWatch(
      `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${encodeURIComponent(rv)}`,
    );
    try {
      expect(w.status).toBe(200);
      expect(w.headers.get('warning'), 'the fleet’s own WatchList is no client’s concern').toBeNull();
      const member2 = names.filter((n) => n.endsWith('.clusterspace.member2'));
      await until(() => w.ended || member2.every((n) => added(w).includes(n)), 20_000, "member2's objects");
      expect(w.ended).toBe(false);
      expect(rule.applied).toBeGreaterThanOrEqual(1);
      // member2 went on with the plain watch from ""
      const plain = ff
        .cluster('member2')
        .requests()
        .filter((r) => r.query.get('watch') === 'true' && r.query.get('sendInitialEvents') === null);
      expect(plain.length).toBeGreaterThanOrEqual(1);
      putCm(ff, 'member2', ns, 'later');
      await until(() => added(w).includes('later.clusterspace.member2'), 20_000, 'a new object of member2');
    } finally {
      w.close();
    }
  });

  it('kubectl get -w after a list that left member2 out: the list’s Warning only, never the WatchList refusal', async () => {
    const ns = `wur-kubectl-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    // kubectl's list only (its pages of 500), not the one-row Table probe of the watch's columns
    ff.cluster('member2').on({ path, query: { watch: false, limit: '500' } }, { kind: 'rst' }, { times: 2 });
    refuseWatchList();
    const k = new Kubectl(ff.url);
    const run = k.spawn(['get', 'configmaps', '-n', ns, '-w']);
    try {
      await run.waitFor(/cm-member1-0\.clusterspace\.member1/);
      // the list left member2 out: its object comes from the watch
      await run.waitFor(/cm-member2-0\.clusterspace\.member2/, 30_000);
      const out = run.output();
      expect(out).toMatch(/Warning: .*member2/);
      expect(out).not.toContain('sendInitialEvents');
    } finally {
      run.stop();
    }
  });

  it.each([
    ['from RV ""', () => Promise.resolve('')],
    ['from a composite RV without member2', (ns: string) => listWithoutMember2(ns)],
  ] as const)(
    '%s: when member2 refuses the plain watch too, that failure is warned about',
    async (what, rvOf) => {
      const ns = `wur-real-${runtime}-${what.length}`;
      seedNamespace(ff, ns, { member1: 1, member2: 1 });
      const rv = await rvOf(ns);
      ff.cluster('member2').on(
        { query: { watch: true } },
        { kind: 'status', code: 400, message: 'simulated: this watch is refused' },
        { times: Number.POSITIVE_INFINITY },
      );
      const w = await openWatch(
        `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&allowWatchBookmarks=true${rv ? `&resourceVersion=${encodeURIComponent(rv)}` : ''}`,
      );
      try {
        expect(w.status).toBe(200);
        // the head goes out at the first 200 (src/watch/start.ts HEAD_GRACE_MS): member2's refusal, two
        // answers in, is its Warning when it came before member1's 200, else a notice to bookmark takers
        const refused = /cluster member2: simulated: this watch is refused/;
        if (!refused.test(w.headers.get('warning') ?? '')) {
          // a notice goes in a bookmark, which needs the objects' kind: an event of member1's first
          putCm(ff, 'member1', ns, 'kind');
          await until(
            () =>
              w.events.some(
                (e) =>
                  e.type === 'BOOKMARK' &&
                  refused.test(e.object.metadata?.annotations?.[UNAVAILABLE_ANNOTATION] ?? ''),
              ),
            20_000,
            'member2 refusal as a notice',
          );
        }
      } finally {
        w.close();
      }
    },
  );
});

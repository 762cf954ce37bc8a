/**
 * The merged watch's own fault handling, through the fault proxy on Node and in workerd, beyond the
 * issue's rows (faults-rows-watch.test.ts): what changes between a cut during initial events and the
 * restarted snapshot reaches the client as MODIFIED/DELETED, exactly once; a WatchList whose member cannot
 * be held still ends its initial phase and says which member; a cluster that refuses the WatchList form of
 * a plain watch still serves it; and the clusters' bookmarks reach the client one merged bookmark at a time.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { openWatch, type WatchReader } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { CM, fleetNames, nameOf, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

const INITIAL_END = 'k8s.io/initial-events-end';
const UNAVAILABLE = 'fleet.karmada.io/watch-unavailable';
const WATCHLIST =
  'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

const isEnd = (e: WatchReader['events'][number]) =>
  e.type === 'BOOKMARK' && e.object.metadata?.annotations?.[INITIAL_END] === 'true';

/** the client's view after applying every event: name → data.v, and how often each name was ADDED */
function applied(w: WatchReader) {
  const view = new Map<string, string | undefined>();
  const adds = new Map<string, number>();
  for (const e of w.events) {
    const name = nameOf(e);
    const v = (e.object as { data?: { v?: string } }).data?.v;
    if (e.type === 'ADDED') adds.set(name, (adds.get(name) ?? 0) + 1);
    if (e.type === 'ADDED' || e.type === 'MODIFIED') view.set(name, v);
    if (e.type === 'DELETED') view.delete(name);
  }
  return { view, twice: [...adds].filter(([, n]) => n > 1).map(([k]) => k) };
}

describe.each(RUNTIMES)('merged watch faults on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  /** what member2's namespace holds now, as the fleet names it */
  const member2View = (ns: string) =>
    new Map(
      ff.sims.members
        .get('member2')!
        .list(CM, ns)
        .map((o) => [`${o.metadata.name}.clusterspace.member2`, (o as { data?: { v?: string } }).data?.v]),
    );

  it.each([
    ['WatchList', WATCHLIST],
    ['watch from RV ""', 'watch=true'],
  ])(
    '%s: changes between a cut during initial events and the new snapshot arrive, once',
    async (what, query) => {
      const ns = `wf-snap-${runtime}-${what.length}`;
      seedNamespace(ff, ns, { member2: 5 });
      const m2 = ff.sims.members.get('member2')!;
      const tap = ff.cluster('member2');
      // between the cut and the restarted watch: one object sent goes, one sent changes, one not sent changes
      // (this rule comes first and never applies, so it sees every watch request)
      let watches = 0;
      tap.on(
        {
          query: { watch: true },
          when: () => {
            if (++watches === 2) {
              m2.remove(CM, ns, 'cm-member2-0');
              m2.update(CM, { ...m2.get(CM, ns, 'cm-member2-1')!, data: { v: 'changed' } } as KubeObject);
              m2.update(CM, { ...m2.get(CM, ns, 'cm-member2-4')!, data: { v: 'changed too' } } as KubeObject);
            }
            return false;
          },
        },
        { kind: 'refuse' },
      );
      const cut = tap.on({ query: { watch: true } }, { kind: 'cutAfterEvents', events: 2 });
      const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?${query}`);
      try {
        const want = member2View(ns);
        expect(want.size).toBe(5);
        await until(() => cut.applied === 1 && watches >= 2, 20_000, 'the cut and the restart');
        const settled = () => {
          const v = applied(w).view;
          const now = member2View(ns);
          return v.size === now.size && [...now].every(([k, x]) => v.get(k) === x);
        };
        await until(() => w.ended || settled(), 20_000, 'the client view equals member2').catch(() => {});
        const { view, twice } = applied(w);
        expect(Object.fromEntries(view)).toEqual(Object.fromEntries(member2View(ns)));
        expect(twice, 'ADDED twice').toEqual([]);
        expect(view.has('cm-member2-0.clusterspace.member2')).toBe(false);
        if (query === WATCHLIST) {
          await until(() => w.events.some(isEnd), 20_000, 'initial-events-end').catch(() => {});
          expect(w.events.filter(isEnd)).toHaveLength(1);
          // the corrections belong to the initial state: before the bookmark
          const at = w.events.findIndex(isEnd);
          expect(w.events.slice(0, at).some((e) => e.type === 'DELETED')).toBe(true);
        } else {
          expect(w.events.some((e) => e.type === 'BOOKMARK')).toBe(false);
        }
        expect(w.ended).toBe(false);
      } finally {
        w.close();
      }
    },
  );

  it('WatchList: a member that cannot be held is not waited for, and the client is told which', async () => {
    const ns = `wf-unheld-${runtime}`;
    seedNamespace(ff, ns, { member1: 2, member2: 2 });
    const names = await fleetNames(ff, ns);
    const rule = ff
      .cluster('member2')
      .on({ query: { watch: true } }, { kind: 'eofAfterHeaders' }, { times: Number.POSITIVE_INFINITY });
    const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?${WATCHLIST}`);
    try {
      await until(() => w.ended || w.events.some(isEnd), 20_000, 'initial-events-end');
      const notice = () =>
        w.events.find((e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.[UNAVAILABLE]);
      await until(() => w.ended || !!notice(), 20_000, 'the notice');
      expect(notice()!.object.metadata!.annotations![UNAVAILABLE]).toMatch(/member2/);
      expect(w.events.filter(isEnd)).toHaveLength(1);
      // member1's objects came; member2 is retried, with backoff, and joins when it is back
      const m1 = names.filter((n) => n.endsWith('.member1'));
      expect(m1.every((n) => w.events.some((e) => e.type === 'ADDED' && nameOf(e) === n))).toBe(true);
      rule.remove();
      await until(
        () => names.every((n) => w.events.some((e) => e.type === 'ADDED' && nameOf(e) === n)),
        20_000,
        'member2 joins',
      );
      expect(w.ended).toBe(false);
    } finally {
      w.close();
    }
  });

  it('a plain watch from RV "" on a member that refuses the WatchList form: the plain watch, no Warning', async () => {
    const ns = `wf-legacy-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 3 });
    const names = await fleetNames(ff, ns);
    const tap = ff.cluster('member2');
    tap.on(
      { query: { watch: true, sendInitialEvents: 'true' } },
      {
        kind: 'status',
        code: 400,
        message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      },
      { times: Number.POSITIVE_INFINITY },
    );
    const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true`);
    try {
      expect(w.status).toBe(200);
      expect(w.headers.get('warning')).toBeNull();
      await until(
        () => w.ended || names.every((n) => w.events.some((e) => e.type === 'ADDED' && nameOf(e) === n)),
        20_000,
        'every object',
      );
      expect(applied(w).twice).toEqual([]);
      const plain = tap
        .requests()
        .filter((r) => r.query.get('watch') === 'true' && r.query.get('sendInitialEvents') === null);
      expect(plain.length).toBeGreaterThanOrEqual(1);
    } finally {
      w.close();
    }
  });

  it('after the initial phase, one merged bookmark at a time, not one per cluster', async () => {
    const ns = `wf-bookmarks-${runtime}`;
    seedNamespace(ff, ns, { karmada: 1, member1: 1, member2: 1, member3: 1 });
    const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?${WATCHLIST}`);
    try {
      await until(() => w.ended || w.events.some(isEnd), 20_000, 'initial-events-end');
      const from = w.events.length;
      const t0 = Date.now();
      // every cluster bookmarks every second (the simulator's interval): four a second unmerged
      await new Promise((r) => setTimeout(r, 4_000));
      const seconds = (Date.now() - t0) / 1000;
      const bookmarks = w.events.slice(from).filter((e) => e.type === 'BOOKMARK');
      expect(bookmarks.length, 'bookmarks still come').toBeGreaterThanOrEqual(1);
      expect(bookmarks.length / seconds, 'merged bookmarks per second').toBeLessThanOrEqual(1.5);
      // each carries the stream's composite RV, never behind the one before
      const rvs = bookmarks.map((b) => BigInt(b.object.metadata!.resourceVersion!));
      for (let i = 1; i < rvs.length; i++) expect(rvs[i]! >= rvs[i - 1]!).toBe(true);
    } finally {
      w.close();
    }
  });
});

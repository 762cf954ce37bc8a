/**
 * Issue 11, watch rows, through the fault proxy on Node and in workerd: what the client receives when a
 * member's watch is cut during its initial events, when a member's watch opens and ends at once or sends
 * what is not JSON, and when timeoutSeconds is past a timer's range.
 */
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import type { Runtime } from '../../helpers/fleet.ts';
import { openWatch } from '../client.ts';
import type { Fault } from '../faults.ts';
import { type FaultFleet, startFaultFleet, until } from '../fleet.ts';
import { added, duplicates, fleetNames, putCm, seedNamespace, settleWatch } from '../scenario.ts';
import { selector } from './select.ts';

const INITIAL_END = 'k8s.io/initial-events-end';
const WATCHLIST =
  'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

export function describeWatchRows(runtime: Runtime, ids: readonly string[]): void {
  const t = selector(ids);
  describe(`issue 11 watch rows on ${runtime}`, () => {
    let ff: FaultFleet;
    beforeAll(async () => {
      ff = await startFaultFleet(runtime);
    });
    afterEach(() => ff.reset());
    afterAll(async () => {
      await ff?.stop();
    });

    const cuts: Array<[string, Fault]> = [
      ['cut after 1 of 4 initial events', { kind: 'cutAfterEvents', events: 1 }],
      ['RST after 2 of 4 initial events', { kind: 'rstAfterEvents', events: 2 }],
    ];

    // row 1, RV "": initial ADDED events come in key order, not RV order
    t('row1-rv0').each(cuts)('row 1 (watch, RV ""): %s: every object exactly once', async (what, fault) => {
      const ns = `r1-${runtime}-${what.slice(0, 3)}`;
      seedNamespace(ff, ns, { member1: 1, member2: 4, member3: 1 });
      const names = await fleetNames(ff, ns);
      const rule = ff.cluster('member2').on({ query: { watch: true } }, fault);
      const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true`);
      try {
        const got = await settleWatch(ff, w, ns, names);
        expect(rule.applied).toBe(1);
        expect({ duplicates: duplicates(got), missing: names.filter((n) => !got.includes(n)) }).toEqual({
          duplicates: {},
          missing: [],
        });
        expect(w.ended).toBe(false);
      } finally {
        w.close();
      }
    });

    // row 1, WatchList: the initial-events-end bookmark must come, after every initial object, once each
    t('row1-watchlist').each(cuts)(
      'row 1 (WatchList): %s: every object once, then the bookmark',
      async (what, fault) => {
        const ns = `r1wl-${runtime}-${what.slice(0, 3)}`;
        seedNamespace(ff, ns, { member1: 1, member2: 4, member3: 1 });
        const names = await fleetNames(ff, ns);
        const rule = ff.cluster('member2').on({ query: { watch: true } }, fault);
        const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?${WATCHLIST}`);
        try {
          const end = () =>
            w.events.findIndex(
              (e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.[INITIAL_END] === 'true',
            );
          await until(() => w.ended || end() >= 0, 20_000, 'the initial-events-end bookmark').catch(() => {});
          const got = await settleWatch(ff, w, ns, names);
          expect(rule.applied).toBe(1);
          expect({ duplicates: duplicates(got), missing: names.filter((n) => !got.includes(n)) }).toEqual({
            duplicates: {},
            missing: [],
          });
          const at = end();
          expect(at, 'initial-events-end bookmark').toBeGreaterThanOrEqual(0);
          const initialAfter = w.events
            .slice(at)
            .filter((e) => e.type === 'ADDED' && names.includes(e.object.metadata?.name ?? ''));
          expect(initialAfter, 'initial objects after the bookmark').toEqual([]);
        } finally {
          w.close();
        }
      },
    );

    // row 4: a stream that opens and ends at once (or is not JSON) must be retried with backoff
    // the client takes bookmarks, as informers do: cluster notices come as BOOKMARKs only to such clients
    t('row4').each([
      ['200 then EOF', { kind: 'eofAfterHeaders' }],
      ['not JSON', { kind: 'garbage', where: 'body', bytes: '<html>bad gateway</html>\n' }],
    ] as Array<[string, Fault]>)(
      'row 4: a member watch that answers %s: reconnects bounded, the client is told',
      async (_what, fault) => {
        const ns = `r4-${runtime}-${fault.kind}`;
        seedNamespace(ff, ns, { member1: 1, member2: 1 });
        const list = (await (await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
          metadata: { resourceVersion: string };
        };
        const rule = ff
          .cluster('member2')
          .on({ query: { watch: true } }, fault, { times: Number.POSITIVE_INFINITY });
        const w = await openWatch(
          `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
        );
        try {
          await until(() => rule.applied >= 1, 20_000, 'first member2 watch');
          const t0 = Date.now();
          const n0 = rule.applied;
          // the rate has to be measured over a window: 3 s of a broken member
          await new Promise((r) => setTimeout(r, 3000));
          const perSecond = ((rule.applied - n0) * 1000) / (Date.now() - t0);
          putCm(ff, 'member1', ns, 'still');
          await until(() => added(w).includes('still.clusterspace.member1'), 20_000, 'member1 still streams');
          expect(perSecond, 'member2 watch reconnects per second').toBeLessThanOrEqual(5);
          const told =
            (w.headers.get('warning') ?? '').includes('member2') ||
            w.events.some(
              (e) => (e.type === 'ERROR' || e.type === 'BOOKMARK') && JSON.stringify(e).includes('member2'),
            );
          expect(told, 'client told that member2 cannot be held').toBe(true);
        } finally {
          w.close();
        }
      },
    );

    // row 9: timeoutSeconds past 2^31-1 ms must not fire at once
    t('row9')('row 9: watch=1&timeoutSeconds=2147484 stays open and delivers', async () => {
      const ns = `r9-${runtime}`;
      seedNamespace(ff, ns, { member1: 1 });
      const w = await openWatch(
        `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=2147484`,
      );
      try {
        expect(w.status).toBe(200);
        await until(() => added(w).length > 0 || w.ended, 20_000, 'initial events');
        // "not ended" can only be seen over time: 2 s is 50× the 40 ms it lasted
        await new Promise((r) => setTimeout(r, 2000));
        expect(w.ended, 'watch ended early').toBe(false);
        putCm(ff, 'member1', ns, 'late');
        await until(() => added(w).includes('late.clusterspace.member1') || w.ended, 20_000, 'late event');
        expect(added(w)).toContain('late.clusterspace.member1');
      } finally {
        w.close();
      }
    });
  });
}

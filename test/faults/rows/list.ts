/**
 * Issue 11, list rows, through the fault proxy on Node and in workerd: a merged list whose member stalls
 * or is cut mid-body must answer in bounded time with the complete item set or an error the client sees
 * (never a 200 whose item set is silently short), with and without gzip; a 4xx without a Status body
 * from every cluster stays a 4xx.
 */
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import type { Runtime } from '../../helpers/fleet.ts';
import { getWhole, itemNames, type Whole } from '../client.ts';
import type { Fault } from '../faults.ts';
import { type FaultFleet, startFaultFleet } from '../fleet.ts';
import { fleetNames, seedNamespace } from '../scenario.ts';
import { selector } from './select.ts';

/** the client either got everything or could tell it did not */
function completeOrError(r: Whole, names: string[]): void {
  const got = r.complete && r.status === 200 ? itemNames(r.text) : undefined;
  // otherwise the client can tell: a non-2xx, or a body that visibly did not end (aborted framing,
  // broken gzip, not a JSON list)
  expect(r.status, 'answered').not.toBe(0);
  if (got) expect(got, 'a 200 list that parses must hold every item').toEqual(names);
}

export function describeListRows(runtime: Runtime, ids: readonly string[]): void {
  const t = selector(ids);
  describe(`issue 11 list rows on ${runtime}`, () => {
    let ff: FaultFleet;
    const ns = `r2-${runtime}`;
    let names: string[];
    let member2Bytes: number;
    beforeAll(async () => {
      ff = await startFaultFleet(runtime);
      // long enough that a cut in the middle of member2's body lands between items
      seedNamespace(ff, ns, { member1: 5, member2: 30, member3: 5 }, 200);
      names = await fleetNames(ff, ns);
      member2Bytes = (
        await (await fetch(`${ff.sims.memberUrls.get('member2')}/api/v1/namespaces/${ns}/configmaps`)).text()
      ).length;
    });
    afterEach(() => ff.reset());
    afterAll(async () => {
      await ff?.stop();
    });

    const listFault = (fault: Fault) =>
      ff
        .cluster('member2')
        .on({ path: `/api/v1/namespaces/${ns}/configmaps`, query: { watch: false } }, fault);

    // row 2: headers and a few bytes, then silence: the timeout must cover the body too
    t('row2').each([
      ['identity', {}],
      ['gzip', { 'Accept-Encoding': 'gzip' }],
    ] as Array<[string, Record<string, string>]>)(
      'row 2: member2 stalls after headers and 20 body bytes (%s): answered within 30 s, complete or an error',
      async (_e, headers) => {
        const rule = listFault({ kind: 'stall', phase: 'body', bytes: 20 });
        const r = await getWhole(
          `${ff.url}/api/v1/namespaces/${ns}/configmaps`,
          { Accept: 'application/json', ...headers },
          32_000,
        );
        expect(rule.applied).toBe(1);
        expect(r.ms, 'answered before kubectl gives up (32 s)').toBeLessThan(30_000);
        expect(r.status, 'the response started').not.toBe(0);
        completeOrError(r, names);
      },
    );

    // row 3: a clean FIN in the middle of member2's body
    for (const [enc, headers] of [
      ['identity', {}],
      ['gzip', { 'Accept-Encoding': 'gzip' }],
    ] as Array<[string, Record<string, string>]>)
      t(`row3-${enc}`)(
        `row 3: member2 cuts its list body mid-stream (${enc}): complete or an error, never a short 200`,
        async () => {
          const rule = listFault({ kind: 'cut', phase: 'body', bytes: Math.floor(member2Bytes / 2) });
          const r = await getWhole(`${ff.url}/api/v1/namespaces/${ns}/configmaps`, {
            Accept: 'application/json',
            ...headers,
          });
          expect(rule.applied).toBe(1);
          expect(r.status, 'not a 500').not.toBe(500);
          completeOrError(r, names);
        },
      );

    // row 3's edge: headers, then EOF before any body byte; the member's body never started, so it is left
    // out with a Warning as for a failure before headers (not a 500 for everyone)
    t('row3-eof-after-headers')(
      'row 3: member2 answers 200 then EOF before its body: left out with a Warning naming it',
      async () => {
        listFault({ kind: 'eofAfterHeaders' });
        const r = await getWhole(`${ff.url}/api/v1/namespaces/${ns}/configmaps`, {
          Accept: 'application/json',
        });
        const got = itemNames(r.text);
        expect(r.status).toBe(200);
        expect(String(r.headers.warning ?? '')).toMatch(/member2/);
        expect(got).toEqual(names.filter((n) => !n.endsWith('.clusterspace.member2')));
      },
    );

    // row 10: every cluster answers 431 with no body
    t('row10')(
      'row 10: every cluster answers a 4xx without a Status body: the client gets a 4xx Status',
      async () => {
        const path = `/api/v1/namespaces/${ns}/configmaps`;
        for (const c of ['karmada', ...ff.sims.members.keys()])
          ff.cluster(c).on(
            { path, query: { watch: false } },
            { kind: 'status', code: 431, body: null },
            { times: Number.POSITIVE_INFINITY },
          );
        const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json' });
        expect(r.status, 'a 4xx').toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(JSON.parse(r.text)).toMatchObject({ kind: 'Status', status: 'Failure', code: r.status });
      },
    );
  });
}

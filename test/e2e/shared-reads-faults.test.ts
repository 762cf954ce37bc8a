/**
 * Shared reads through the fault proxy, on Node and in workerd: concurrent identical `resourceVersion=0`
 * lists share one upstream call per cluster (src/upstreams/coalesce.ts). When that one call's body is cut
 * or stalls, every client that joined it must get the complete list or an error it can see (a broken
 * body, a non-2xx), never a 200 whose item set is short.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getWhole, itemNames, type Whole } from '../faults/client.ts';
import type { Fault } from '../faults/faults.ts';
import { type FaultFleet, startFaultFleet } from '../faults/fleet.ts';
import { fleetNames, seedNamespace } from '../faults/scenario.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

const CLIENTS = 8;

describe.each(RUNTIMES)('shared reads through faults on %s', (runtime) => {
  let ff: FaultFleet;
  const ns = `sr-faults-${runtime}`;
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  let names: string[];
  let member2Bytes: number;
  beforeAll(async () => {
    // a short body-idle timeout, so the stall is noticed well within the test
    ff = await startFaultFleet(runtime, { config: { timeouts: { requestSeconds: 30, bodyIdleSeconds: 2 } } });
    seedNamespace(ff, ns, { member1: 5, member2: 30, member3: 5 }, 200);
    names = await fleetNames(ff, ns);
    member2Bytes = (
      await (await fetch(`${ff.sims.memberUrls.get('member2')}${path}?resourceVersion=0`)).text()
    ).length;
  });
  afterEach(() => {
    ff.reset();
    ff.sims.members.get('member2')!.faults.latencyMs = 0;
  });
  afterAll(async () => {
    await ff?.stop();
  });

  /** CLIENTS identical RV=0 lists at once, member2's shared call faulted; each answer as the client saw it */
  async function sharedListWith(fault: Fault): Promise<{ answers: Whole[]; shared: number }> {
    // member2 answers its headers late, so every client arrives while the one call is in flight
    ff.sims.members.get('member2')!.faults.latencyMs = 800;
    const rule = ff.cluster('member2').on({ path, query: { watch: false, resourceVersion: '0' } }, fault);
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        getWhole(`${ff.url}${path}?resourceVersion=0`, { Accept: 'application/json' }, 40_000),
      ),
    );
    expect(rule.applied, 'the fault hit the shared call').toBe(1);
    const shared = ff
      .cluster('member2')
      .requests()
      .filter((r) => r.path === path && r.query.get('resourceVersion') === '0').length;
    return { answers, shared };
  }

  function completeOrError(r: Whole): 'complete' | 'error' {
    expect(r.status, 'answered').not.toBe(0);
    const got = r.complete && r.status === 200 ? itemNames(r.text) : undefined;
    if (!got) return 'error';
    expect(got, `a 200 list that parses holds every item (${r.headers.warning ?? 'no Warning'})`).toEqual(
      names,
    );
    return 'complete';
  }

  it('the shared call is cut mid-body: every waiting client gets the whole list or an error', async () => {
    const { answers, shared } = await sharedListWith({
      kind: 'cut',
      phase: 'body',
      bytes: Math.floor(member2Bytes / 2),
    });
    expect(shared, 'the clients shared member2’s RV=0 call').toBeLessThan(CLIENTS);
    const outcomes = answers.map(completeOrError);
    // the fleet reads member2 again at the RV it was served at: nobody needs to see the cut
    expect(outcomes.filter((o) => o === 'complete').length).toBeGreaterThan(0);
  }, 90_000);

  it('the shared call stalls mid-body: every waiting client gets the whole list or an error, in bounded time', async () => {
    const t0 = Date.now();
    const { answers, shared } = await sharedListWith({
      kind: 'stall',
      phase: 'body',
      bytes: Math.floor(member2Bytes / 3),
    });
    expect(shared, 'the clients shared member2’s RV=0 call').toBeLessThan(CLIENTS);
    for (const r of answers) completeOrError(r);
    expect(Date.now() - t0, 'answered before kubectl gives up (32 s)').toBeLessThan(30_000);
  }, 90_000);
});

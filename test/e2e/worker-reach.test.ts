/**
 * How far one request reaches in workerd (docs/deployment.md "How many clusters one request reaches"):
 * a fan-out wider than the connection budget is asked through relays one level deep, and a request
 * spanning more clusters than `maxClustersPerRequest` is refused with a Status naming the setting. Small
 * numbers (8 members, a budget of 2, a limit of 7) stand for Workers' 6 and the default 1,000.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { connectionBudget } from '../helpers/budget.ts';
import { type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

const MEMBERS = Array.from({ length: 8 }, (_, i) => `member${i + 1}`);
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** fleet_relay_groups_total{mode} as /metrics says it (0 when absent) */
async function relayGroups(url: string, mode: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^fleet_relay_groups_total\\{mode="${mode}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('how many clusters one request reaches, in workerd', () => {
  let sims: ServedSimFleet;
  const fleets: RunningFleet[] = [];
  beforeAll(async () => {
    sims = await startSimFleet({ members: MEMBERS });
  });
  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    await sims?.close();
  });

  it('asks 8 clusters with a budget of 2 through 4 relays, all from the first invocation', async () => {
    const budget = connectionBudget(2);
    const fleet = await startFleet(
      'workerd',
      sims.staticConfig({ federation: false, maxConnectionsPerRequest: 2 }),
      { outbound: budget.outbound },
    );
    fleets.push(fleet);
    const res = await fetch(`${fleet.url}/api/v1/pods`, { headers: { Accept: TABLE } });
    expect(res.status).toBe(200);
    expect(res.headers.get('warning')).toBeNull();
    const body = (await res.json()) as { rows: Array<{ cells: string[] }> };
    expect(new Set(body.rows.map((r) => r.cells[1]))).toEqual(new Set(MEMBERS));
    expect(budget.refused()).toBe(0);
    // one level: 4 groups of 2, no relay asking further relays (a tree would count its inner groups too)
    expect(await relayGroups(fleet.url, 'list')).toBe(4);
  });

  it('refuses a list and a watch spanning more than maxClustersPerRequest with a 503 Status naming it', async () => {
    const fleet = await startFleet(
      'workerd',
      sims.staticConfig({ federation: false, maxClustersPerRequest: 7 }),
    );
    fleets.push(fleet);
    for (const q of ['', '?watch=true']) {
      const res = await fetch(`${fleet.url}/api/v1/namespaces/default/configmaps${q}`);
      expect(res.status).toBe(503);
      const status = (await res.json()) as { kind: string; reason: string; code: number; message: string };
      expect(status).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
      expect(status.message).toMatch(/spans 8 clusters.*at most 7 clusters.*maxClustersPerRequest/);
      expect(res.headers.get('retry-after')).toBeNull();
    }
    // nothing was asked of any cluster: no watch was opened anywhere
    expect(MEMBERS.every((m) => sims.members.get(m)!.openWatches() === 0)).toBe(true);
    // one cluster's clusterspace is within reach
    const one = await fetch(`${fleet.url}/clusterspaces/member3/api/v1/namespaces/default/configmaps`);
    expect(one.status).toBe(200);
    // what kubectl shows: discovery reads the clusters within reach (one Warning), the list says why not
    const k = await new Kubectl(fleet.url).run(['get', 'configmaps', '-A']);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toMatch(/Warning: cluster member8: not asked.*maxClustersPerRequest/);
    expect(k.stderr).toMatch(
      /Error from server \(ServiceUnavailable\): this request spans 8 clusters.*maxClustersPerRequest/,
    );
    const member = await new Kubectl(`${fleet.url}/clusterspaces/member3`).run(['get', 'configmaps', '-A']);
    expect(member.stderr).toBe('');
    expect(member.code).toBe(0);
  });
});

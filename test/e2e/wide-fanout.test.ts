/**
 * Workers allow a request 6 simultaneous outgoing connections. A merged list over 12 clusters must still
 * reach all 12 in workerd: the fleet splits the fan-out into groups asked through its own relay
 * entrypoint. The harness refuses any 7th simultaneous connection of one invocation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { connectionBudget } from '../helpers/budget.ts';
import { type RunningFleet, startFleet } from '../helpers/fleet.ts';

const MEMBERS = Array.from({ length: 12 }, (_, i) => `member${i + 1}`);
const PODS = { group: '', version: 'v1', resource: 'pods' };

describe('a fan-out wider than the connection budget, in workerd', () => {
  let sims: ServedSimFleet;
  beforeAll(async () => {
    sims = await startSimFleet({ members: MEMBERS });
  });
  afterAll(async () => {
    await sims?.close();
  });

  async function list(fleet: RunningFleet, query = '') {
    const res = await fetch(`${fleet.url}/api/v1/pods${query}`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    const body = (await res.json()) as { rows: Array<{ cells: string[] }> };
    return { res, clusters: new Set(body.rows.map((r) => r.cells[1])), rows: body.rows.length };
  }

  it('reaches all 12 clusters through relays, never holding a 7th connection', async () => {
    const budget = connectionBudget(6);
    const fleet = await startFleet('workerd', sims.staticConfig({ federation: false }), {
      outbound: budget.outbound,
    });
    try {
      const { res, clusters, rows } = await list(fleet);
      expect(res.status).toBe(200);
      expect(res.headers.get('warning')).toBeNull();
      expect([...clusters].sort()).toEqual([...MEMBERS].sort());
      const want = MEMBERS.reduce((n, m) => n + sims.members.get(m)!.list(PODS).length, 0);
      expect(rows).toBe(want);
      expect(budget.refused()).toBe(0);
      expect(budget.maxSeen()).toBeLessThanOrEqual(6);
      // the upstream requests came from more than one invocation: the groups
      expect([...budget.invocations().keys()].filter((k) => k !== 'untagged').length).toBeGreaterThanOrEqual(
        2,
      );
      // paging across the groups still walks every cluster exactly once
      const seen: string[] = [];
      let cont = '';
      for (let i = 0; i < 100; i++) {
        const r = await fetch(`${fleet.url}/api/v1/pods?limit=7${cont ? `&continue=${cont}` : ''}`);
        const b = (await r.json()) as {
          items: Array<{ metadata: { name: string } }>;
          metadata: { continue?: string };
        };
        seen.push(...b.items.map((x) => x.metadata.name));
        if (!b.metadata.continue) break;
        cont = b.metadata.continue;
      }
      expect(seen.length).toBe(want);
      expect(new Set(seen).size).toBe(want);
      expect(budget.refused()).toBe(0);
    } finally {
      await fleet.stop();
    }
  });

  it('the harness is real: without splitting, the 7th connection is refused and clusters go missing', async () => {
    const budget = connectionBudget(6);
    const fleet = await startFleet(
      'workerd',
      sims.staticConfig({ federation: false, maxConnectionsPerRequest: 100 }),
      {
        outbound: budget.outbound,
      },
    );
    try {
      const { res, clusters } = await list(fleet);
      expect(budget.refused()).toBeGreaterThan(0);
      expect(clusters.size).toBeLessThan(12);
      expect(res.headers.get('warning')).toContain('cluster member');
    } finally {
      await fleet.stop();
    }
  });
});

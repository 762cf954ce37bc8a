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
      // and /metrics counts them: 12 clusters, a budget of 6, two groups a list
      expect(await relayGroups(fleet.url, 'list')).toBeGreaterThanOrEqual(2);
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

  it('the harness is real: an unsplit merged watch over 12 clusters wants a 7th connection, and is refused', async () => {
    // watches hold their connections for as long as they run: without the split, one request would hold 12
    const budget = connectionBudget(6);
    const fleet = await startFleet(
      'workerd',
      sims.staticConfig({
        federation: false,
        maxConnectionsPerRequest: 100,
        timeouts: { requestSeconds: 2 },
      }),
      { outbound: budget.outbound },
    );
    const ac = new AbortController();
    try {
      const res = await fetch(
        `${fleet.url}/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true`,
        { signal: ac.signal },
      );
      expect(res.status).toBe(200);
      // a refusal before the head is in its Warning; one after it (the head goes out at the first 200:
      // HEAD_GRACE_MS, so the 7th connection may not even be asked for yet) is a watch-unavailable
      // notice in the stream
      const refusal = /cluster member\d+: HTTP 599/;
      let seen = res.headers.get('warning') ?? '';
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const deadline = Date.now() + 20_000;
      while (!refusal.test(seen) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value, { stream: true });
      }
      expect(seen).toMatch(refusal);
      expect(budget.refused()).toBeGreaterThan(0);
    } finally {
      ac.abort();
      await fleet.stop();
    }
  });
});

describe('a merged watch wider than the connection budget, in workerd', () => {
  it('delivers changes from all 12 clusters through group watches, never holding a 7th connection', async () => {
    const sims = await startSimFleet({ members: MEMBERS });
    const budget = connectionBudget(6);
    const fleet = await startFleet('workerd', sims.staticConfig({ federation: false }), {
      outbound: budget.outbound,
    });
    const CM = { group: '', version: 'v1', resource: 'configmaps' };
    const ac = new AbortController();
    try {
      const list = (await (await fetch(`${fleet.url}/api/v1/namespaces/default/configmaps`)).json()) as {
        metadata: { resourceVersion: string };
      };
      const res = await fetch(
        `${fleet.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
        { signal: ac.signal },
      );
      expect(res.status).toBe(200);
      const seen = new Set<string>();
      const rvs: string[] = [];
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      let buf = '';
      const reading = (async () => {
        while (seen.size < MEMBERS.length) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let nl = buf.indexOf('\n');
          while (nl >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            nl = buf.indexOf('\n');
            if (!line) continue;
            const ev = JSON.parse(line) as {
              type: string;
              object: { metadata: { name: string; resourceVersion: string } };
            };
            if (ev.type === 'ADDED' && ev.object.metadata.name.startsWith('wide-')) {
              seen.add(ev.object.metadata.name);
              rvs.push(ev.object.metadata.resourceVersion);
            }
          }
        }
      })();
      // wait until every member has its upstream watch open, then change each one
      const end = Date.now() + 30_000;
      while (MEMBERS.some((m) => sims.members.get(m)!.openWatches() === 0)) {
        if (Date.now() > end) throw new Error('not every member is watched');
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const m of MEMBERS)
        sims.members.get(m)!.create(CM, { metadata: { name: `wide-${m}`, namespace: 'default' } });
      await Promise.race([
        reading,
        new Promise((_, rej) => setTimeout(() => rej(new Error(`saw only ${[...seen]}`)), 30_000)),
      ]);
      expect([...seen].sort()).toEqual(MEMBERS.map((m) => `wide-${m}.clusterspace.${m}`).sort());
      // every event's composite RV is decimal and never goes down
      for (const rv of rvs) expect(rv).toMatch(/^[1-9][0-9]*$/);
      for (let i = 1; i < rvs.length; i++)
        expect(
          rvs[i]!.length > rvs[i - 1]!.length ||
            (rvs[i]!.length === rvs[i - 1]!.length && rvs[i]! >= rvs[i - 1]!),
        ).toBe(true);
      expect(budget.refused()).toBe(0);
      expect(budget.maxSeen()).toBeLessThanOrEqual(6);
      expect(await relayGroups(fleet.url, 'watch')).toBe(2);
    } finally {
      ac.abort();
      await fleet.stop();
      await sims.close();
    }
  });
});

/** fleet_relay_groups_total{mode} as /metrics says it (0 when absent) */
async function relayGroups(url: string, mode: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^fleet_relay_groups_total\\{mode="${mode}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

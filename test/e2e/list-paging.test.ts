/**
 * Paging a merged list walks the clusters with a composite continue token: whatever the page size and
 * whatever changes between pages, the pages together hold exactly the objects each cluster had at the
 * RV the walk started with — none lost, none repeated.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inProcessFleet } from '../helpers/inprocess.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe('merged list paging', () => {
  it('returns every object exactly once at the starting RVs, with writes between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 12 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.constantFrom('create', 'delete', 'update'), { maxLength: 6 }),
        async (counts, limit, writes) => {
          const names = counts.map((_, i) => `m${i + 1}`);
          const f = inProcessFleet({ members: names, seed: false });
          for (const [i, n] of counts.entries()) {
            const sim = f.members.get(names[i]!)!;
            sim.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'p' } });
            for (let k = 0; k < n; k++)
              sim.create(CM, { metadata: { name: `cm-${k}`, namespace: 'p' }, data: { k: String(k) } });
          }
          f.karmada.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'p' } });
          const want = [
            ...names.flatMap((n) =>
              f.members
                .get(n)!
                .list(CM, 'p')
                .map((o) => `${o.metadata.name}.clusterspace.${n}`),
            ),
          ].sort();
          const got: string[] = [];
          let cont = '';
          let w = 0;
          for (let page = 0; page < 200; page++) {
            const r = await f.fetch(
              `/api/v1/namespaces/p/configmaps?limit=${limit}${cont ? `&continue=${cont}` : ''}`,
            );
            expect(r.status).toBe(200);
            const body = (await r.json()) as {
              items: Array<{ metadata: { name: string } }>;
              metadata: { continue?: string; resourceVersion: string };
            };
            expect(body.items.length).toBeLessThanOrEqual(limit);
            expect(body.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
            got.push(...body.items.map((i) => i.metadata.name));
            // the clusters change between pages
            const op = writes[w++];
            const sim = f.members.get(names[page % names.length]!)!;
            if (op === 'create') sim.create(CM, { metadata: { name: `new-${page}`, namespace: 'p' } });
            if (op === 'delete') {
              const victim = sim.list(CM, 'p')[0];
              if (victim) sim.remove(CM, 'p', victim.metadata.name!);
            }
            if (op === 'update') {
              const o = sim.list(CM, 'p')[0];
              if (o) sim.update(CM, { ...o, data: { changed: 'yes' } });
            }
            if (!body.metadata.continue) break;
            cont = body.metadata.continue;
          }
          expect(got.sort()).toEqual(want);
          for (const sim of f.members.values()) sim.close();
          f.karmada.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a continue token that is not the fleet’s with 400, and one from another fleet with 410', async () => {
    const a = inProcessFleet({ members: ['m1', 'm2'] });
    const b = inProcessFleet({ members: ['m1', 'm3'] });
    const r1 = await a.fetch('/api/v1/configmaps?continue=garbage');
    expect(r1.status).toBe(400);
    expect(((await r1.json()) as { kind: string }).kind).toBe('Status');
    const page = (await (await a.fetch('/api/v1/configmaps?limit=1')).json()) as {
      metadata: { continue: string };
    };
    const r2 = await b.fetch(`/api/v1/configmaps?limit=1&continue=${page.metadata.continue}`);
    expect(r2.status).toBe(410);
    expect(((await r2.json()) as { reason: string }).reason).toBe('Expired');
  });

  it('answers 410 for a composite resourceVersion of another fleet and a tampered one', async () => {
    const a = inProcessFleet({ members: ['m1', 'm2'] });
    const b = inProcessFleet({ members: ['m1', 'm3'] });
    const rv = (
      (await (await a.fetch('/api/v1/configmaps')).json()) as { metadata: { resourceVersion: string } }
    ).metadata.resourceVersion;
    for (const bad of [rv, `${rv}9`, '12345', 'abc']) {
      const r = await b.fetch(`/api/v1/configmaps?resourceVersion=${bad}&resourceVersionMatch=NotOlderThan`);
      expect(r.status).toBe(410);
    }
    // and the right fleet takes it back
    expect(
      (await a.fetch(`/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`)).status,
    ).toBe(200);
  });
});

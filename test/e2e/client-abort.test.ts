/**
 * Clients that leave mid-answer: 50 merged lists aborted, some before the clusters answered (the route
 * still waiting on them), some once the body had begun. Nothing went wrong on the fleet's side: no
 * `unhandled error` line in the log, and /metrics counts none of them as a 500 (kube-apiserver counts a
 * request its client abandoned by the code it had, never as its own failure). On Node and in workerd.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = { group: '', version: 'v1', resource: 'namespaces' };
const ABORTS = 50;

/** the LIST series of `name` whose labels include `with_` (e.g. `code="500"`), summed */
async function sum(url: string, name: string, with_ = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) && line.includes('verb="LIST"') && line.includes(with_))
      n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

describe.each(RUNTIMES)('clients that leave mid-answer on %s', (runtime) => {
  const ns = `gone-${runtime}`;
  const f = useSimFleet(runtime, {
    prepare: (sims) => {
      for (const [name, sim] of sims.members) {
        sim.create(NS, { metadata: { name: ns } } as KubeObject);
        for (let i = 0; i < 400; i++)
          sim.create(CM, {
            metadata: { name: `cm-${name}-${i}`, namespace: ns },
            data: { pad: 'x'.repeat(2000) },
          } as KubeObject);
      }
    },
  });

  let logged: string[] = [];
  const spies: Array<{ mockRestore(): void }> = [];
  beforeEach(() => {
    logged = [];
    const keep = (...a: unknown[]) => {
      logged.push(a.map((x) => (x instanceof Error ? `${x.message}` : String(x))).join(' '));
    };
    for (const m of ['error', 'warn', 'log'] as const)
      spies.push(vi.spyOn(console, m).mockImplementation(keep));
    for (const s of [process.stdout, process.stderr])
      spies.push(
        vi.spyOn(s, 'write').mockImplementation(((chunk: unknown) => {
          logged.push(String(chunk));
          return true;
        }) as never),
      );
  });
  afterEach(() => {
    for (const s of spies.splice(0)) s.mockRestore();
  });

  it('no unhandled-error line and no 500 counted for 50 aborted lists', async () => {
    const before = await sum(f.url, 'apiserver_request_total', 'code="500"');
    const abortsBefore = await sum(f.url, 'apiserver_request_aborts_total');
    // member3 answers late: half the clients leave while the route still waits on it
    f.member('member3').faults.latencyMs = 400;
    try {
      await Promise.all(
        Array.from({ length: ABORTS }, async (_, i) => {
          const ac = new AbortController();
          const res = fetch(`${f.url}/api/v1/namespaces/${ns}/configmaps`, { signal: ac.signal });
          if (i % 2 === 0) {
            // before any answer
            setTimeout(() => ac.abort(), 100);
            await res.catch(() => {});
            return;
          }
          // once the body has begun
          const r = await res;
          const reader = r.body!.getReader();
          await reader.read();
          ac.abort();
          await reader.read().catch(() => {});
        }),
      );
    } finally {
      f.member('member3').faults.latencyMs = 0;
    }
    // the fleet has finished with every one of them once a fresh list is answered after them
    await vi.waitFor(
      async () => {
        const r = await fetch(`${f.url}/api/v1/namespaces/${ns}/configmaps?limit=1`);
        expect(r.status).toBe(200);
        await r.text();
      },
      { timeout: 20_000 },
    );
    const after = await sum(f.url, 'apiserver_request_total', 'code="500"');
    const aborts = (await sum(f.url, 'apiserver_request_aborts_total')) - abortsBefore;
    expect(logged.filter((l) => /unhandled error|prematurely closed/i.test(l))).toEqual([]);
    expect(after - before).toBe(0);
    // counted apart instead, as kube counts the requests it gave up on (those that left before any answer)
    for (const s of spies.splice(0)) s.mockRestore();
    console.log(`${runtime}: ${ABORTS} aborted lists, apiserver_request_aborts_total +${aborts}`);
    if (runtime === 'node') expect(aborts).toBeGreaterThan(0);
  });
});

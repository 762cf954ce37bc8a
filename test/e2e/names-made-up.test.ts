/**
 * A made-up shortened name (`<head>-<digest>.clusterspace-h.<cluster>` that stands for nothing), asked
 * again and again with real kubectl 1.35, on Node and in workerd. The first get looks the name up in its
 * cluster a list page at a time (up to 20 pages of 500) and answers NotFound; the fleet then remembers the
 * miss for a few seconds (MISS_TTL_MS), so the same get again costs no page at all, as measured on the
 * simulated member's own request log. A create through the fleet of the object the name stands for makes it found at once.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = 'made-up';
/** enough objects for several lookup pages (500 each) */
const FILLER = 1_600;

/** the rule, written again from its description (the oracle): SHA-256's first 64 bits in base 36 */
function shortened(name: string, cluster: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`)
    .toString(36)
    .padStart(13, '0');
  const room = 253 - '.clusterspace-h.'.length - cluster.length - 13 - 1;
  const head = name.slice(0, room).replace(/[-.]+$/, '');
  return `${head}-${digest}.clusterspace-h.${cluster}`;
}

describe.each(RUNTIMES)('made-up shortened names on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    prepare: (sims) => {
      const m1 = sims.members.get('member1')!;
      m1.create({ group: '', version: 'v1', resource: 'namespaces' }, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS },
      } as KubeObject);
      for (let i = 0; i < FILLER; i++)
        m1.create(CM, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `filler-${i}`, namespace: NS },
        } as KubeObject);
    },
  });
  const long = `made-up-${'q'.repeat(240)}-${runtime}`.slice(0, 253);
  const madeUp = shortened(long, 'member1');

  /** member1's list pages of the namespace's ConfigMaps since `from` (the lookups' cost) */
  const pagesSince = (from: number) =>
    f
      .member('member1')
      .requests.slice(from)
      .filter((r) => {
        const u = new URL(r.url);
        return u.pathname === `/api/v1/namespaces/${NS}/configmaps` && u.searchParams.get('limit') === '500';
      }).length;

  it('asked again: NotFound without a single upstream page, until it is created through the fleet', async () => {
    const k = f.kubectl();
    const get = () => k.run(['get', 'configmap', madeUp, '-n', NS, '-o', 'name']);

    let from = f.member('member1').requests.length;
    const first = await get();
    expect(first.stderr).toMatch(/Error from server \(NotFound\)/);
    const firstPages = pagesSince(from);
    expect(firstPages, 'the first get walks the collection').toBe(Math.ceil(FILLER / 500));

    // the same get again at once (within the miss's few seconds): plain HTTP, as quick as a client retries
    from = f.member('member1').requests.length;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${f.url}/api/v1/namespaces/${NS}/configmaps/${madeUp}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { reason: string }).reason).toBe('NotFound');
    }
    const againPages = pagesSince(from);
    console.log(
      `${runtime}: made-up name, list pages upstream: first get ${firstPages}, next 5 gets ${againPages}`,
    );
    expect(againPages, 'repeated gets of the made-up name cost no page').toBe(0);

    // created through the fleet: found at once by the same name
    const made = await k.run(['create', 'configmap', `${long}.clusterspace.member1`, '-n', NS]);
    expect(made.stderr).toBe('');
    const found = await get();
    expect(found.stderr).toBe('');
    expect(found.stdout.trim()).toBe(`configmap/${madeUp}`);
  });
});

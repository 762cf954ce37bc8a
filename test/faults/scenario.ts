/**
 * Shared setup for the fault e2e tests: namespaces and ConfigMaps written straight into the simulated
 * clusters, and what the fleet should show for them (read from a healthy merged list, so the tests do not
 * restate the fleet's naming).
 */
import type { KubeObject } from '../../sim/index.ts';
import type { WatchEvent, WatchReader } from './client.ts';
import { type FaultFleet, until } from './fleet.ts';

export const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = { group: '', version: 'v1', resource: 'namespaces' };

/** a namespace in every cluster, with `perMember[name]` ConfigMaps in each (padding makes bodies long) */
export function seedNamespace(ff: FaultFleet, ns: string, perMember: Record<string, number>, pad = 0): void {
  const sims = [ff.sims.karmada, ...ff.sims.members.values()];
  for (const sim of sims) if (!sim.get(NS, '', ns)) sim.create(NS, { metadata: { name: ns } });
  for (const [name, n] of Object.entries(perMember)) {
    const sim = name === 'karmada' ? ff.sims.karmada : ff.sims.members.get(name)!;
    // written last-name-first: a cluster's initial events (key order) then come in falling RV order,
    // as they do for any objects not created in name order
    for (let i = n - 1; i >= 0; i--)
      sim.create(CM, {
        metadata: { name: `cm-${name}-${i}`, namespace: ns },
        data: { v: String(i), pad: 'x'.repeat(pad) },
      } as KubeObject);
  }
}

export function putCm(ff: FaultFleet, cluster: string, ns: string, name: string): void {
  const sim = cluster === 'karmada' ? ff.sims.karmada : ff.sims.members.get(cluster)!;
  sim.create(CM, { metadata: { name, namespace: ns }, data: { v: '1' } } as KubeObject);
}

/** the fleet names of a namespace's ConfigMaps, from a healthy merged list (no fault armed) */
export async function fleetNames(ff: FaultFleet, ns: string): Promise<string[]> {
  const res = await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`);
  if (res.status !== 200) throw new Error(`healthy list: ${res.status}`);
  if (res.headers.get('warning')) throw new Error(`healthy list warned: ${res.headers.get('warning')}`);
  const l = (await res.json()) as { items: Array<{ metadata: { name: string } }> };
  return l.items.map((i) => i.metadata.name).sort();
}

export const added = (w: WatchReader) => w.events.filter((e) => e.type === 'ADDED').map(nameOf);
export const nameOf = (e: WatchEvent) => e.object.metadata?.name ?? '';

/** how often each name came, for names that came more than once */
export function duplicates(names: string[]): Record<string, number> {
  const n = new Map<string, number>();
  for (const x of names) n.set(x, (n.get(x) ?? 0) + 1);
  return Object.fromEntries([...n].filter(([, c]) => c > 1));
}

/**
 * Waits until a watch has seen ADDED for every expected name, then proves it is live and has nothing more
 * to say about them: a sentinel written into `sentinelIn` must arrive too. Returns the ADDED names.
 */
export async function settleWatch(
  ff: FaultFleet,
  w: WatchReader,
  ns: string,
  expected: string[],
  sentinelIn = 'member1',
  timeoutMs = 20_000,
): Promise<string[]> {
  const want = new Set(expected);
  await until(
    () => w.ended || [...want].every((n) => added(w).includes(n)),
    timeoutMs,
    `all ${want.size} objects ADDED (got ${JSON.stringify(added(w))})`,
  ).catch(() => {});
  putCm(ff, sentinelIn, ns, 'sentinel');
  await until(
    () => w.ended || added(w).some((n) => n.startsWith('sentinel')),
    timeoutMs,
    'the sentinel',
  ).catch(() => {});
  return added(w).filter((n) => !n.startsWith('sentinel'));
}

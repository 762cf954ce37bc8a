/**
 * Kubernetes' official Python client (Debian's python3-kubernetes, installed by .ci/run) against the
 * fleet's root URL, on Node and in workerd: a list across the fleet, a read by fleet name, and a watch that
 * sees changes from three clusters.
 */
import { describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { startPythonClient } from '../helpers/python.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

/** Debian's interpreter: the one python3-kubernetes installs into (a pyenv python3 on PATH would not see it) */
const PODS = { group: '', version: 'v1', resource: 'pods' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe.each(RUNTIMES)('the Python client on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    prepare: (sims) => {
      for (const s of [sims.karmada, ...sims.members.values()])
        s.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'py' } });
    },
  });

  it('lists across the fleet, reads by fleet name, and watches changes in three clusters', async () => {
    const py = startPythonClient([f.url, 'py']);
    await Promise.race([py.watching, py.exited]);
    await new Promise((r) => setTimeout(r, 300));
    for (const [name, sim] of f.sims.members)
      sim.create(CM, { metadata: { name: `from-${name}`, namespace: 'py' } });
    expect(await py.exited, py.err()).toBe(0);
    const r = JSON.parse(py.out()) as {
      pods: string[];
      listRV: string;
      read: { name: string; labels: Record<string, string> };
      events: Array<{ type: string; name: string; rv: string }>;
    };
    const want = [...f.sims.members]
      .flatMap(([c, s]) =>
        s.list(PODS).map((x) => `${x.metadata.namespace}/${x.metadata.name}.clusterspace.${c}`),
      )
      .sort();
    expect(r.pods).toEqual(want);
    expect(r.listRV).toMatch(/^[1-9][0-9]*$/);
    expect(r.read.name.endsWith('.clusterspace.member2')).toBe(true);
    expect(r.read.labels['fleet.karmada.io/cluster']).toBe('member2');
    expect(new Set(r.events.map((e) => e.name))).toEqual(
      new Set([...f.sims.members.keys()].map((m) => `from-${m}.clusterspace.${m}`)),
    );
    expect(r.events.every((e) => e.type === 'ADDED' && /^[1-9][0-9]*$/.test(e.rv))).toBe(true);
  });
});

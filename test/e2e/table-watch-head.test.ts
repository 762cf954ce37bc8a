/**
 * A Table watch (`kubectl get -w`) goes out like the JSON watch's head: shortly after the first member's
 * watch answered, not after every member's column probe (issue 33, watches). Here member2's one-row probe
 * is held with no byte of its head (a 120 s member timeout: it never fails within the test); before, the
 * head waited for it. member2's rows still come under the one header with their names: its own watch's
 * first event carries its columns (src/watch/columns.ts). On Node and in workerd.
 */
import { describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

interface TableEvent {
  type: string;
  object: {
    kind?: string;
    columnDefinitions?: Array<{ name: string }> | null;
    rows?: Array<{ cells: unknown[] }>;
  };
}

describe.each(RUNTIMES)('a Table watch whose column probe is held on one member, on %s', (runtime) => {
  const ff = useFaultFleet(runtime, { memberEndpoint: { timeoutSeconds: 120 } });

  const holdProbe = (ns: string) =>
    ff
      .cluster('member2')
      .on(
        { path: `/api/v1/namespaces/${ns}/configmaps`, query: { watch: false, limit: '1' } },
        { kind: 'stall', phase: 'headers', bytes: 0 },
        { times: Number.POSITIVE_INFINITY },
      );

  it('the head and every member’s rows come while the probe is held; one header, names in every row', async () => {
    const ns = `twh-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const rule = holdProbe(ns);
    const w = await openWatch(`${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true`, { Accept: TABLE });
    try {
      expect(w.status).toBe(200);
      const events = () => w.events as unknown as TableEvent[];
      const rows = () => events().flatMap((e) => e.object.rows ?? []);
      const named = (n: string) => rows().some((r) => r.cells[0] === n);
      await until(
        () => named('cm-member1-0.clusterspace.member1') && named('cm-member2-0.clusterspace.member2'),
        20_000,
        `both members' rows (got ${JSON.stringify(w.events)})`,
      );
      expect(rule.applied, 'member2’s probe was held').toBeGreaterThanOrEqual(1);
      putCm(ff, 'member2', ns, 'later');
      await until(() => named('later.clusterspace.member2'), 20_000, 'member2’s later row');
      // one header: the first Table only; every row under it, the Cluster column filled
      const headers = events().filter((e) => e.object.columnDefinitions);
      expect(headers).toHaveLength(1);
      expect(events()[0]).toBe(headers[0]);
      const cols = headers[0]!.object.columnDefinitions!.map((c) => c.name);
      expect(cols.slice(0, 2)).toEqual(['Name', 'Cluster']);
      for (const r of rows()) {
        expect(r.cells).toHaveLength(cols.length);
        expect(r.cells[1]).toBe(String(r.cells[0]).split('.').pop());
      }
    } finally {
      w.close();
    }
  });

  it('kubectl get -w prints one header and member2’s rows with their names', async () => {
    const ns = `twh-k-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    holdProbe(ns);
    const run = new Kubectl(ff.url).spawn(['get', 'configmaps', '-n', ns, '-w']);
    try {
      // kubectl's own list comes first (pages of 500, not the probe): then the watch's rows
      await run.waitFor(/cm-member2-0\.clusterspace\.member2/);
      putCm(ff, 'member2', ns, 'later');
      putCm(ff, 'member1', ns, 'also');
      await run.waitFor(/^later\.clusterspace\.member2 +member2 +\d+ /m, 30_000);
      await run.waitFor(/^also\.clusterspace\.member1 +member1 +\d+ /m, 30_000);
      const lines = run
        .output()
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('Warning'));
      expect(lines.filter((l) => l.startsWith('NAME'))).toHaveLength(1);
      for (const l of lines.filter((l) => !l.startsWith('NAME')))
        expect(l, 'a row with its name and cluster').toMatch(/^\S+\.clusterspace\.(member\d) +\1 +\d+ /);
    } finally {
      run.stop();
    }
  });
});

/**
 * A Table watch (`kubectl get -w`) learns the merged columns from a one-row Table list per cluster
 * before its first event (src/watch/start.ts probeColumns). When one cluster's probe fails
 * (here reset every time), its rows are shown under the columns the other clusters gave: the same
 * resource prints the same columns. Before, that cluster's rows were mapped by nothing and kubectl
 * printed them with an empty NAME, only the CLUSTER cell filled. Through the fault proxy, on Node and
 * in workerd.
 */
import { describe, expect, it } from 'vitest';
import { putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

describe.each(RUNTIMES)('a Table watch whose column probe fails on one cluster, on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  it('kubectl get -w shows that cluster’s new rows with their names', async () => {
    const ns = `twp-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    // the watch's one-row probe only (kubectl's own list asks pages of 500)
    const rule = ff
      .cluster('member2')
      .on(
        { path, query: { watch: false, limit: '1' } },
        { kind: 'rst' },
        { times: Number.POSITIVE_INFINITY },
      );
    const k = new Kubectl(ff.url);
    const run = k.spawn(['get', 'configmaps', '-n', ns, '-w']);
    try {
      await run.waitFor(/cm-member2-0\.clusterspace\.member2/);
      putCm(ff, 'member2', ns, 'later');
      const line = await run.waitFor(/^later\.clusterspace\.member2 +member2 +\d+ /m, 30_000);
      expect(line).toMatch(/later\.clusterspace\.member2/);
      expect(rule.applied, 'member2’s probe was refused').toBeGreaterThanOrEqual(1);
      // no row of the watch lost its name: every line names an object
      const rows = run
        .output()
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('NAME') && !l.startsWith('Warning'));
      for (const r of rows) expect(r, 'a row without its name').toMatch(/^\S+\.clusterspace\.member\d /);
    } finally {
      run.stop();
    }
  });
});

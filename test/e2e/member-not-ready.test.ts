/**
 * A member whose Karmada Cluster is not Ready is treated as down: merged lists, watches and gets by fleet
 * name answer without it, with the Warning (or 503) the fleet gives for a member it cannot reach, and the
 * fleet never dials it through the cluster proxy (each dial would wait for the proxy's dial error, on every
 * request). Seen on the real bed: a member Karmada had marked not Ready was asked on every request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const NOT_READY = 'cluster member2: not Ready in Karmada: cluster is not reachable';

describe.each(RUNTIMES)('a member Karmada calls not Ready, on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    // membership from Karmada, listed every 2 s (the sims' config)
    config: (sims) => sims.karmadaConfig({ federation: false }),
  });
  afterEach(() => {
    f.member('member2').faults.down = false;
  });

  it('is left out with a Warning and not dialled; back in once Karmada calls it Ready', async () => {
    const m2 = f.member('member2');
    m2.faults.down = true;
    const list = () => fetch(`${f.url}/api/v1/namespaces/default/configmaps`);
    // the fleet sees the Cluster's Ready condition at its next membership refresh
    const deadline = Date.now() + 30_000;
    let warning: string | null = null;
    while (Date.now() < deadline) {
      const res = await list();
      await res.arrayBuffer();
      warning = res.headers.get('warning');
      if (warning?.includes('not Ready')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(warning).toBe(`299 - "${NOT_READY}"`);

    const asked = m2.requests.length;
    const res = await list();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Array<{ metadata: { name: string } }> };
    expect(body.items.map((i) => i.metadata.name)).toContain('kube-root-ca.crt.clusterspace.member1');
    expect(body.items.map((i) => i.metadata.name)).not.toContain('kube-root-ca.crt.clusterspace.member2');
    const get = await fetch(
      `${f.url}/api/v1/namespaces/default/configmaps/kube-root-ca.crt.clusterspace.member2`,
    );
    expect(get.status).toBe(503);
    expect(((await get.json()) as { message: string }).message).toContain(NOT_READY);
    const watch = await fetch(`${f.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1`);
    expect(watch.headers.get('warning')).toContain(NOT_READY);
    await watch.arrayBuffer();
    expect(m2.requests.length - asked).toBe(0);

    m2.faults.down = false;
    const back = Date.now() + 30_000;
    for (;;) {
      const r = await list();
      await r.arrayBuffer();
      if (r.headers.get('warning') === null || Date.now() > back) {
        expect(r.headers.get('warning')).toBeNull();
        break;
      }
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(m2.requests.length).toBeGreaterThan(asked);
  }, 90_000);
});

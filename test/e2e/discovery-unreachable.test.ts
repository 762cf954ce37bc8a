/**
 * Discovery and requests while a member cannot be reached (KEP-4020's rule: an unavailable server's
 * resources are a 503, not a 404), with real kubectl 1.35 and plain HTTP, on Node and in workerd. The
 * fleet runs members only (federation off), so `widgets` (example.fleet.io) is member2's alone; member2
 * goes down through the simulator's down knob, and Karmada's cluster proxy answers for it as the real one
 * does (HTTP 500, `dial tcp …: connection refused`).
 *
 * - Discovery keeps member2's APIs listed from the last document this fleet process saw: in aggregated
 *   discovery (v2, v2beta1) its group-versions are `freshness: Stale`, in legacy discovery (`/apis`,
 *   `/apis/<g>`, `/apis/<g>/<v>`) listed as before, each answer with a Warning naming member2.
 * - A list, a get by plain name and a watch of widgets answer 503 ServiceUnavailable naming member2
 *   (kubectl prints "the server is currently unable to handle the request").
 * - A fleet process that never saw member2's discovery lists nothing of it, and its Warning says so.
 * - client-go drops Stale group-versions (aggregated_discovery.go: a Stale version is a failed one): a
 *   kubectl whose discovery cache predates the outage maps `widgets` and gets the 503; one that
 *   discovers afresh (`kubectl api-resources` always does) shows only the Warning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const AGG_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const AGG_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const WIDGETS = '/apis/example.fleet.io/v1/widgets';

interface AggregatedList {
  apiVersion: string;
  items: Array<{
    metadata: { name?: string };
    versions: Array<{ version: string; freshness?: string; resources: Array<{ resource: string }> }>;
  }>;
}

/** polls `probe` until it holds (every 200 ms, up to `ms`): waits on the fleet, never a fixed sleep */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function status(res: Response): Promise<{ code: number; reason: string; message: string }> {
  return (await res.json()) as { code: number; reason: string; message: string };
}

describe.each(RUNTIMES)('discovery and requests while a member is unreachable, on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let fleet: RunningFleet;
  const down = (v: boolean) => {
    f.member('member2').faults.down = v;
  };

  beforeAll(async () => {
    // the window before Karmada calls member2 not Ready: the proxy's dial error is what the fleet meets
    f.sims.karmada.failureThresholdMs = 3_600_000;
    fleet = await startFleet(runtime, f.sims.karmadaConfig({ federation: false }));
  });
  afterAll(async () => {
    down(false);
    await fleet?.stop();
  });

  it('member2 down: its APIs stay listed (Stale), and widgets answer 503 for lists, gets and watches', async () => {
    // kubectl discovers while member2 is up (and keeps its discovery cache, as every kubectl does)
    const warm = new Kubectl(fleet.url);
    let r = await warm.run(['api-resources', '--api-group=example.fleet.io']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^widgets\s+wd\s+example\.fleet\.io\/v1\s+true\s+Widget$/m);

    down(true);
    try {
      // the fleet's last complete answer is reused for a few seconds; then member2 is seen failing
      const agg = await eventually(async () => {
        const res = await fetch(`${fleet.url}/apis`, { headers: { Accept: AGG_V2 } });
        if (res.headers.get('warning')) return res;
        await res.body?.cancel();
        return undefined;
      }, 'an /apis answer that sees member2 down');
      expect(agg.status).toBe(200);
      expect(agg.headers.get('content-type')).toBe(AGG_V2);
      expect(agg.headers.get('cache-control')).toBe('no-cache, private');
      expect(agg.headers.get('warning')).toMatch(
        /^299 - "cluster member2: unreachable through Karmada's cluster proxy: dial tcp [^"]*connection refused; its APIs as last seen \d+s ago \(marked Stale in aggregated discovery\)"$/,
      );
      for (const [accept, version] of [
        [AGG_V2, 'v2'],
        [`${AGG_V2BETA1},application/json`, 'v2beta1'],
      ] as const) {
        const body = (await (
          await fetch(`${fleet.url}/apis`, { headers: { Accept: accept } })
        ).json()) as AggregatedList;
        expect(body.apiVersion).toBe(`apidiscovery.k8s.io/${version}`);
        const g = body.items.find((i) => i.metadata.name === 'example.fleet.io');
        expect(g?.versions.map((v) => [v.version, v.freshness])).toEqual([['v1', 'Stale']]);
        expect(g?.versions[0]?.resources.map((x) => x.resource)).toEqual(['widgets']);
        // what the reachable members serve stays Current
        const apps = body.items.find((i) => i.metadata.name === 'apps')!;
        expect(apps.versions.every((v) => v.freshness === 'Current')).toBe(true);
      }

      // legacy discovery keeps it listed too, with the Warning
      const apis = (await (await fetch(`${fleet.url}/apis`)).json()) as {
        groups: Array<{ name: string; preferredVersion?: { groupVersion: string } }>;
      };
      expect(apis.groups.find((g) => g.name === 'example.fleet.io')?.preferredVersion?.groupVersion).toBe(
        'example.fleet.io/v1',
      );
      const group = await fetch(`${fleet.url}/apis/example.fleet.io`);
      expect(group.status).toBe(200);
      expect(await group.json()).toMatchObject({ kind: 'APIGroup', name: 'example.fleet.io' });
      const gv = await fetch(`${fleet.url}/apis/example.fleet.io/v1`);
      expect(gv.status).toBe(200);
      expect(gv.headers.get('warning')).toMatch(/cluster member2: .*as last seen/);
      const resources = (await gv.json()) as { resources: Array<{ name: string; kind: string }> };
      expect(resources.resources.map((x) => x.name)).toEqual(['widgets', 'widgets/status']);

      // requests for widgets: 503 naming member2, never kube's 404
      for (const path of [
        WIDGETS,
        '/apis/example.fleet.io/v1/namespaces/default/widgets',
        '/apis/example.fleet.io/v1/namespaces/default/widgets/w1',
        `${WIDGETS}?watch=true`,
      ]) {
        const res = await fetch(fleet.url + path);
        expect([path, res.status]).toEqual([path, 503]);
        const st = await status(res);
        expect(st.reason).toBe('ServiceUnavailable');
        expect(st.message).toMatch(/^the server is currently unable to handle the request \(/);
        expect(st.message).toContain('cluster member2');
      }
      // even a group no reachable member serves: member2 might (the fleet does not guess from discovery)
      const unknown = await fetch(`${fleet.url}/apis/nope.example.io/v1/gadgets`);
      expect(unknown.status).toBe(503);
      await unknown.body?.cancel();

      // kubectl with its discovery from before the outage: the 503, in client-go's words
      r = await warm.run(['get', 'widgets', '-A', '--request-timeout=20s']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /Error from server \(ServiceUnavailable\): the server is currently unable to handle the request \(.*cluster member2: /,
      );
      // a kubectl discovering afresh is told by the Warning; client-go drops Stale group-versions
      const cold = new Kubectl(fleet.url);
      r = await cold.run(['api-resources', '--request-timeout=20s']);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/Warning: cluster member2: .*marked Stale in aggregated discovery/);
      expect(r.stdout).toMatch(/^deployments\s/m);
      expect(r.stdout).not.toMatch(/^widgets\s/m);
      r = await cold.run(['get', '--raw', '/apis/example.fleet.io/v1']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).resources[0].name).toBe('widgets');
    } finally {
      down(false);
    }
    // back: served again, fresh
    await eventually(async () => {
      const res = await fetch(fleet.url + WIDGETS);
      await res.body?.cancel();
      return res.status === 200 ? true : undefined;
    }, 'widgets served again');
    const agg = (await (
      await fetch(`${fleet.url}/apis`, { headers: { Accept: AGG_V2 } })
    ).json()) as AggregatedList;
    const g = agg.items.find((i) => i.metadata.name === 'example.fleet.io');
    expect(g?.versions.map((v) => v.freshness)).toEqual(['Current']);
    // and a group nobody serves is kube's 404 again
    const none = await fetch(`${fleet.url}/apis/nope.example.io/v1/gadgets`);
    expect(none.status).toBe(404);
    await none.body?.cancel();
  }, 120_000);

  it('a fleet process that never saw member2’s discovery lists nothing of it, and says so', async () => {
    down(true);
    const fresh = await startFleet(runtime, f.sims.karmadaConfig({ federation: false }));
    try {
      const res = await fetch(`${fresh.url}/apis`, { headers: { Accept: AGG_V2 } });
      expect(res.status).toBe(200);
      expect(res.headers.get('warning')).toMatch(
        /^299 - "cluster member2: .*; its APIs are not listed: this fleet process has not seen its discovery since it started"$/,
      );
      const body = (await res.json()) as AggregatedList;
      expect(body.items.map((i) => i.metadata.name)).not.toContain('example.fleet.io');
      expect(body.items.map((i) => i.metadata.name)).toContain('apps');
      // the list does not depend on discovery: still a 503, not a 404
      const list = await fetch(fresh.url + WIDGETS);
      expect(list.status).toBe(503);
      expect((await status(list)).message).toContain('cluster member2');
      const r = await new Kubectl(fresh.url).run(['api-resources', '--request-timeout=20s']);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/Warning: cluster member2: .*has not seen its discovery since it started/);
    } finally {
      down(false);
      await fresh.stop();
    }
  }, 120_000);
});

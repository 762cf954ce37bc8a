/**
 * Merged discovery through the fleet's root URL, with real kubectl 1.35 and plain HTTP, on Node and in
 * workerd: the union of every cluster's APIs (the control plane's with federation on, a CRD only member2
 * serves), aggregated discovery exactly as kube-apiserver answers it, OpenAPI for `kubectl explain`, and
 * what a missing cluster does to all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { inProcessFleet } from '../helpers/inprocess.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const AGG_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const AGG_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const KUBECTL_ACCEPT = `${AGG_V2},${AGG_V2BETA1},application/json`;
const WIDGETS = { group: 'example.fleet.io', version: 'v1', resource: 'widgets' };

interface AggregatedList {
  kind: string;
  apiVersion: string;
  items: Array<{
    metadata: { name?: string };
    versions: Array<{ version: string; resources: Array<{ resource: string }> }>;
  }>;
}

/** `kubectl get` arguments that print `<namespace> <name>` per object */
const NAMES = ['-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name', '--no-headers'];
const lines = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).join('/'))
    .sort();

function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { headers });
}

describe.each(RUNTIMES)('merged discovery on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;

  beforeAll(() => {
    k = f.kubectl();
  });

  it('kubectl api-resources lists every cluster’s resources, the one-member CRD and the control plane’s', async () => {
    const r = await k.run(['api-resources']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$/);
    const row = (re: RegExp) => expect(lines.filter((l) => re.test(l))).toHaveLength(1);
    row(/^pods\s+po\s+v1\s+true\s+Pod$/);
    row(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/);
    row(/^clusters\s+(\S+\s+)?cluster\.karmada\.io\/v1alpha1\s+false\s+Cluster$/);
    row(/^widgets\s+(\S+\s+)?example\.fleet\.io\/v1\s+true\s+Widget$/);
  });

  it('kubectl api-versions includes the group-versions only some clusters serve', async () => {
    const r = await k.run(['api-versions']);
    expect(r.stderr).toBe('');
    const versions = r.stdout.trim().split('\n');
    for (const gv of ['v1', 'apps/v1', 'example.fleet.io/v1', 'cluster.karmada.io/v1alpha1'])
      expect(versions).toContain(gv);
  });

  it('kubectl explain reads OpenAPI v3 through the fleet (from the cluster that publishes the group-version)', async () => {
    let r = await k.run(['explain', 'deployment.spec.replicas']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/GROUP:\s+apps/);
    expect(r.stdout).toMatch(/FIELD:\s+replicas <integer>/);
    expect(r.stdout).toContain('Number of desired pods');
    // only member2 publishes example.fleet.io/v1
    r = await k.run(['explain', 'widgets.spec.size']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('How many parts the widget has.');
  });

  it('kubectl get of the CRD returns the objects of the clusters that serve it (control plane and member2)', async () => {
    // the control plane holds the CRD too (templates for propagation); of the members only member2 does
    const want = [
      ...f.sims.karmada.list(WIDGETS).map((w) => `${w.metadata.namespace}/${w.metadata.name}`),
      ...f.sims.members
        .get('member2')!
        .list(WIDGETS)
        .map((w) => `${w.metadata.namespace}/${w.metadata.name}.clusterspace.member2`),
    ].sort();
    expect(f.sims.members.get('member2')!.list(WIDGETS).length).toBeGreaterThan(0);
    const r = await k.run(['get', 'widgets', '-A', ...NAMES]);
    expect(r.stderr).toBe('');
    expect(lines(r.stdout)).toEqual(want);
  });

  it('aggregated discovery: exact Content-Type, ETag, Vary by Accept and identity, If-None-Match → 304', async () => {
    for (const path of ['/api', '/apis']) {
      const r = await get(f.url + path, { Accept: KUBECTL_ACCEPT });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe(AGG_V2);
      // merged per caller: a cache in front keys it by Accept and by the identity headers, and revalidates
      expect(r.headers.get('vary')).toBe(
        'Accept, Authorization, Impersonate-User, Impersonate-Group, Impersonate-Uid',
      );
      expect(r.headers.get('cache-control')).toBe('public, no-cache');
      const etag = r.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
      const body = (await r.json()) as AggregatedList;
      expect(body.kind).toBe('APIGroupDiscoveryList');
      expect(body.apiVersion).toBe('apidiscovery.k8s.io/v2');

      const again = await get(f.url + path, { Accept: KUBECTL_ACCEPT, 'If-None-Match': etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const stale = await get(f.url + path, { Accept: KUBECTL_ACCEPT, 'If-None-Match': '"0"' });
      expect(stale.status).toBe(200);
      await stale.body?.cancel();
    }
    const v2beta1 = await get(`${f.url}/apis`, { Accept: `${AGG_V2BETA1},application/json` });
    expect(v2beta1.headers.get('content-type')).toBe(AGG_V2BETA1);
    expect(((await v2beta1.json()) as AggregatedList).apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
  });

  it('aggregated /apis holds every group in a sensible order; the one-member group-version too', async () => {
    const body = (await (await get(`${f.url}/apis`, { Accept: AGG_V2 })).json()) as AggregatedList;
    const names = body.items.map((i) => i.metadata.name);
    expect(names.slice(0, 2)).toEqual(['apiregistration.k8s.io', 'apps']);
    for (const g of ['cluster.karmada.io', 'example.fleet.io'])
      expect(names.filter((n) => n === g)).toHaveLength(1);
    const widgets = body.items.find((i) => i.metadata.name === 'example.fleet.io')!;
    expect(widgets.versions.map((v) => v.version)).toEqual(['v1']);
    expect(widgets.versions[0]!.resources.map((r) => r.resource)).toEqual(['widgets']);
  });

  it('legacy documents: /api, /apis, /apis/<g>, /apis/<g>/<v>; unknown group-version 404', async () => {
    const api = await get(`${f.url}/api`, { Accept: 'application/json' });
    expect(api.headers.get('content-type')).toBe('application/json');
    const versions = (await api.json()) as {
      kind: string;
      versions: string[];
      serverAddressByClientCIDRs: unknown[];
    };
    expect(versions.kind).toBe('APIVersions');
    expect(versions.versions).toEqual(['v1']);
    // the fleet's own address, never an upstream's
    expect(JSON.stringify(versions.serverAddressByClientCIDRs)).toContain(new URL(f.url).host);

    const apis = (await (await get(`${f.url}/apis`)).json()) as {
      kind: string;
      groups: Array<{ name: string; preferredVersion: { groupVersion: string } }>;
    };
    expect(apis.kind).toBe('APIGroupList');
    expect(apis.groups.find((g) => g.name === 'example.fleet.io')?.preferredVersion.groupVersion).toBe(
      'example.fleet.io/v1',
    );
    const group = (await (await get(`${f.url}/apis/example.fleet.io`)).json()) as {
      kind: string;
      name: string;
    };
    expect(group).toMatchObject({ kind: 'APIGroup', name: 'example.fleet.io' });
    const list = (await (await get(`${f.url}/apis/example.fleet.io/v1`)).json()) as {
      kind: string;
      resources: Array<{ name: string }>;
    };
    expect(list.kind).toBe('APIResourceList');
    expect(list.resources.map((r) => r.name)).toContain('widgets');
    const core = (await (await get(`${f.url}/api/v1`)).json()) as { resources: Array<{ name: string }> };
    expect(core.resources.filter((r) => r.name === 'pods')).toHaveLength(1);

    const missing = await get(`${f.url}/apis/nope.example.io/v1`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('/clusterspaces/all answers the same merged discovery', async () => {
    const a = await get(`${f.url}/apis`, { Accept: AGG_V2 });
    const b = await get(`${f.url}/clusterspaces/all/apis`, { Accept: AGG_V2 });
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    expect(await b.text()).toBe(await a.text());
  });

  it('/version is the control plane’s', async () => {
    const r = await k.run(['version', '-o', 'json']);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.stdout) as { serverVersion: { gitVersion: string } };
    const direct = (await (await fetch(`${f.sims.karmadaUrl}/version`)).json()) as { gitVersion: string };
    expect(v.serverVersion.gitVersion).toBe(direct.gitVersion);
  });

  it('OpenAPI v3: merged root with relative URLs; each group-version document from a cluster that has it', async () => {
    const root = (await (await get(`${f.url}/openapi/v3`)).json()) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    for (const gv of [
      'api/v1',
      'apis/apps/v1',
      'apis/cluster.karmada.io/v1alpha1',
      'apis/example.fleet.io/v1',
    ])
      expect(root.paths[gv]?.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${gv}\\?hash=[0-9A-F]+$`));
    const url = root.paths['apis/example.fleet.io/v1']!.serverRelativeURL;
    const doc = await get(f.url + url, { Accept: 'application/json' });
    expect(doc.status).toBe(200);
    expect(doc.headers.get('cache-control')).toBe('public, immutable');
    expect(JSON.stringify(await doc.json())).toContain('How many parts the widget has.');
    // through the prefix form, the same relative URL works under the client's base path
    const viaAll = await get(`${f.url}/clusterspaces/all${url}`, { Accept: 'application/json' });
    expect(viaAll.status).toBe(200);
    await viaAll.body?.cancel();
  });

  it('OpenAPI v2 is passed through from a cluster', async () => {
    const r = await get(`${f.url}/openapi/v2`, { Accept: 'application/json' });
    expect(r.status).toBe(200);
    const doc = (await r.json()) as { swagger: string; definitions: Record<string, unknown> };
    expect(doc.swagger).toBe('2.0');
    expect(Object.keys(doc.definitions)).toContain('io.k8s.api.apps.v1.Deployment');
  });

  describe('members only (federation off)', () => {
    let members: RunningFleet;
    beforeAll(async () => {
      members = await startFleet(runtime, f.sims.karmadaConfig({ federation: false }));
    });
    afterAll(async () => {
      await members?.stop();
    });

    it('a group-version only one member serves is discovered, and kubectl get reads that member', async () => {
      const km = new Kubectl(members.url);
      const r = await km.run(['api-resources']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^widgets\s+(\S+\s+)?example\.fleet\.io\/v1\s+true\s+Widget$/m);
      // the control plane is not asked: its own APIs are not part of this fleet view
      expect(r.stdout).not.toMatch(/cluster\.karmada\.io/);
      const list = (await (await get(`${members.url}/apis/example.fleet.io/v1`)).json()) as {
        resources: Array<{ name: string }>;
      };
      expect(list.resources.map((x) => x.name)).toContain('widgets');
      const g = await km.run(['get', 'widgets', '-A', ...NAMES]);
      expect(g.stderr).toBe('');
      expect(lines(g.stdout)).toEqual(
        f.sims.members
          .get('member2')!
          .list(WIDGETS)
          .map((w) => `${w.metadata.namespace}/${w.metadata.name}.clusterspace.member2`)
          .sort(),
      );
    });
  });

  describe('with a member down', () => {
    // fleets of their own: a fresh process/isolate cache, so no complete answer is replayed
    let degraded: RunningFleet;
    let strict: RunningFleet;
    beforeAll(async () => {
      degraded = await startFleet(runtime, f.sims.karmadaConfig());
      strict = await startFleet(runtime, f.sims.karmadaConfig({ strict: true }));
      f.sims.members.get('member3')!.faults.down = true;
    });
    afterAll(async () => {
      f.sims.members.get('member3')!.faults.down = false;
      await degraded?.stop();
      await strict?.stop();
    });

    it('discovery still answers, with a Warning naming the cluster (kubectl prints it)', async () => {
      const r = await new Kubectl(degraded.url).run(['api-resources', '--request-timeout=20s']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^widgets\s/m);
      expect(r.stderr).toMatch(/Warning: cluster member3: /);

      const res = await get(`${degraded.url}/apis`, { Accept: KUBECTL_ACCEPT });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(AGG_V2);
      expect(res.headers.get('warning')).toMatch(/^299 - "cluster member3: .+"$/);
      expect(res.headers.get('cache-control')).toBe('no-cache, private');
      await res.body?.cancel();
    });

    it('strict mode: discovery answers with the reachable clusters and a Warning, data requests fail', async () => {
      // strict is about data answers: a discovery that failed would leave kubectl unable to do anything
      const res = await get(`${strict.url}/apis`, { Accept: KUBECTL_ACCEPT });
      expect(res.status).toBe(200);
      expect(res.headers.get('warning')).toMatch(/^299 - "cluster member3: .+"$/);
      await res.body?.cancel();
      const k = new Kubectl(strict.url);
      const r = await k.run(['api-resources', '--request-timeout=20s']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^widgets\s/m);
      expect(r.stderr).toMatch(/Warning: cluster member3: /);
      // a list across the fleet is a data answer: strict refuses it while member3 is down
      const pods = await k.run(['get', 'pods', '-A', '--request-timeout=20s']);
      expect(pods.code).not.toBe(0);
      expect(pods.stderr).toContain('Error from server (ServiceUnavailable)');
      expect(pods.stderr).toContain('member3');
      // one healthy cluster's object needs no other cluster
      const ns = await k.run([
        'get',
        'ns',
        'shop.clusterspace.member1',
        '-o',
        'name',
        '--request-timeout=20s',
      ]);
      expect([ns.code, ns.stdout.trim()]).toEqual([0, 'namespace/shop.clusterspace.member1']);
    });
  });
});

/**
 * Upstream behaviours the simulated fleet does not show over HTTP, in-process (test/helpers/inprocess.ts,
 * each sim's fetch wrapped): a cluster older than aggregated discovery, every cluster failing, every
 * cluster refusing the caller.
 */
describe('merged discovery against unusual upstreams (in-process)', () => {
  type Wrap = (cluster: string, req: Request, next: (r: Request) => Promise<Response>) => Promise<Response>;

  function fleetWith(wrap: Wrap, extra: Partial<FleetConfigInput> = {}) {
    const f = inProcessFleet({}, extra);
    for (const [name, sim] of [['karmada', f.karmada] as const, ...f.members]) {
      const next = sim.fetch.bind(sim);
      sim.fetch = (req: Request) => wrap(name, req, next);
    }
    return (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      f.fetch(path, { headers, method });
  }

  const passthrough: Wrap = (_c, req, next) => next(req);

  it('a cluster that only speaks legacy discovery is converted into the aggregated answer', async () => {
    const asked: string[] = [];
    // member1 predates aggregated discovery: it ignores the aggregated media types
    const legacyMember1: Wrap = (cluster, req, next) => {
      if (cluster !== 'member1') return next(req);
      asked.push(new URL(req.url).pathname);
      const h = new Headers(req.headers);
      h.set('Accept', 'application/json');
      return next(new Request(req, { headers: h }));
    };
    for (const federation of [false, true]) {
      const normal = fleetWith(passthrough, { federation });
      const old = fleetWith(legacyMember1, { federation });
      for (const path of ['/api', '/apis']) {
        const want = await normal(path, { Accept: KUBECTL_ACCEPT });
        const got = await old(path, { Accept: KUBECTL_ACCEPT });
        expect(got.status).toBe(200);
        expect(got.headers.get('content-type')).toBe(AGG_V2);
        expect(got.headers.get('warning')).toBeNull();
        expect(await got.json()).toEqual(await want.json());
      }
    }
    // the group-versions were read one by one from member1
    expect(asked).toContain('/api/v1');
    expect(asked).toContain('/apis/apps/v1');
  });

  it('complete answers are cached for a few seconds per fleet; partial ones are not', async () => {
    const asked: string[] = [];
    let m3down = false;
    const f = fleetWith((cluster, req, next) => {
      if (new URL(req.url).pathname === '/apis') asked.push(cluster);
      return cluster === 'member3' && m3down ? Promise.reject(new TypeError('fetch failed')) : next(req);
    });
    m3down = true;
    for (let i = 0; i < 2; i++) {
      const r = await f('/apis', { Accept: KUBECTL_ACCEPT });
      expect(r.headers.get('warning')).toMatch(/cluster member3/);
    }
    expect(asked).toHaveLength(8); // partial: asked again
    m3down = false;
    asked.length = 0;
    const a = await f('/apis', { Accept: KUBECTL_ACCEPT });
    const b = await f('/apis', { Accept: KUBECTL_ACCEPT });
    expect(a.headers.get('warning')).toBeNull();
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    expect(asked).toHaveLength(4); // complete: the second came from the cache
    await f('/apis', { Accept: 'application/json' }); // another negotiated form is another entry
    expect(asked).toHaveLength(8);
  });

  it('every cluster failing gives 503; every cluster refusing the caller gives that refusal', async () => {
    const down = fleetWith((cluster, req, next) =>
      cluster === 'karmada' && new URL(req.url).pathname.includes('clusters')
        ? next(req)
        : Promise.reject(new TypeError('fetch failed: connection refused')),
    );
    let r = await down('/apis', { Accept: KUBECTL_ACCEPT });
    expect(r.status).toBe(503);
    const s = (await r.json()) as { reason: string; message: string };
    expect(s.reason).toBe('ServiceUnavailable');
    for (const c of ['karmada', 'member1', 'member2', 'member3'])
      expect(s.message).toContain(`cluster ${c}: `);

    const forbidden = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'forbidden: User "jane" cannot get path "/apis"',
      reason: 'Forbidden',
      details: {},
      code: 403,
    };
    const refusing = fleetWith(async (cluster, req, next) =>
      new URL(req.url).pathname === '/apis'
        ? new Response(JSON.stringify({ ...forbidden, message: `${forbidden.message} in ${cluster}` }), {
            status: 403,
            headers: { 'Content-Type': 'application/json' },
          })
        : next(req),
    );
    r = await refusing('/apis', { Accept: KUBECTL_ACCEPT });
    expect(r.status).toBe(403);
    expect(await r.json()).toEqual({ ...forbidden, message: `${forbidden.message} in karmada` });
  });

  it('a group-version some clusters cannot be asked about is not declared absent', async () => {
    const m2down = fleetWith((cluster, req, next) =>
      cluster === 'member2' ? Promise.reject(new TypeError('fetch failed')) : next(req),
    );
    // only member2 (and the control plane) serve example.fleet.io; with federation off only member2
    const r = await fleetWith(
      (cluster, req, next) =>
        cluster === 'member2' ? Promise.reject(new TypeError('fetch failed')) : next(req),
      { federation: false },
    )('/apis/example.fleet.io/v1');
    expect(r.status).toBe(503);
    // the control plane serves it: answered, with the warning
    const ok = await m2down('/apis/example.fleet.io/v1');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('warning')).toMatch(/^299 - "cluster member2: /);
    // nobody serves it and everyone answered: 404
    expect((await fleetWith(passthrough)('/apis/nope.example.io/v1')).status).toBe(404);
  });

  it('406 when the client accepts nothing the fleet writes; 405 for other methods', async () => {
    const f = fleetWith(passthrough);
    expect((await f('/apis', { Accept: 'application/vnd.kubernetes.protobuf' })).status).toBe(406);
    expect((await f('/apis/apps/v1', { Accept: AGG_V2 })).status).toBe(406);
    expect(
      (await f('/apis/apps/v1', { Accept: 'application/vnd.kubernetes.protobuf,application/json' })).status,
    ).toBe(200);
  });
});

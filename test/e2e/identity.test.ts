/**
 * Identity end to end, on Node and in workerd: real tokens from a test OIDC issuer (keys generated here,
 * JWKS served over HTTP), simulated clusters that enforce RBAC on the impersonated user, the fleet in
 * between. A caller allowed in member1 only sees member1's pods at the root URL plus a warning for every
 * other cluster; a bad token is a 401 and no cluster hears of it; `kubectl --as` needs the right to
 * impersonate (asked of the control plane with a SubjectAccessReview). Node adds client certificates.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, fetch as ufetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { SimCluster } from '../../sim/index.ts';
import type { SimRbac, SimRule } from '../../sim/rbac.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';
import { b64url, startIssuer, type TestIssuer } from '../helpers/issuer.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';
import { createTestCA } from '../helpers/tls.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const READ_PODS: SimRule[] = [
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'] },
];
const CA = createTestCA();
const SERVING = CA.server();
/** the fleet serves HTTPS with the test CA's certificate */
const TRUSTING = new Agent({ connect: { ca: CA.cert } });
const tlsFetch = (url: string, init: { headers?: Record<string, string>; agent?: Agent } = {}) =>
  ufetch(url, {
    headers: init.headers ?? {},
    dispatcher: init.agent ?? TRUSTING,
  }) as unknown as Promise<Response>;

/** alice (OIDC) may read pods in member1 only, bob in member2 only, carol (static token) everywhere. */
function clusterRbac(name: string): SimRbac {
  return {
    users: {
      'oidc:alice': name === 'member1' ? READ_PODS : [],
      bob: name === 'member2' ? READ_PODS : [],
      carol: READ_PODS,
      'x509:dave': name === 'member3' ? READ_PODS : [],
    },
  };
}

function allSims(s: ServedSimFleet): SimCluster[] {
  return [s.karmada, ...s.members.values()];
}

function requestCount(s: ServedSimFleet): number {
  return allSims(s).reduce((n, sim) => n + sim.requests.length, 0);
}

function enforceRbac(s: ServedSimFleet): void {
  for (const [name, sim] of s.members) sim.rbac = clusterRbac(name);
  // the control plane: alice may impersonate bob (and nothing else); nobody reads pods there
  s.karmada.rbac = {
    users: {
      'oidc:alice': [
        { verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] },
        {
          verbs: ['impersonate'],
          apiGroups: [''],
          resources: ['groups'],
          resourceNames: ['viewers', 'auditors'],
        },
      ],
    },
  };
}

function oidcConfig(issuer: TestIssuer) {
  return {
    issuer: issuer.issuer,
    audiences: ['fleet'],
    jwksUrl: issuer.jwksUrl,
    usernamePrefix: 'oidc:',
    groupsClaim: 'groups',
    groupsPrefix: 'oidc:',
    // every unknown key id may refetch at once (the rotation test); production keeps the 30 s default
    jwksMinRefreshSeconds: 0,
  };
}

/** Pods of a fleet list, as `<namespace>/<fleet name>`. */
async function podNames(res: Response): Promise<string[]> {
  const list = (await res.json()) as { items: Array<{ metadata: { name: string; namespace: string } }> };
  return list.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();
}

function memberPods(s: ServedSimFleet, member: string): string[] {
  return s.members
    .get(member)!
    .list(PODS)
    .map((p) => `${p.metadata.namespace}/${p.metadata.name}.clusterspace.${member}`)
    .sort();
}

describe.each(RUNTIMES)('identity on %s', (runtime) => {
  let issuer: TestIssuer;
  let alice: string;
  const f = useSimFleet(runtime, {
    prepare: async (sims) => {
      enforceRbac(sims);
      issuer = await startIssuer('fleet');
      return () => issuer.close();
    },
    config: (sims): FleetConfigInput =>
      sims.karmadaConfig({
        authentication: {
          oidc: [oidcConfig(issuer)],
          staticTokens: { csv: '# token,user,uid,groups\nstatic-carol-token,carol,1042,"qa,dev"\n' },
        },
        callerImpersonation: { cacheSeconds: 0 },
      }),
    start: { tls: SERVING },
  });

  beforeAll(async () => {
    alice = await issuer.sign({ sub: 'alice', groups: ['dev', 'ops'] });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    tlsFetch(`${f.url}${path}`, { headers: { Accept: 'application/json', ...headers } });

  it('a valid token: member1’s pods only, a warning per forbidden cluster, alice impersonated everywhere', async () => {
    const before = f.sims.members.get('member1')!.requests.length;
    const res = await get('/api/v1/pods', { Authorization: `Bearer ${alice}` });
    expect(res.status).toBe(200);
    expect(await podNames(res)).toEqual(memberPods(f.sims, 'member1'));
    const warnings = res.headers.get('warning') ?? '';
    for (const c of ['karmada', 'member2', 'member3'])
      expect(warnings).toContain(
        `cluster ${c}: pods is forbidden: User \\"oidc:alice\\" cannot list resource \\"pods\\" in API group \\"\\" at the cluster scope`,
      );
    const seen = f.sims.members.get('member1')!.requests.slice(before);
    const list = seen.find((r) => new URL(r.url).pathname === '/api/v1/pods')!;
    expect(list.headers['impersonate-user']).toBe('oidc:alice');
    // two lines on the wire (see the raw-wire test below); the simulated cluster reads them joined
    expect(list.headers['impersonate-group']).toBe('oidc:dev, oidc:ops');
    expect(list.headers.authorization).toBe('Bearer fleet-demo-token');
    // the caller's token never reached any cluster
    for (const sim of allSims(f.sims))
      for (const r of sim.requests) expect(r.headers.authorization ?? '').not.toContain(alice);
  });

  it('each refused token is a 401 Status with WWW-Authenticate, and no cluster hears of it', async () => {
    const claims = { sub: 'alice', groups: ['dev'] };
    const valid = await issuer.sign(claims);
    const [h, p] = valid.split('.');
    const tampered = `${h}.${b64url({ ...claims, sub: 'root', iss: issuer.issuer, aud: 'fleet', exp: 4102444800 })}.${valid.split('.')[2]}`;
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.`;
    const cases: Record<string, string | undefined> = {
      expired: await issuer.sign(claims, { expiresIn: -3600 }),
      'not yet valid': await issuer.sign(claims, { notBefore: 3600 }),
      'wrong audience': await issuer.sign(claims, { audience: 'someone-else' }),
      'wrong issuer': await issuer.sign(claims, { issuer: 'https://evil.example' }),
      'alg none': unsigned,
      'bad signature': tampered,
      'unknown key id': await issuer.foreignSign(claims),
      'unknown static token': 'not-a-known-token',
      'no credentials': undefined,
    };
    const before = requestCount(f.sims);
    for (const [name, token] of Object.entries(cases)) {
      const res = await get('/api/v1/pods', token ? { Authorization: `Bearer ${token}` } : {});
      expect(res.status, name).toBe(401);
      expect(res.headers.get('www-authenticate'), name).toMatch(/^Bearer realm="fleet-apiserver"/);
      const s = (await res.json()) as { kind: string; reason: string; message: string; code: number };
      expect(s, name).toMatchObject({
        kind: 'Status',
        reason: 'Unauthorized',
        message: 'Unauthorized',
        code: 401,
      });
    }
    expect(requestCount(f.sims)).toBe(before);
  });

  it('a static token (kube’s CSV format) authenticates; groups and uid go upstream', async () => {
    const m2 = f.sims.members.get('member2')!;
    const before = m2.requests.length;
    const res = await get('/clusterspaces/member2/api/v1/pods', {
      Authorization: 'Bearer static-carol-token',
    });
    expect(res.status).toBe(200);
    const r = m2.requests.slice(before).find((x) => x.url.includes('/api/v1/pods'))!;
    expect(r.headers['impersonate-user']).toBe('carol');
    expect(r.headers['impersonate-group']).toBe('qa, dev');
    expect(r.headers['impersonate-uid']).toBe('1042');
  });

  it('fetches the JWKS once and caches it; a rotated key is picked up at its first unknown key id', async () => {
    const jwksBefore = issuer.hits.get('/jwks') ?? 0;
    for (let i = 0; i < 5; i++)
      expect(
        (await get('/clusterspaces/member1/api/v1/pods', { Authorization: `Bearer ${alice}` })).status,
      ).toBe(200);
    expect(issuer.hits.get('/jwks') ?? 0).toBe(jwksBefore);
    await issuer.rotate();
    const fresh = await issuer.sign({ sub: 'alice', groups: ['dev'] });
    expect(
      (await get('/clusterspaces/member1/api/v1/pods', { Authorization: `Bearer ${fresh}` })).status,
    ).toBe(200);
    expect(issuer.hits.get('/jwks')).toBe(jwksBefore + 1);
    // the old key stays published: old tokens keep working without another fetch
    expect(
      (await get('/clusterspaces/member1/api/v1/pods', { Authorization: `Bearer ${alice}` })).status,
    ).toBe(200);
    expect(issuer.hits.get('/jwks')).toBe(jwksBefore + 1);
  });

  it('the caller’s Impersonate-* needs the right (a SubjectAccessReview on the control plane), else 403', async () => {
    const before = requestCount(f.sims);
    const res = await get('/api/v1/pods', { Authorization: `Bearer ${alice}`, 'Impersonate-User': 'carol' });
    expect(res.status).toBe(403);
    const s = (await res.json()) as { reason: string; message: string; details: unknown };
    expect(s.reason).toBe('Forbidden');
    expect(s.message).toBe(
      'users "carol" is forbidden: User "oidc:alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    expect(s.details).toEqual({ name: 'carol', kind: 'users' });
    // only the review went out, to the control plane, as the fleet itself
    expect(requestCount(f.sims) - before).toBe(1);
    const review = f.sims.karmada.requests.at(-1)!;
    expect(new URL(review.url).pathname).toBe('/apis/authorization.k8s.io/v1/subjectaccessreviews');
    expect(review.headers.authorization).toBe('Bearer fleet-demo-token');
    expect(review.headers['impersonate-user']).toBeUndefined();
  });

  it('with the right, the request acts as the impersonated user (bob sees member2)', async () => {
    const res = await get('/api/v1/pods', { Authorization: `Bearer ${alice}`, 'Impersonate-User': 'bob' });
    expect(res.status).toBe(200);
    expect(await podNames(res)).toEqual(memberPods(f.sims, 'member2'));
    const r = f.sims.members.get('member2')!.requests.at(-1)!;
    expect(r.headers['impersonate-user']).toBe('bob');
    expect(r.headers['impersonate-group']).toBeUndefined();
  });

  it('kubectl --token works end to end over TLS; --as without the right is 403, with it the impersonated view', async () => {
    const k = new Kubectl(f.url, { caPem: CA.cert, token: alice });
    let r = await k.run(['get', 'pods', '-A', '-o', 'name']);
    expect(r.code).toBe(0);
    const want = memberPods(f.sims, 'member1').map((p) => `pod/${p.split('/')[1]}`);
    expect(r.stdout.trim().split('\n').sort()).toEqual(want.sort());
    expect(r.stderr).toContain('Warning: cluster member2: pods is forbidden: User "oidc:alice" cannot list');

    r = await k.run(['get', 'pods', '-A', '--as', 'carol']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'users "carol" is forbidden: User "oidc:alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );

    r = await k.run(['get', 'pods', '-A', '-o', 'name', '--as', 'bob']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(
      memberPods(f.sims, 'member2')
        .map((p) => `pod/${p.split('/')[1]}`)
        .sort(),
    );

    const who = new Kubectl(`${f.url}/clusterspaces/member1`, { caPem: CA.cert, token: alice });
    r = await who.run(['auth', 'whoami', '-o', 'json', '--as', 'bob']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).status.userInfo).toEqual({
      username: 'bob',
      groups: ['system:authenticated'],
    });
    // --as-group: each group reviewed, each sent on its own line
    r = await who.run([
      'auth',
      'whoami',
      '-o',
      'json',
      '--as',
      'bob',
      '--as-group',
      'viewers',
      '--as-group',
      'auditors',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).status.userInfo).toEqual({
      username: 'bob',
      groups: ['viewers', 'auditors', 'system:authenticated'],
    });
    r = await who.run(['get', 'namespaces', '--as', 'bob', '--as-group', 'system:masters']);
    expect(r.code).toBe(1);
    // kubectl 1.35 shows a 403 on aggregated discovery as "Forbidden: unknown" (as against kube-apiserver)
    expect(r.stderr).toContain('Error from server (Forbidden)');
  });

  it('kubectl with a bad token gets kube’s Unauthorized', async () => {
    const k = new Kubectl(f.url, {
      caPem: CA.cert,
      token: await issuer.sign({ sub: 'alice' }, { expiresIn: -60 }),
    });
    const r = await k.run(['get', 'pods', '-A']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: You must be logged in to the server');
  });
});

describe.each(RUNTIMES)('identity headers on the wire, on %s', (runtime) => {
  // a bare node:http upstream that records header lines exactly as they arrived
  let raw: { url: string; lines: string[][]; close(): Promise<void> };
  let fleet: RunningFleet;

  beforeAll(async () => {
    const lines: string[][] = [];
    const srv = createServer((req: IncomingMessage, res) => {
      lines.push(req.rawHeaders);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"Status","status":"Success"}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    raw = {
      url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
      lines,
      close: () => new Promise((r) => srv.close(() => r())),
    };
    fleet = await startFleet(runtime, {
      controlPlane: { server: raw.url, token: 'fleet-token' },
      members: { mode: 'static', clusters: [{ name: 'member1', server: raw.url, token: 'fleet-token' }] },
      authentication: { staticTokens: { csv: 'tok,erin,e-1,"a,b,c, d"' } },
    });
  });
  afterAll(async () => {
    await fleet?.stop();
    await raw?.close();
  });

  it('sends one Impersonate-Group line per group, never a joined list', async () => {
    const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces`, {
      headers: { Authorization: 'Bearer tok' },
    });
    expect(res.status).toBe(200);
    const h = raw.lines.at(-1)!;
    const pairs: Array<[string, string]> = [];
    for (let i = 0; i < h.length; i += 2) pairs.push([h[i]!.toLowerCase(), h[i + 1]!]);
    expect(pairs.filter(([k]) => k === 'impersonate-group').map(([, v]) => v)).toEqual(['a', 'b', 'c', 'd']);
    expect(pairs.filter(([k]) => k === 'impersonate-user')).toEqual([['impersonate-user', 'erin']]);
    expect(pairs.find(([k]) => k === 'impersonate-uid')?.[1]).toBe('e-1');
    expect(pairs.filter(([k]) => k === 'authorization')).toEqual([['authorization', 'Bearer fleet-token']]);
  });
});

describe.each(RUNTIMES)('passthrough identity mode on %s', (runtime) => {
  let issuer: TestIssuer;
  const f = useSimFleet(runtime, {
    prepare: async () => {
      issuer = await startIssuer('fleet');
      return () => issuer.close();
    },
    // no fleet credential: in passthrough mode every cluster authenticates the caller's own token
    config: (sims) =>
      sims.staticConfig({
        authentication: { oidc: [oidcConfig(issuer)] },
        upstreamIdentity: { mode: 'passthrough' },
      }),
  });

  it('forwards the caller’s token and no impersonation', async () => {
    const token = await issuer.sign({ sub: 'alice', groups: ['dev'] });
    const m1 = f.sims.members.get('member1')!;
    const before = m1.requests.length;
    const res = await fetch(`${f.url}/api/v1/pods`, {
      headers: { Authorization: `Bearer ${token}`, 'X-Remote-User': 'mallory' },
    });
    expect(res.status).toBe(200);
    const r = m1.requests.slice(before).find((x) => x.url.includes('/api/v1/pods'))!;
    expect(r.headers.authorization).toBe(`Bearer ${token}`);
    expect(r.headers['impersonate-user']).toBeUndefined();
    expect(r.headers['x-remote-user']).toBeUndefined();
  });
});

describe('client certificates on the Node server', () => {
  const FRONT_PROXY_CA = createTestCA('front-proxy-ca');
  const f = useSimFleet('node', {
    prepare: enforceRbac,
    config: (sims) =>
      sims.karmadaConfig({
        authentication: {
          x509: { clientCAData: CA.certData },
          frontProxy: { clientCAData: FRONT_PROXY_CA.certData, allowedNames: ['edge-proxy'] },
        },
      }),
    start: { tls: SERVING },
  });

  it('kubectl with a client certificate: CN is the user, O the groups, as kube-apiserver', async () => {
    const dave = CA.client('x509:dave', ['team-a', 'team-b']);
    const k = new Kubectl(f.url, { caPem: CA.cert, clientCert: dave.cert, clientKey: dave.key });
    const before = f.sims.members.get('member3')!.requests.length;
    const r = await k.run(['get', 'pods', '-A', '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(
      memberPods(f.sims, 'member3')
        .map((p) => `pod/${p.split('/')[1]}`)
        .sort(),
    );
    const sent = f.sims.members
      .get('member3')!
      .requests.slice(before)
      .find((x) => x.url.includes('/api/v1/pods'))!;
    expect(sent.headers['impersonate-user']).toBe('x509:dave');
    expect(sent.headers['impersonate-group']).toBe('team-a, team-b');
  });

  it('a certificate from another CA, or without client-auth usage, authenticates nobody', async () => {
    const stranger = createTestCA('stranger').client('x509:dave');
    const serverOnly = CA.client('x509:dave', [], { eku: 'serverAuth' });
    for (const cert of [stranger, serverOnly]) {
      const k = new Kubectl(f.url, { caPem: CA.cert, clientCert: cert.cert, clientKey: cert.key });
      const r = await k.run(['get', 'pods', '-A']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/You must be logged in to the server|provide credentials/);
    }
  });

  it('front-proxy headers count only with the front-proxy CA’s certificate and an allowed name', async () => {
    const proxy = FRONT_PROXY_CA.client('edge-proxy');
    const otherName = FRONT_PROXY_CA.client('not-allowed');
    const userCert = CA.client('x509:dave');
    const call = (cert: { cert: string; key: string } | undefined) =>
      tlsFetch(`${f.url}/clusterspaces/member1/api/v1/pods`, {
        headers: { 'X-Remote-User': 'bob', 'X-Remote-Group': 'g1', Accept: 'application/json' },
        agent: new Agent({ connect: { ca: CA.cert, ...(cert ? { cert: cert.cert, key: cert.key } : {}) } }),
      });
    const m1 = f.sims.members.get('member1')!;
    let before = m1.requests.length;
    // the proxy's certificate: the headers name the caller (bob may not read member1's pods: RBAC 403)
    let res = await call(proxy);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain('User "bob" cannot list');
    expect(m1.requests.slice(before).at(-1)!.headers['impersonate-user']).toBe('bob');
    // a name the fleet does not allow, no certificate at all: 401, nothing sent
    before = m1.requests.length;
    for (const c of [otherName, undefined]) expect((await call(c)).status).toBe(401);
    expect(m1.requests.length).toBe(before);
    // a user's own certificate: the headers are ignored (never forwarded), the certificate is the caller
    res = await call(userCert);
    expect(res.status).toBe(403);
    const sent = m1.requests.at(-1)!;
    expect(sent.headers['impersonate-user']).toBe('x509:dave');
    expect(sent.headers['x-remote-user']).toBeUndefined();
  });
});

describe.each(RUNTIMES)('every upstream call carries the caller, on %s', (runtime) => {
  let issuer: TestIssuer;
  const f = useSimFleet(runtime, {
    prepare: async () => {
      issuer = await startIssuer('fleet');
      return () => issuer.close();
    },
    config: (sims) => sims.karmadaConfig({ authentication: { oidc: [oidcConfig(issuer)] } }),
    start: { tls: SERVING },
  });

  it('discovery, lists, gets, logs, watches, writes, subresources and exec all impersonate the caller', async () => {
    const token = await issuer.sign({ sub: 'erin', groups: ['dev'] });
    const marks = allSims(f.sims).map((x) => x.requests.length);
    const k = new Kubectl(f.url, { caPem: CA.cert, token });
    const m1 = new Kubectl(`${f.url}/clusterspaces/member1`, { caPem: CA.cert, token });
    const pod = f.sims.members
      .get('member1')!
      .list(PODS)
      .find((p) => (p as { status?: { phase?: string } }).status?.phase === 'Running')!;
    const fleetName = `${pod.metadata.name}.clusterspace.member1`;
    const ns = pod.metadata.namespace!;
    const runs: string[][] = [
      ['api-resources', '-o', 'name'],
      ['get', 'pods', '-A'],
      ['get', 'deployments', '-A', '-o', 'name'],
      ['get', 'pod', fleetName, '-n', ns, '-o', 'yaml'],
      ['describe', 'pod', fleetName, '-n', ns],
      ['logs', fleetName, '-n', ns, '--tail', '2'],
      ['get', 'pods', '-A', '--watch', '--request-timeout', '1s'],
      ['explain', 'pods.spec.containers.name'],
    ];
    for (const args of runs) await k.run(args);
    await m1.run(['create', 'configmap', 'who-made-me', '-n', 'default', '--from-literal', 'a=b']);
    await m1.run(['delete', 'configmap', 'who-made-me', '-n', 'default']);
    await m1.run(['exec', pod.metadata.name!, '-n', ns, '--', 'echo', 'hi'], { timeoutMs: 20_000 });

    let checked = 0;
    for (const [i, sim] of allSims(f.sims).entries()) {
      for (const r of sim.requests.slice(marks[i])) {
        const path = new URL(r.url).pathname;
        // the fleet's own bookkeeping: who is in the fleet (Cluster objects on the control plane)
        if (sim === f.sims.karmada && path === '/apis/cluster.karmada.io/v1alpha1/clusters') continue;
        // requests the control plane relays to a member through its cluster proxy are checked there too
        expect(r.headers['impersonate-user'], `${sim.name} ${r.method} ${path}`).toBe(`oidc:erin`);
        expect(r.headers['impersonate-group'], `${sim.name} ${r.method} ${path}`).toBe('oidc:dev');
        expect(r.headers.authorization).toBe('Bearer fleet-demo-token');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
    // the exec itself reached member1 as erin
    const exec = f.sims.members
      .get('member1')!
      .requests.slice(marks[1])
      .filter((r) => r.url.includes('/exec'));
    expect(exec.length).toBeGreaterThan(0);
  });
});

/**
 * The security suite: what an untrusted caller might try, on Node and in workerd over real HTTP, and a
 * property-based fuzz (fast-check) of the request parser, the RV and continue codecs and the whole app
 * in-process. Every refusal must be a 4xx Status, never a 5xx, and a refused call must send nothing to any
 * cluster. The fuzz prints how many cases ran (FUZZ_CASES) for the closing note.
 */
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { SimCluster } from '../../sim/index.ts';
import { decodeContinue, encodeContinue } from '../../src/merge/continue.ts';
import {
  decodeComposite,
  encodeComposite,
  ownResourceVersion,
  planResourceVersion,
  prepareMembership,
} from '../../src/merge/rv/index.ts';
import { kubePathWithName, parseRequestInfo, RequestPathError } from '../../src/request/info.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { inProcessFleet } from '../helpers/inprocess.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

function sims(s: ServedSimFleet): SimCluster[] {
  return [s.karmada, ...s.members.values()];
}
const sent = (s: ServedSimFleet) => sims(s).reduce((n, x) => n + x.requests.length, 0);

/** A raw HTTP request: the path goes on the wire exactly as given (fetch would normalize it). */
function raw(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe.each(RUNTIMES)('security on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    prepare: (s) => {
      // the control plane answers reviews for nobody but the fleet itself
      s.karmada.rbac = {};
    },
    config: (s) =>
      s.staticConfig({
        authentication: { anonymous: { enabled: true }, staticTokens: { csv: 'user-token,uma,1,"staff"' } },
        callerImpersonation: { cacheSeconds: 0 },
      }),
  });

  it('smuggled Impersonate-* headers are refused (403) and reach no cluster', async () => {
    const attempts: Array<Record<string, string>> = [
      { 'Impersonate-User': 'system:admin', 'Impersonate-Group': 'system:masters' },
      { 'IMPERSONATE-USER': 'admin' },
      { 'Impersonate-User': 'system:serviceaccount:kube-system:default' },
      { 'Impersonate-User': 'bob', 'Impersonate-Extra-Scopes': 'all' },
      { 'Impersonate-User': 'bob', 'Impersonate-Uid': '0' },
    ];
    const callers: Array<Record<string, string>> = [{}, { Authorization: 'Bearer user-token' }];
    for (const who of callers) {
      for (const h of attempts) {
        const before = f.sims.members.get('member1')!.requests.length;
        const res = await fetch(`${f.url}/clusterspaces/member1/api/v1/pods`, {
          headers: { ...who, ...h },
        });
        expect(res.status, JSON.stringify(h)).toBe(403);
        expect(((await res.json()) as { reason: string }).reason).toBe('Forbidden');
        expect(f.sims.members.get('member1')!.requests.length).toBe(before);
      }
    }
    // groups, uid or extras without a user: a 400, no review, nothing sent
    const before = sent(f.sims);
    const partial: Array<Record<string, string>> = [
      { 'Impersonate-Group': 'system:masters' },
      { 'Impersonate-Extra-X': 'y' },
      { 'Impersonate-Uid': '1' },
    ];
    for (const h of partial) expect((await fetch(`${f.url}/api/v1/pods`, { headers: h })).status).toBe(400);
    expect(sent(f.sims)).toBe(before);
  });

  it('X-Remote-*, edge assertions and the fleet’s own token from a caller are no credentials', async () => {
    const m1 = f.sims.members.get('member1')!;
    const res = await fetch(`${f.url}/clusterspaces/member1/api/v1/pods`, {
      headers: {
        'X-Remote-User': 'system:admin',
        'X-Remote-Group': 'system:masters',
        'X-Remote-Extra-Scopes': 'all',
        'Cf-Access-Jwt-Assertion': 'e30.e30.',
      },
    });
    expect(res.status).toBe(200);
    const h = m1.requests.at(-1)!.headers;
    expect(h['impersonate-user']).toBe('system:anonymous');
    expect(
      Object.keys(h).filter((k) => k.startsWith('x-remote-') || k === 'cf-access-jwt-assertion'),
    ).toEqual([]);
    // a token the fleet itself uses upstream is not a credential for calling the fleet
    const before = sent(f.sims);
    const own = await fetch(`${f.url}/api/v1/pods`, {
      headers: { Authorization: 'Bearer fleet-demo-token' },
    });
    expect(own.status).toBe(401);
    expect(sent(f.sims)).toBe(before);
  });

  it('path tricks: encoded slashes, NUL, //, bad escapes, unknown clusterspaces, odd fleet names', async () => {
    const refused: Array<[string, number]> = [
      ['/api/v1/namespaces/default/pods/a%2Fb', 400],
      ['/api/v1/namespaces/default/pods/a%2fb/log', 400],
      ['/clusterspaces/member1%2F..%2Fmember2/api/v1/pods', 400],
      ['/api/v1/namespaces/default/pods/a%00b', 400],
      ['/api/v1/namespaces/default/pods/%ZZ', 400],
      ['/api/v1//pods', 400],
      ['/clusterspaces//member1/api/v1/pods', 400],
      ['/clusterspaces/nope/api/v1/pods', 404],
      ['/clusterspaces/http:%2F%2Fevil.example/api/v1/pods', 400],
      ['/clusterspaces/evil.example/api/v1/pods', 404],
      ['/api/v1/namespaces/default/clusterspaces/nope/pods', 404],
      ['/clusterspaces', 404],
      ['/api/v1/namespaces/default/pods/...clusterspace.member1', 400],
      ['/api/v1/namespaces/default/pods/..clusterspace.member1', 400],
      ['/api/v1/namespaces/default/pods/x.clusterspace.nope', 404],
      ['/api/v1/namespaces/default/clusterspaces/member2/pods/x.clusterspace.member1', 400],
    ];
    for (const [path, code] of refused) {
      const before = sent(f.sims);
      const r = await raw(f.url, path);
      expect(r.status, path).toBe(code);
      expect(JSON.parse(r.body).kind, path).toBe('Status');
      expect(sent(f.sims), path).toBe(before);
    }
    // a trailing slash is the same request; a leading `//` is kube's not-found 404 (its director matches
    // `/api` as a path prefix and cleans nothing), never the namespaces
    expect((await raw(f.url, '/api/v1/namespaces/')).status).toBe(200);
    expect((await raw(f.url, '//api/v1/namespaces/')).status).toBe(404);
    // names the fleet passes on get the cluster's own answer (404; 403 from the control plane, whose RBAC
    // lets the anonymous caller see nothing here), never a 5xx
    for (const path of [
      '/api/v1/namespaces/default/pods/x.clusterspace.',
      '/api/v1/namespaces/default/pods/x.clusterspace.MEMBER1',
      '/api/v1/namespaces/default/pods/x.clusterspace.member1.clusterspace.member2',
      '/api/v1/namespaces/default/pods/x.clusterspace.all',
      '/api/v1/clusterspaces/member1/namespaces/default/clusterspaces/member2/pods',
    ])
      expect([403, 404]).toContain((await raw(f.url, path)).status);
  });

  it('dot segments: refused from the raw request target on Node; on Workers the runtime resolves them first', async () => {
    const m1 = f.sims.members.get('member1')!;
    const m2 = f.sims.members.get('member2')!;
    const [b1, b2] = [m1.requests.length, m2.requests.length];
    for (const path of [
      '/clusterspaces/member2/../member1/api/v1/namespaces',
      '/clusterspaces/member2/%2e%2e/member1/api/v1/namespaces',
    ]) {
      const r = await raw(f.url, path);
      if (runtime === 'node') {
        // what the README promises: a 400 Status, and nothing reaches any cluster
        expect(r.status).toBe(400);
        expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', code: 400 });
        expect(m1.requests.length).toBe(b1);
      } else {
        // workerd hands the worker a URL with dot segments already resolved (README "Security"): one
        // resolved path then decides routing, policy and audit alike
        expect(r.status).toBe(200);
      }
      expect(m2.requests.length).toBe(b2);
    }
  });

  it('oversized and malformed bodies, headers and URLs: 4xx Statuses, nothing sent', async () => {
    const m1 = f.sims.members.get('member1')!;
    const path = '/clusterspaces/member1/api/v1/namespaces/default/configmaps';
    let before = m1.requests.length;
    const big = 'x'.repeat(3 * 1024 * 1024 + 1);
    let r = await fetch(`${f.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: big,
    });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { reason: string }).reason).toBe('RequestEntityTooLarge');
    // the same without Content-Length (chunked)
    const chunk = new TextEncoder().encode('x'.repeat(256 * 1024));
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ < 16) c.enqueue(chunk);
        else c.close();
      },
    });
    r = await fetch(`${f.url}${path}`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(r.status).toBe(413);
    expect(m1.requests.length).toBe(before);

    r = await fetch(`${f.url}/api/v1/pods?labelSelector=${'a'.repeat(17 * 1024)}`);
    expect(r.status).toBe(414);
    r = await fetch(`${f.url}/api/v1/pods`, { headers: { 'X-Padding': 'p'.repeat(40 * 1024) } });
    expect(r.status).toBe(431);
    expect(m1.requests.length).toBe(before);

    // malformed bodies go where they were sent and come back as the cluster's 400, or the fleet's
    before = m1.requests.length;
    for (const [p, b] of [
      [path, '{"kind":"ConfigMap",'],
      [path, '\u0000\u0001'],
      ['/api/v1/namespaces/default/configmaps', '{"metadata":{"name":'],
      ['/api/v1/namespaces/default/configmaps', '[]'],
    ] as const) {
      const res = await fetch(`${f.url}${p}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: b,
      });
      expect(res.status, `${p} ${b}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${p} ${b}`).toBeLessThan(500);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// property-based fuzz

const counts: Record<string, number> = {};
function run<T>(name: string, arb: fc.Arbitrary<T>, prop: (v: T) => void, numRuns: number): void {
  fc.assert(fc.property(arb, prop), { numRuns, seed: 0x5eed + numRuns });
  counts[name] = (counts[name] ?? 0) + numRuns;
}
async function runAsync<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  prop: (v: T) => Promise<void>,
  numRuns: number,
): Promise<void> {
  await fc.assert(fc.asyncProperty(arb, prop), { numRuns, seed: 0x5eed + numRuns });
  counts[name] = (counts[name] ?? 0) + numRuns;
}

const MEMBERS = ['member1', 'member2', 'member3'];
const seg = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'api',
      'apis',
      'v1',
      'apps',
      'namespaces',
      'default',
      'pods',
      'log',
      'status',
      'clusterspaces',
      'all',
      'karmada',
      ...MEMBERS,
      'watch',
      'deployments',
      'proxy',
      'exec',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      '.',
      '..',
      '%2F',
      '%2f',
      '%2e%2e',
      '%2E',
      '%00',
      '%',
      '%ZZ',
      '%252F',
      'a%20b',
      '~',
      ';',
      'x.clusterspace.member1',
      '...clusterspace.member1',
      'x.clusterspace.',
      'x.clusterspace.nope',
    ),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z0-9.-]{1,20}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: 'grapheme' }).map(encodeURIComponent) },
);
const path = fc.array(seg, { maxLength: 10 }).map((xs) => `/${xs.join('/')}`);
const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS');
const rvString = fc.oneof(
  fc.constantFrom('', '0', '1', '01', '-1', 'F1', 'F1x', '1000000000', '1'.repeat(120)),
  fc.bigInt({ min: 0n, max: 10n ** 40n }).map(String),
  fc.string({ maxLength: 60 }),
  fc
    .base64String({ maxLength: 80 })
    .map((b) => `F1${b.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}`),
);

// CPU-bound and long on 2 noisy cores: each fuzz test gets its own generous timeout
describe('fuzz (fast-check)', { timeout: 300_000 }, () => {
  afterAll(() => {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`FUZZ_CASES ${JSON.stringify({ ...counts, total })}`);
  });

  it('the request parser answers every path with a RequestInfo or a 400/404 RequestPathError', () => {
    run(
      'parser',
      fc.tuple(method, path, fc.constantFrom('', 'watch=true', 'watch=1', 'watch=false')),
      ([m, p, q]) => {
        let info: ReturnType<typeof parseRequestInfo>;
        try {
          info = parseRequestInfo(m, p, new URLSearchParams(q));
        } catch (e) {
          expect(e).toBeInstanceOf(RequestPathError);
          expect([400, 404]).toContain((e as RequestPathError).code);
          return;
        }
        // what goes upstream has no empty or dot segments and names no clusterspace any more
        const segs = info.kubePath.split('/').slice(1);
        for (const x of segs) {
          expect(x === '' && info.kubePath !== '/').toBe(false);
          expect(['.', '..']).not.toContain(decodeURIComponent(x));
          expect(decodeURIComponent(x)).not.toContain('/');
        }
        if (info.isResourceRequest && info.name) {
          try {
            const again = kubePathWithName(info, info.name);
            expect(again.split('/').every((x, i) => i === 0 || (x !== '' && x !== '.' && x !== '..'))).toBe(
              true,
            );
          } catch (e) {
            expect(e).toBeInstanceOf(RequestPathError);
          }
        }
      },
      25_000,
    );
  });

  it('the RV codec never throws, and answers bad input with 4xx Statuses', () => {
    const membership = fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), {
      minLength: 1,
      maxLength: 8,
    });
    run(
      'rv-decode',
      fc.tuple(membership, rvString, fc.constantFrom('', 'Exact', 'NotOlderThan', 'exact', 'x')),
      ([names, rv, match]) => {
        const m = prepareMembership(names);
        decodeComposite(rv, m);
        for (const verb of ['list', 'watch'] as const) {
          const plan = planResourceVersion(verb, m, rv, match);
          if (!plan.ok) expect(plan.status.code).toBeGreaterThanOrEqual(400);
          if (!plan.ok) expect(plan.status.code).toBeLessThan(500);
        }
        const own = ownResourceVersion(rv, m, names[0]!);
        if (!own.ok) expect(own.status.code).toBe(400);
      },
      20_000,
    );
    run(
      'rv-roundtrip',
      fc
        .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { minLength: 1, maxLength: 8 })
        .chain((names) =>
          fc.tuple(
            fc.constant(names),
            fc.array(
              fc.oneof(
                fc.constant(''),
                fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String),
                fc.string({ maxLength: 10 }),
              ),
              {
                minLength: names.length,
                maxLength: names.length,
              },
            ),
            fc.nat(),
            fc.integer({ min: 0, max: 255 }),
          ),
        ),
      ([names, rvs, at, byte]) => {
        const m = prepareMembership(names);
        const map = new Map(m.names.map((n, i) => [n, rvs[i]!]));
        const c = encodeComposite(m, map);
        const d = decodeComposite(c, m);
        expect(d.ok).toBe(true);
        // one character changed: decodes to something, or is refused; never throws
        const i = at % c.length;
        const mutated = c.slice(0, i) + String.fromCharCode(byte) + c.slice(i + 1);
        decodeComposite(mutated, m);
        const plan = planResourceVersion('watch', m, mutated, '');
        if (!plan.ok) expect(plan.status.code).toBe(410);
      },
      10_000,
    );
  });

  it('the continue codec never throws, and refuses what it did not write', () => {
    run(
      'continue-decode',
      fc.tuple(
        fc.oneof(fc.string({ maxLength: 200 }), fc.base64String({ maxLength: 300 })),
        fc.constantFrom(['a'], MEMBERS),
      ),
      ([token, names]) => {
        const d = decodeContinue(token, names);
        if (d.ok) expect(names).toContain(d.cluster);
      },
      15_000,
    );
    run(
      'continue-mutate',
      fc.tuple(fc.nat({ max: 2 }), fc.string({ maxLength: 30 }), fc.nat(), fc.integer({ min: 0, max: 127 })),
      ([at, upstream, pos, byte]) => {
        const t = encodeContinue(MEMBERS, at, upstream, new Map([['member1', '10']]), 0);
        expect(decodeContinue(t, MEMBERS).ok).toBe(true);
        const i = pos % t.length;
        const mutated = t.slice(0, i) + String.fromCharCode(byte) + t.slice(i + 1);
        const d = decodeContinue(mutated, MEMBERS);
        // another valid token (the upstream part is opaque), but only ever the canonical form of what it says
        if (d.ok) expect(encodeContinue(MEMBERS, d.index, d.upstream, d.rvs, d.skip)).toBe(mutated);
      },
      10_000,
    );
  });

  it('the app answers any request with < 500, and a refused request sends nothing upstream', async () => {
    const f = inProcessFleet({ members: MEMBERS, seed: false });
    const all = [f.karmada, ...f.members.values()];
    const count = () => all.reduce((n, x) => n + x.requests.length, 0);
    const query = fc.array(
      fc.tuple(
        fc.constantFrom(
          'limit',
          'continue',
          'resourceVersion',
          'resourceVersionMatch',
          'watch',
          'labelSelector',
          'fieldSelector',
          'timeoutSeconds',
          'x',
        ),
        fc.oneof(
          rvString,
          fc.constantFrom(
            '-1',
            '0',
            '5',
            'true',
            'metadata.name=x.clusterspace.member1',
            'a=b,c!=d',
            'a in (b)',
            '((',
          ),
        ),
      ),
      { maxLength: 4 },
    );
    const headers = fc.dictionary(
      fc.constantFrom(
        'accept',
        'content-type',
        'impersonate-group',
        'impersonate-extra-x',
        'x-remote-user',
        'authorization',
      ),
      fc.constantFrom(
        'application/json',
        'application/json;as=Table;v=v1;g=meta.k8s.io',
        '*/*',
        'application/vnd.kubernetes.protobuf',
        'text/plain',
        'g',
        'Basic eDp5',
        'Bearer',
      ),
      { maxKeys: 3 },
    );
    const errors: string[] = [];
    await runAsync(
      'app',
      fc.tuple(
        fc.constantFrom('GET', 'GET', 'GET', 'DELETE', 'POST', 'PUT', 'PATCH', 'OPTIONS'),
        path,
        query,
        headers,
        fc.constantFrom(undefined, '{}', '{"metadata":{"name":"x.clusterspace.member1"}}', '{', 'null'),
      ),
      async ([m, p, q, h, body]) => {
        const qs = new URLSearchParams(q).toString();
        let refusedByParser = false;
        let expectNoUpstream = false;
        try {
          // the runtime hands the app a normalized URL (dot segments resolved): parse what it will see
          const info = parseRequestInfo(m, new URL(`http://x${p}`).pathname, new URLSearchParams(qs));
          const cs = info.clusterspace;
          expectNoUpstream = cs !== undefined && cs !== 'all' && cs !== 'karmada' && !MEMBERS.includes(cs);
        } catch {
          refusedByParser = true;
          expectNoUpstream = true;
        }
        // a bearer token the fleet does not know: 401 (other schemes are no credential at all, as in kube)
        if (/^bearer\s+\S+/i.test(h.authorization ?? '')) expectNoUpstream = true;
        const before = count();
        const res = await f.fetch(`${p}${qs ? `?${qs}` : ''}`, {
          method: m,
          headers: h,
          ...(body !== undefined && m !== 'GET' ? { body } : {}),
        });
        await res.body?.cancel();
        if (res.status >= 500) errors.push(`${m} ${p}?${qs} ${JSON.stringify(h)} → ${res.status}`);
        expect(res.status).toBeLessThan(500);
        if (refusedByParser) expect(res.status).toBeGreaterThanOrEqual(400);
        if (expectNoUpstream) expect(count()).toBe(before);
      },
      12_000,
    );
    expect(errors).toEqual([]);
  }, 300_000);
});

import { describe, expect, it } from 'vitest';
import type { SimRule } from '../../../sim/rbac.ts';
import { inProcessFleet } from '../../../test/helpers/inprocess.ts';
import { impersonatedIdentity, impersonationChecks, parseImpersonation } from '../../auth/impersonate.ts';
import { UpstreamClient } from '../../upstreams/client.ts';
import type { ResolvedEndpoint } from '../../upstreams/endpoint.ts';

const TOKENS = 'alice-token,alice,a-1,"dev"\n';
const may = (resources: string[], names: string[], extra: Partial<SimRule> = {}): SimRule => ({
  verbs: ['impersonate'],
  apiGroups: [''],
  resources,
  resourceNames: names,
  ...extra,
});

function fleet(extra: Record<string, unknown> = {}) {
  const f = inProcessFleet(
    { members: ['m1'], seed: false },
    { authentication: { staticTokens: { csv: TOKENS } }, callerImpersonation: { cacheSeconds: 0 }, ...extra },
  );
  f.karmada.rbac = {
    users: {
      alice: [
        may(['users'], ['bob']),
        may(['groups'], ['g1']),
        may(['serviceaccounts'], ['builder'], { namespaces: ['ci'] }),
        may(['uids'], ['b-1'], { apiGroups: ['authentication.k8s.io'] }),
        may(['userextras/scopes'], ['read'], { apiGroups: ['authentication.k8s.io'] }),
      ],
    },
  };
  const m1 = f.members.get('m1')!;
  const call = (headers: Record<string, string>) =>
    f.fetch('/clusterspaces/m1/api/v1/namespaces/default/configmaps', {
      headers: { Authorization: 'Bearer alice-token', ...headers },
    });
  return { f, m1, call };
}

describe('impersonation middleware (kubectl --as)', () => {
  it('acts as the impersonated identity once every part is allowed; the raw headers never travel', async () => {
    const { f, m1, call } = fleet();
    const res = await call({
      'Impersonate-User': 'bob',
      'Impersonate-Group': 'g1',
      'Impersonate-Uid': 'b-1',
      'Impersonate-Extra-Scopes': 'read',
    });
    expect(res.status).toBe(200);
    const sent = m1.requests.at(-1)!.headers;
    expect(sent['impersonate-user']).toBe('bob');
    expect(sent['impersonate-group']).toBe('g1');
    expect(sent['impersonate-uid']).toBe('b-1');
    expect(sent['impersonate-extra-scopes']).toBe('read');
    // one review per part, on the control plane
    const reviews = f.karmada.requests.filter((r) => r.url.endsWith('/subjectaccessreviews'));
    expect(reviews).toHaveLength(4);
  });

  it('denies with kube’s words for the first part not allowed, and sends nothing to the cluster', async () => {
    const { m1, call } = fleet();
    const cases: Array<[Record<string, string>, string]> = [
      [
        { 'Impersonate-User': 'carol' },
        'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' },
        'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
      ],
      [
        { 'Impersonate-User': 'system:serviceaccount:prod:builder' },
        'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "prod"',
      ],
      [
        { 'Impersonate-User': 'bob', 'Impersonate-Extra-Scopes': 'write' },
        'userextras.authentication.k8s.io "write" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
      ],
    ];
    for (const [headers, message] of cases) {
      const before = m1.requests.length;
      const res = await call(headers);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toBe(message);
      expect(m1.requests.length).toBe(before);
    }
  });

  it('a service account it may impersonate gets its fixed groups', async () => {
    const { m1, call } = fleet();
    const res = await call({ 'Impersonate-User': 'system:serviceaccount:ci:builder' });
    expect(res.status).toBe(200);
    expect(m1.requests.at(-1)!.headers['impersonate-group']).toBe(
      'system:serviceaccounts, system:serviceaccounts:ci',
    );
  });

  it('groups without a user are a 400; impersonation switched off is a 403', async () => {
    expect((await fleet().call({ 'Impersonate-Group': 'g1' })).status).toBe(400);
    const off = fleet({ callerImpersonation: { enabled: false } });
    const res = await off.call({ 'Impersonate-User': 'bob' });
    expect(res.status).toBe(403);
    expect(off.f.karmada.requests.some((r) => r.url.endsWith('/subjectaccessreviews'))).toBe(false);
  });

  it('reviews on the target cluster when configured, and reuses answers for cacheSeconds', async () => {
    const { f, m1, call } = fleet({ callerImpersonation: { reviewOn: 'target', cacheSeconds: 60 } });
    m1.rbac = {
      users: {
        alice: [may(['users'], ['bob'])],
        bob: [{ verbs: ['list'], apiGroups: [''], resources: ['configmaps'] }],
      },
    };
    for (let i = 0; i < 3; i++) expect((await call({ 'Impersonate-User': 'bob' })).status).toBe(200);
    expect(m1.requests.filter((r) => r.url.endsWith('/subjectaccessreviews'))).toHaveLength(1);
    expect(f.karmada.requests.some((r) => r.url.endsWith('/subjectaccessreviews'))).toBe(false);
  });
});

describe('impersonation requests (pure)', () => {
  const req = (h: Record<string, string>) => ({ headers: new Headers(h) });

  it('parses headers as kube does, with the exact lines when the runtime has them', () => {
    expect(parseImpersonation(req({}))).toEqual({ kind: 'none' });
    const lines = { headerLines: (n: string) => (n === 'impersonate-group' ? ['a, b', 'c'] : undefined) };
    const p = parseImpersonation({ headers: new Headers({ 'Impersonate-User': 'u' }), facts: lines });
    expect(p).toEqual({ kind: 'requested', requested: { user: 'u', groups: ['a, b', 'c'], extra: {} } });
    expect(parseImpersonation(req({ 'Impersonate-Uid': '1' })).kind).toBe('invalid');
    expect(parseImpersonation(req({ 'Impersonate-User': 'u', 'Impersonate-Extra-%ZZ': 'x' })).kind).toBe(
      'invalid',
    );
  });

  it('asks one question per part and builds the identity kube would', () => {
    const r = { user: 'system:anonymous', groups: [], extra: { 'a/b': ['1', '2'] } };
    expect(
      impersonationChecks(r).map((c) => `${c.resource}${c.subresource ? `/${c.subresource}` : ''}:${c.name}`),
    ).toEqual(['users:system:anonymous', 'userextras/a/b:1', 'userextras/a/b:2']);
    expect(impersonatedIdentity(r)).toEqual({
      user: 'system:anonymous',
      groups: ['system:unauthenticated'],
      extra: { 'a/b': ['1', '2'] },
    });
    expect(impersonatedIdentity({ user: 'u', groups: ['system:unauthenticated'], extra: {} }).groups).toEqual(
      ['system:unauthenticated'],
    );
  });
});

describe('the request’s bound upstream client', () => {
  const ep: ResolvedEndpoint = {
    name: 'm1',
    server: 'https://m1.example',
    insecureSkipTLSVerify: false,
    token: () => 'fleet-token',
    timeoutMs: 1000,
    poolKey: 'm1',
  };
  function capture() {
    const seen: Array<{ headers: Headers; lines: ReadonlyArray<readonly [string, string]> }> = [];
    const client = new UpstreamClient({
      async send(_e, req) {
        seen.push({ headers: req.headers, lines: req.headerLines ?? [] });
        return new Response('{}');
      },
    });
    return { client, seen };
  }

  it('always sends its caller, whatever headers a call site passes, and drops the configured claim headers', async () => {
    const { client, seen } = capture();
    const bound = client.forCaller({
      as: { mode: 'impersonate', identity: { user: 'alice', groups: ['a', 'b', 'system:authenticated'] } },
      dropHeaders: new Set(['x-edge-user']),
      dropHeaderPrefixes: ['x-auth-extra-'],
    });
    await bound.send(ep, {
      method: 'GET',
      path: '/api',
      headers: new Headers({
        'X-Edge-User': 'root',
        'X-Auth-Extra-Scope': 'all',
        'Impersonate-User': 'root',
        Accept: 'x',
      }),
    });
    const { headers, lines } = seen[0]!;
    expect(lines).toEqual([
      ['Impersonate-User', 'alice'],
      ['Impersonate-Group', 'a'],
      ['Impersonate-Group', 'b'],
    ]);
    expect(headers.get('authorization')).toBe('Bearer fleet-token');
    expect([...headers.keys()]).toEqual(['accept', 'authorization']);
  });

  it('passthrough mode sends the caller’s token and never the fleet’s, and refuses client-certificate endpoints', async () => {
    const { client, seen } = capture();
    const bound = client.forCaller({ as: { mode: 'passthrough', authorization: 'Bearer caller' } });
    await bound.send(ep, { method: 'GET', path: '/api' });
    expect(seen[0]!.headers.get('authorization')).toBe('Bearer caller');
    expect(seen[0]!.lines).toEqual([]);
    await expect(
      bound.send({ ...ep, certPem: 'x', keyPem: 'y' }, { method: 'GET', path: '/api' }),
    ).rejects.toThrow(/passthrough/);
  });
});

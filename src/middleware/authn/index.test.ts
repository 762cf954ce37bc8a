import { Hono } from 'hono';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessFleet } from '../../../test/helpers/inprocess.ts';
import { AuditLog } from '../../auth/audit.ts';
import { bearerToken, buildAuthn, TokenCache, useCertificateAuthn } from '../../auth/authenticator.ts';
import { certificateAuthn } from '../../auth/certificates.ts';
import { mapClaims } from '../../auth/jwt.ts';
import { type ClientCertificate, TRANSPORT_FACTS, type TransportFacts } from '../../auth/request.ts';
import { parseTokenCsv, StaticTokenAuthenticator } from '../../auth/static.ts';
import { parseConfig } from '../../config/schema.ts';
import { authenticationSchema, oidcSchema, resolveSecurityFiles } from '../../config/security.ts';
import type { FleetEnv } from '../../types.ts';
import { middleware } from '../filter.ts';
import { authentication } from './index.ts';

// client certificates are authenticated as on the Node server (deploy/node/tls.ts links these in)
useCertificateAuthn(certificateAuthn);

const ISSUER = 'https://issuer.example';
let privateKey: CryptoKey;
let jwks: { keys: Record<string, unknown>[] };

beforeAll(async () => {
  const kp = await generateKeyPair('ES256', { extractable: true });
  privateKey = kp.privateKey;
  jwks = { keys: [{ ...(await exportJWK(kp.publicKey)), kid: 'k1', alg: 'ES256' }] };
});

function sign(claims: JWTPayload, exp = 600, alg = 'ES256'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg, kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience('fleet')
    .setIssuedAt(now)
    .setExpirationTime(now + exp)
    .sign(privateKey);
}

function app(auth: unknown, facts?: TransportFacts) {
  const authn = buildAuthn(authenticationSchema.parse(auth));
  const a = new Hono<FleetEnv>();
  a.use(middleware(authentication(authn, new AuditLog(false))));
  a.get('*', (c) => c.json({ user: c.get('user'), via: c.get('authn').via }));
  return (headers: Record<string, string> = {}) =>
    a.fetch(new Request('http://fleet/api', { headers }), facts ? { [TRANSPORT_FACTS]: facts } : undefined);
}

const oidc = (extra: Record<string, unknown> = {}) => ({
  issuer: ISSUER,
  audiences: ['fleet'],
  jwks,
  algorithms: ['ES256'],
  groupsClaim: 'groups',
  ...extra,
});

describe('authentication middleware', () => {
  it('maps an OIDC token like kube: <issuer># prefix by default, groups, system:authenticated', async () => {
    const call = app({ oidc: [oidc()] });
    const res = await call({ Authorization: `Bearer ${await sign({ sub: 'alice', groups: ['dev'] })}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      user: { user: `${ISSUER}#alice`, groups: ['dev', 'system:authenticated'] },
      via: `oidc:${ISSUER}`,
    });
  });

  it('refuses with 401 + WWW-Authenticate; a bad token is refused even when anonymous is on', async () => {
    const call = app({ oidc: [oidc()], anonymous: { enabled: true } });
    const expired = await sign({ sub: 'alice' }, -120);
    const res = await call({ Authorization: `Bearer ${expired}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="fleet-apiserver", error="invalid_token"');
    expect(await res.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
    // no credential at all: anonymous
    const anon = await call();
    expect(await anon.json()).toEqual({
      user: { user: 'system:anonymous', groups: ['system:unauthenticated'] },
      via: 'anonymous',
    });
  });

  it('anonymous is off by default: no credential → 401', async () => {
    const res = await app({ oidc: [oidc()] })();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="fleet-apiserver"');
  });

  it('accepts only the configured algorithms', async () => {
    const call = app({ oidc: [oidc({ algorithms: ['RS256'] })] });
    expect((await call({ Authorization: `Bearer ${await sign({ sub: 'a' })}` })).status).toBe(401);
  });

  it('static tokens in kube’s CSV format, through the app', async () => {
    const call = app({ staticTokens: { csv: 't1,alice,u1,"a,b"\nt2,bob,u2\n' } });
    expect(await (await call({ Authorization: 'Bearer t2' })).json()).toEqual({
      user: { user: 'bob', groups: ['system:authenticated'], uid: 'u2' },
      via: 'static-token',
    });
    expect((await call({ Authorization: 'Bearer t3' })).status).toBe(401);
    expect((await call({ Authorization: 'Basic dDE6eA==' })).status).toBe(401);
  });

  it('x509 and front-proxy identities come only from the runtime’s verified certificate', async () => {
    const cert = (trustedBy: ClientCertificate['trustedBy'], commonName = 'dave'): TransportFacts => ({
      clientCertificate: { commonName, organizations: ['ops', 'dev'], trustedBy, fingerprint256: 'AA' },
      headerLines: (n) => (n === 'x-remote-group' ? ['g1', 'g, 2'] : undefined),
    });
    const cfg = {
      x509: { clientCAData: 'eA==' },
      frontProxy: { clientCAData: 'eA==', allowedNames: ['proxy'] },
    };
    const headers = { 'X-Remote-User': 'eve', 'X-Remote-Group': 'ignored', 'X-Remote-Extra-Scopes%2Fa': 'r' };
    let res = await app(cfg, cert(['x509']))(headers);
    expect(await res.json()).toEqual({
      user: { user: 'dave', groups: ['ops', 'dev', 'system:authenticated'] },
      via: 'x509',
    });
    res = await app(cfg, cert(['frontProxy'], 'proxy'))(headers);
    expect(await res.json()).toEqual({
      user: {
        user: 'eve',
        groups: ['g1', 'g, 2', 'system:authenticated'],
        extra: { 'scopes/a': ['r'] },
      },
      via: 'front-proxy:proxy',
    });
    // a front-proxy certificate whose name is not allowed is refused; no certificate: headers mean nothing
    expect((await app(cfg, cert(['frontProxy'], 'other'))(headers)).status).toBe(401);
    expect((await app(cfg)(headers)).status).toBe(401);
  });

  it('an outcome with nothing to await is given at once; a token or an assertion is awaited', async () => {
    const anon = buildAuthn(authenticationSchema.parse({ anonymous: { enabled: true }, oidc: [oidc()] }));
    const none = anon.authenticate({ headers: new Headers() });
    expect(none).not.toBeInstanceOf(Promise);
    expect(none).toMatchObject({ ok: true, via: 'anonymous', identity: { user: 'system:anonymous' } });
    const token = anon.authenticate({ headers: new Headers({ Authorization: 'Bearer nope' }) });
    expect(token).toBeInstanceOf(Promise);
    expect(await token).toMatchObject({ ok: false, reason: 'invalid bearer token', tokenPresented: true });
    const off = buildAuthn(authenticationSchema.parse({ oidc: [oidc()] }));
    expect(off.authenticate({ headers: new Headers() })).toEqual({
      ok: false,
      reason: 'no credentials',
      tokenPresented: false,
    });
    // through the filter: the same answers either way
    expect((await app({ anonymous: { enabled: true } })()).status).toBe(200);
    expect(
      (await app({ anonymous: { enabled: true }, oidc: [oidc()] })({ authorization: 'Bearer x' })).status,
    ).toBe(401);
  });

  it('the edge assertion header is verified like a token', async () => {
    const call = app({ edge: { ...oidc(), header: 'X-Edge-Assertion', usernameClaim: 'email' } });
    const ok = await call({
      'X-Edge-Assertion': await sign({ email: 'a@example.com', email_verified: true }),
    });
    expect(await ok.json()).toEqual({
      user: { user: 'a@example.com', groups: ['system:authenticated'] },
      via: `edge:${ISSUER}`,
    });
    expect((await call({ 'X-Edge-Assertion': 'x.y.z' })).status).toBe(401);
  });
});

describe('claims mapping (kube --oidc-* semantics)', () => {
  const cfg = (extra: Record<string, unknown>) =>
    oidcSchema.parse({ issuer: ISSUER, audiences: ['f'], jwks: { keys: [{}] }, ...extra });

  it('prefix rules: email has none by default; "-" disables; an explicit prefix is used', () => {
    expect(mapClaims(cfg({ usernameClaim: 'email' }), { email: 'a@b' }).user).toBe('a@b');
    expect(mapClaims(cfg({ usernamePrefix: '-' }), { sub: 's' }).user).toBe('s');
    expect(mapClaims(cfg({ usernamePrefix: 'oidc:' }), { sub: 's' }).user).toBe('oidc:s');
    expect(mapClaims(cfg({}), { sub: 's' }).user).toBe(`${ISSUER}#s`);
  });

  it('refuses unverified email, bad groups, missing claims, required-claim mismatches and system: names', () => {
    const bad: Array<[Record<string, unknown>, JWTPayload]> = [
      [{ usernameClaim: 'email' }, { email: 'a@b', email_verified: false }],
      [{ groupsClaim: 'g' }, { sub: 's', g: [1] }],
      [{}, {}],
      [{ requiredClaims: { tenant: 'x' } }, { sub: 's', tenant: 'y' }],
      [{ usernamePrefix: '-' }, { sub: 'system:admin' }],
      [{ groupsClaim: 'g' }, { sub: 's', g: ['system:masters'] }],
    ];
    for (const [c, p] of bad) expect(() => mapClaims(cfg(c), p)).toThrow();
    expect(mapClaims(cfg({ groupsClaim: 'g', groupsPrefix: 'o:' }), { sub: 's', g: 'one' }).groups).toEqual([
      'o:one',
      'system:authenticated',
    ]);
  });
});

describe('static token file', () => {
  it('parses kube’s CSV (quoted groups, comments) and refuses broken lines', () => {
    expect(parseTokenCsv('# c\n\nt,u,id,"a,b"\ns,v,')).toEqual([
      { token: 't', user: 'u', uid: 'id', groups: ['a', 'b'] },
      { token: 's', user: 'v', uid: '', groups: [] },
    ]);
    for (const bad of ['t,u', ',u,1', 't,u,1\nt,v,2', 't,u,1,"a,b'])
      expect(() => parseTokenCsv(bad)).toThrow();
  });

  it('compares hashes of every token without stopping at a match', async () => {
    const s = new StaticTokenAuthenticator(parseTokenCsv('aaaa,one,1\nbbbb,two,2\n'));
    expect((await s.authenticate('bbbb'))?.user).toBe('two');
    expect(await s.authenticate('bbbc')).toBeUndefined();
    expect(await s.authenticate('')).toBeUndefined();
  });
});

describe('token cache (kube-apiserver’s 10 s success cache)', () => {
  it('reuses a success until the TTL or the token’s expiry, whichever is first', () => {
    let now = 1_000_000;
    const c = new TokenCache(10_000, 2, () => now);
    const ok = { kind: 'ok' as const, identity: { user: 'u', groups: [] }, via: 'x' };
    c.put('a', ok);
    c.put('b', ok, now + 2_000);
    expect(c.get('a')?.identity.user).toBe('u');
    now += 2_500;
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBeDefined();
    now += 8_000;
    expect(c.get('a')).toBeUndefined();
    // bounded
    for (const k of ['c', 'd', 'e']) c.put(k, ok);
    expect(c.get('c')).toBeUndefined();
    expect(c.get('e')).toBeDefined();
    expect(new TokenCache(0).enabled).toBe(false);
  });

  it('does not outlive a token that expires: an expired token is refused even after a cached success', async () => {
    const call = app({ oidc: [oidc({ clockSkewSeconds: 0 })] });
    // exp has whole seconds: 2 s from the current second is valid for at least 1 s, and over after 2.1 s
    const soon = await sign({ sub: 'alice' }, 2);
    expect((await call({ Authorization: `Bearer ${soon}` })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await call({ Authorization: `Bearer ${soon}` })).status).toBe(401);
  });
});

describe('startup decisions', () => {
  it('refuses to start when nothing could ever authenticate a request', () => {
    expect(() => inProcessFleet({ members: ['m1'] }, { authentication: {} })).toThrow(
      /no authenticator is configured and anonymous access is off/,
    );
  });

  it('refuses client certificates and TLS serving on Workers, and reads files on Node', () => {
    const base = { controlPlane: { server: 'https://k.example' } };
    const files = { readText: (p: string) => `read:${p}` };
    for (const extra of [
      { authentication: { x509: { clientCA: '/ca.pem' } } },
      { authentication: { frontProxy: { clientCAData: 'eA==' } } },
      { authentication: { anonymous: { enabled: true } }, serving: { certFile: '/c', keyFile: '/k' } },
    ])
      expect(() =>
        resolveSecurityFiles(
          parseConfig({ ...base, ...extra }),
          { name: 'worker', files },
          (m) => new Error(m),
        ),
      ).toThrow(/Node|Workers/);
    const r = resolveSecurityFiles(
      parseConfig({
        ...base,
        authentication: { staticTokens: { file: '/t.csv' }, x509: { clientCA: '/ca' } },
      }),
      { name: 'node', files },
      (m) => new Error(m),
    );
    expect(r.authentication.staticTokens).toEqual({ csv: 'read:/t.csv' });
    expect(atob(r.authentication.x509!.clientCAData!)).toBe('read:/ca');
  });
});

describe('bearer token parsing (kube’s bearertoken authenticator)', () => {
  it('splits at spaces like kube, scheme case-insensitive, empty token = none', () => {
    const t = (v: string) => bearerToken(new Headers({ Authorization: v }));
    expect(t('Bearer abc')).toBe('abc');
    expect(t('bearer abc')).toBe('abc');
    expect(t('Bearer abc extra')).toBe('abc');
    expect(t('Bearer  abc')).toBeUndefined();
    expect(t('Bearer')).toBeUndefined();
    expect(t('Basic abc')).toBeUndefined();
    expect(bearerToken(new Headers())).toBeUndefined();
  });
});

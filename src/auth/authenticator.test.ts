import { describe, expect, it } from 'vitest';
import { authenticationSchema } from '../config/security.ts';
import { assertCanAdmit, bearerToken, buildAuthn, TokenCache, useCertificateAuthn } from './authenticator.ts';
import { certificateAuthn } from './certificates.ts';
import type { ClientCertificate } from './request.ts';

// as the Node server does (deploy/node/tls.ts)
useCertificateAuthn(certificateAuthn);
const authn = (cfg: unknown) => buildAuthn(authenticationSchema.parse(cfg));
const cert = (trustedBy: ClientCertificate['trustedBy'], commonName = 'proxy'): ClientCertificate =>
  ({ commonName, organizations: ['org-a'], trustedBy }) as ClientCertificate;

describe('bearerToken', () => {
  it('reads the token as kube does: scheme case-insensitive, split at spaces, empty is none', () => {
    const h = (v: string) => new Headers({ Authorization: v });
    expect(bearerToken(h('Bearer abc'))).toBe('abc');
    expect(bearerToken(h('bearer abc'))).toBe('abc');
    expect(bearerToken(h('Bearer abc def'))).toBe('abc');
    expect(bearerToken(h('Bearer '))).toBeUndefined();
    expect(bearerToken(h('Basic YTpi'))).toBeUndefined();
    expect(bearerToken(new Headers())).toBeUndefined();
  });
});

describe('buildAuthn', () => {
  it('tries client certificates, then tokens; anonymous only when nothing was presented', async () => {
    const a = authn({
      x509: { clientCAData: 'eA==' },
      staticTokens: { csv: 't1,alice,u1,"dev"' },
      anonymous: { enabled: true },
    });
    const viaCert = await a.authenticate({
      headers: new Headers(),
      facts: { clientCertificate: cert(['x509'], 'carol') },
    });
    expect(viaCert).toMatchObject({
      ok: true,
      via: 'x509',
      identity: { user: 'carol', groups: ['org-a', 'system:authenticated'] },
    });
    const viaToken = await a.authenticate({ headers: new Headers({ Authorization: 'Bearer t1' }) });
    expect(viaToken).toMatchObject({ ok: true, identity: { user: 'alice' }, bearer: 't1' });
    const anon = await a.authenticate({ headers: new Headers() });
    expect(anon).toMatchObject({ ok: true, identity: { user: 'system:anonymous' } });
    // a token nobody knows is refused, even with anonymous on
    expect(await a.authenticate({ headers: new Headers({ Authorization: 'Bearer nope' }) })).toMatchObject({
      ok: false,
      tokenPresented: true,
    });
  });

  it('trusts front-proxy headers only with a front-proxy certificate whose CN is allowed', async () => {
    const a = authn({ frontProxy: { clientCAData: 'eA==', allowedNames: ['proxy'] } });
    const headers = new Headers({
      'X-Remote-User': 'dave',
      'X-Remote-Group': 'ops',
      'X-Remote-Extra-Scopes': 's',
    });
    expect(
      await a.authenticate({ headers, facts: { clientCertificate: cert(['frontProxy']) } }),
    ).toMatchObject({
      ok: true,
      identity: { user: 'dave', groups: ['ops', 'system:authenticated'], extra: { scopes: ['s'] } },
    });
    // the same headers without the certificate, or from another CN, authenticate nobody
    expect((await a.authenticate({ headers })).ok).toBe(false);
    expect(
      (await a.authenticate({ headers, facts: { clientCertificate: cert(['frontProxy'], 'mallory') } })).ok,
    ).toBe(false);
    // a certificate trusted for x509 only is no front proxy
    expect((await a.authenticate({ headers, facts: { clientCertificate: cert(['x509']) } })).ok).toBe(false);
    // and those headers never travel upstream
    expect(a.credentialHeaders.has('x-remote-user')).toBe(true);
    expect(a.credentialHeaderPrefixes).toContain('x-remote-extra-');
  });

  it('refuses client certificates where no runtime verifies them (the worker links no certificate authenticators)', async () => {
    useCertificateAuthn(undefined);
    try {
      expect(() => authn({ x509: { clientCAData: 'eA==' } })).toThrow(
        /config\.authentication\.x509: client certificates need the Node server/,
      );
      expect(() => authn({ frontProxy: { clientCAData: 'eA==' } })).toThrow(
        /config\.authentication\.frontProxy: client certificates need the Node server/,
      );
      // without them configured, front-proxy headers and a certificate fact are nobody's identity
      const a = authn({ anonymous: { enabled: true } });
      const headers = new Headers({ 'X-Remote-User': 'dave', 'X-Remote-Group': 'ops' });
      expect(
        await a.authenticate({ headers, facts: { clientCertificate: cert(['frontProxy', 'x509']) } }),
      ).toMatchObject({ ok: true, via: 'anonymous', identity: { user: 'system:anonymous' } });
    } finally {
      useCertificateAuthn(certificateAuthn);
    }
  });

  it('refuses at startup a configuration that could admit nobody', () => {
    expect(() => assertCanAdmit(authn({}))).toThrow(/no authenticator is configured/);
    expect(() => assertCanAdmit(authn({ anonymous: { enabled: true } }))).not.toThrow();
  });
});

describe('TokenCache', () => {
  const step = { kind: 'ok' as const, identity: { user: 'alice', groups: [] }, via: 'oidc:x' };

  it('keeps a success for its TTL, never past the token expiry', () => {
    let now = 10_000;
    const c = new TokenCache(5_000, 10, () => now);
    c.put('a', step);
    c.put('b', step, now + 1_000);
    now += 1_000;
    expect(c.get('a')).toEqual(step);
    expect(c.get('b')).toBeUndefined();
    now += 4_000;
    expect(c.get('a')).toBeUndefined();
  });

  it('keeps nothing when off, and keeps only the identity of what it is given', () => {
    const off = new TokenCache(0);
    off.put('a', step);
    expect(off.get('a')).toBeUndefined();
    const c = new TokenCache(1_000);
    c.put('a', { ...step, claims: { secret: 1 } } as never);
    expect(c.get('a')).toEqual(step);
  });
});

import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { edgeSchema, oidcSchema } from '../config/security.ts';
import { JwtVerifier, mapClaims, peekIssuer, TokenError } from './jwt.ts';

const ISSUER = 'https://issuer.example';
const NOW = 1_800_000_000; // a fixed clock, seconds
let privateKey: CryptoKey;
let jwks: { keys: Record<string, unknown>[] };

beforeAll(async () => {
  const kp = await generateKeyPair('ES256', { extractable: true });
  privateKey = kp.privateKey;
  jwks = { keys: [{ ...(await exportJWK(kp.publicKey)), kid: 'k1', alg: 'ES256' }] };
});

/** A token with exactly the time claims given (none added). */
function sign(claims: JWTPayload): Promise<string> {
  return new SignJWT({ sub: 'alice', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience('fleet')
    .sign(privateKey);
}

function oidcVerifier(extra: Record<string, unknown> = {}) {
  return new JwtVerifier(
    oidcSchema.parse({ issuer: ISSUER, audiences: ['fleet'], jwks, algorithms: ['ES256'], ...extra }),
  );
}

const at = (s: number) => () => s * 1000;

async function refusal(v: JwtVerifier, token: string, now = NOW): Promise<string> {
  const e = await v.verify(token, at(now)).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TokenError);
  return (e as TokenError).message;
}

describe('JwtVerifier time claims', () => {
  it('requires exp, like kube-apiserver (a token without one would never expire)', async () => {
    const v = oidcVerifier();
    expect(await refusal(v, await sign({ iat: NOW }))).toMatch(/claim exp is required/);
    await expect(v.verify(await sign({ iat: NOW, exp: NOW + 60 }), at(NOW))).resolves.toMatchObject({
      sub: 'alice',
    });
  });

  it('requires exp from the edge assertion too', async () => {
    const edge = new JwtVerifier(
      edgeSchema.parse({ issuer: ISSUER, audiences: ['fleet'], jwks, algorithms: ['ES256'] }),
    );
    expect(await refusal(edge, await sign({}))).toMatch(/exp/);
  });

  it('honours exp with the configured skew', async () => {
    const token = await sign({ exp: NOW - 30 });
    expect(await refusal(oidcVerifier(), token)).toMatch(/expired/);
    await expect(oidcVerifier({ clockSkewSeconds: 60 }).verify(token, at(NOW))).resolves.toBeDefined();
  });

  it('honours nbf with the configured skew', async () => {
    const token = await sign({ exp: NOW + 600, nbf: NOW + 30 });
    expect(await refusal(oidcVerifier(), token)).toMatch(/nbf/);
    await expect(oidcVerifier({ clockSkewSeconds: 60 }).verify(token, at(NOW))).resolves.toBeDefined();
    // and once the moment comes, without skew
    await expect(oidcVerifier().verify(token, at(NOW + 30))).resolves.toBeDefined();
  });

  it('refuses a token issued in the future beyond the skew, and accepts one without iat', async () => {
    const future = await sign({ exp: NOW + 600, iat: NOW + 30 });
    expect(await refusal(oidcVerifier(), future)).toMatch(/issued in the future/);
    await expect(oidcVerifier({ clockSkewSeconds: 60 }).verify(future, at(NOW))).resolves.toBeDefined();
    await expect(oidcVerifier().verify(await sign({ exp: NOW + 600 }), at(NOW))).resolves.toBeDefined();
    expect(await refusal(oidcVerifier(), await sign({ exp: NOW + 600, iat: 'yesterday' as never }))).toMatch(
      /iat/,
    );
  });

  it('refuses a wrong issuer, audience or algorithm', async () => {
    const good = await sign({ exp: NOW + 600 });
    expect(await refusal(oidcVerifier({ issuer: 'https://other.example' }), good)).toMatch(/iss/);
    expect(await refusal(oidcVerifier({ audiences: ['else'] }), good)).toMatch(/aud/);
    expect(await refusal(oidcVerifier({ algorithms: ['RS256'] }), good)).toMatch(/algorithm/);
  });
});

describe('mapClaims', () => {
  const cfg = (extra: Record<string, unknown> = {}) =>
    oidcSchema.parse({
      issuer: ISSUER,
      audiences: ['fleet'],
      jwks,
      groupsClaim: 'groups',
      ...extra,
    });

  it('prefixes the username with the issuer unless the claim is email, and adds system:authenticated', () => {
    expect(mapClaims(cfg(), { sub: 'alice', groups: 'dev' })).toEqual({
      user: `${ISSUER}#alice`,
      groups: ['dev', 'system:authenticated'],
    });
    expect(mapClaims(cfg({ usernameClaim: 'email' }), { email: 'a@x', email_verified: true }).user).toBe(
      'a@x',
    );
    expect(() => mapClaims(cfg({ usernameClaim: 'email' }), { email: 'a@x', email_verified: false })).toThrow(
      TokenError,
    );
  });

  it('never maps onto system: names, and refuses groups that are not strings', () => {
    expect(() => mapClaims(cfg({ usernamePrefix: '-' }), { sub: 'system:admin' })).toThrow(/reserved/);
    expect(() => mapClaims(cfg(), { sub: 'a', groups: ['system:masters'] })).toThrow(/reserved/);
    expect(() => mapClaims(cfg(), { sub: 'a', groups: [1] })).toThrow(/not a list of strings/);
  });

  it('enforces requiredClaims exactly', () => {
    expect(() =>
      mapClaims(cfg({ requiredClaims: { hd: 'example.com' } }), { sub: 'a', hd: 'evil.com' }),
    ).toThrow(/required claim hd/);
  });
});

describe('peekIssuer', () => {
  it('reads iss without verifying, and nothing from what is not a JWT', async () => {
    expect(peekIssuer(await sign({}))).toBe(ISSUER);
    expect(peekIssuer('not.a.jwt')).toBeUndefined();
    expect(peekIssuer('opaque-token')).toBeUndefined();
  });
});

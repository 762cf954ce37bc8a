import {
  CompactSign,
  exportJWK,
  FlattenedSign,
  generateKeyPair,
  importJWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { JWTClaimValidationFailed, JWTExpired } from 'jose/errors';
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

describe('JwtVerifier claims, as jose’s jwtVerify checks them', () => {
  /** what the verifier said of a token when jose's JWT layer checked its claims (with the fleet's wording) */
  async function joseSays(token: string, skew: number): Promise<string> {
    try {
      const { payload } = await jwtVerify(token, async () => privateKeyPublic, {
        issuer: ISSUER,
        audience: ['fleet', 'fleet-b'],
        algorithms: ['ES256'],
        clockTolerance: skew,
        requiredClaims: ['exp'],
        currentDate: new Date(NOW * 1000),
      });
      if (typeof payload.iat === 'number' && payload.iat > NOW + skew)
        return 'token was issued in the future (iat)';
      return 'ok';
    } catch (e) {
      if (e instanceof JWTExpired) return 'token has expired';
      if (e instanceof JWTClaimValidationFailed)
        return e.reason === 'missing'
          ? `claim ${e.claim} is required`
          : `claim ${e.claim} is not acceptable (${e.reason})`;
      return `${(e as { code: string }).code}: ${(e as Error).message}`;
    }
  }
  let privateKeyPublic: CryptoKey;
  beforeAll(async () => {
    privateKeyPublic = (await importJWK(jwks.keys[0]!, 'ES256')) as CryptoKey;
  });

  const raw = (payload: string | Uint8Array, header: Record<string, unknown> = {}) =>
    new CompactSign(typeof payload === 'string' ? new TextEncoder().encode(payload) : payload)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...header })
      .sign(privateKey);
  /** a compact JWS whose payload is not base64url-encoded (RFC 7797), which jose signs only flattened */
  const unencoded = async (payload: string) => {
    const f = await new FlattenedSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', b64: false, crit: ['b64'] })
      .sign(privateKey);
    return `${f.protected}.${payload}.${f.signature}`;
  };
  const base = { iss: ISSUER, aud: 'fleet', exp: NOW + 600 };
  const payloads: Array<[string, unknown]> = [
    ['good', base],
    ['aud list naming one', { ...base, aud: ['x', 'fleet-b'] }],
    ['aud list naming none', { ...base, aud: ['x'] }],
    ['aud a number', { ...base, aud: 7 }],
    ['aud empty list', { ...base, aud: [] }],
    ['no iss', { aud: 'fleet', exp: NOW + 600 }],
    ['no aud', { iss: ISSUER, exp: NOW + 600 }],
    ['no exp', { iss: ISSUER, aud: 'fleet' }],
    ['nothing', {}],
    ['iss other', { ...base, iss: 'https://other.example' }],
    ['iss a list', { ...base, iss: [ISSUER] }],
    ['exp null', { ...base, exp: null }],
    ['exp a string', { ...base, exp: String(NOW + 600) }],
    ['exp now', { ...base, exp: NOW }],
    ['exp in skew', { ...base, exp: NOW - 20 }],
    ['exp fractional', { ...base, exp: NOW + 0.5 }],
    ['nbf later', { ...base, nbf: NOW + 1 }],
    ['nbf in skew', { ...base, nbf: NOW + 20 }],
    ['nbf a string', { ...base, nbf: 'now' }],
    ['iat later', { ...base, iat: NOW + 40 }],
    ['iat a string and exp past', { ...base, iat: 'x', exp: NOW - 600 }],
    ['nbf a string and exp a string', { ...base, nbf: 'x', exp: 'y' }],
    ['a list', [base]],
    ['null', null],
    ['a number', 5],
  ];

  for (const skew of [0, 30])
    it(`accepts and refuses what jose did, with the same reasons (skew ${skew} s)`, async () => {
      const v = oidcVerifier({ audiences: ['fleet', 'fleet-b'], clockSkewSeconds: skew });
      for (const [what, payload] of payloads) {
        const token = await raw(JSON.stringify(payload));
        const ours = await v.verify(token, at(NOW)).then(
          () => 'ok',
          (e: Error) => e.message,
        );
        expect(`${what}: ${ours}`).toBe(`${what}: ${await joseSays(token, skew)}`);
      }
    });

  it('refuses a payload that is not JSON, not UTF-8, or not encoded, as jose did', async () => {
    const v = oidcVerifier();
    for (const token of [
      await raw('not json'),
      await raw(new Uint8Array([0x22, 0xff, 0x22])),
      await unencoded('{"exp":1}'),
    ]) {
      const ours = await v.verify(token, at(NOW)).then(
        () => 'ok',
        (e: Error) => e.message,
      );
      expect(ours).toBe(await joseSays(token, 0));
      expect(ours).toMatch(/^ERR_JWT_INVALID: /);
    }
  });
});

describe('peekIssuer, as jose’s decodeJwt read it', () => {
  it('reads iss without verifying; undefined for anything that is not a compact JWT with one', async () => {
    expect(peekIssuer(await sign({ exp: NOW }))).toBe(ISSUER);
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    expect(peekIssuer(`x.${b64('{"iss":"a"}')}.y`)).toBe('a');
    for (const t of [
      '',
      'a.b',
      'a.b.c.d',
      `x.${b64('{"iss":1}')}.y`,
      `x.${b64('[1]')}.y`,
      'x.%%%.y',
      `x.${b64('{')}.y`,
    ])
      expect(peekIssuer(t)).toBeUndefined();
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

/**
 * A test OIDC issuer: signing keys generated in the test with jose, the JWKS and the discovery document
 * served over real HTTP on an OS-picked port, and tokens signed on demand (valid, expired, for another
 * audience, unsigned, with a foreign key…). Counts the requests it serves, so tests can see caching.
 */
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';

export interface TestIssuer {
  /** the `iss` of its tokens (its own URL) */
  issuer: string;
  jwksUrl: string;
  /** requests served, by path */
  hits: Map<string, number>;
  /** a token signed with the current key */
  sign(claims: JWTPayload, opts?: SignOptions): Promise<string>;
  /** a new current key (published next to the old one, which stays valid), as a provider rotates */
  rotate(): Promise<string>;
  /** an RS256 key pair that is not in the JWKS, with a kid that is not either */
  foreignSign(claims: JWTPayload, opts?: SignOptions): Promise<string>;
  close(): Promise<void>;
}

export interface SignOptions {
  audience?: string | string[];
  issuer?: string;
  /** seconds from now; negative: already expired */
  expiresIn?: number;
  kid?: string;
  notBefore?: number;
}

type Key = { kid: string; privateKey: CryptoKey; jwk: JWK };

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, jwk };
}

export async function startIssuer(audience = 'fleet'): Promise<TestIssuer> {
  const keys: Key[] = [await newKey('k1')];
  let foreign: Key | undefined;
  const hits = new Map<string, number>();
  let base = '';
  const served: ServedHandle = await serveFetch((req) => {
    const path = new URL(req.url).pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/.well-known/openid-configuration')
      return Response.json({
        issuer: base,
        jwks_uri: `${base}/jwks`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    if (path === '/jwks') return Response.json({ keys: keys.map((k) => k.jwk) });
    return new Response('not found', { status: 404 });
  });
  base = served.url;
  const signWith = (key: Key, claims: JWTPayload, o: SignOptions = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: o.kid ?? key.kid, typ: 'JWT' })
      .setIssuer(o.issuer ?? base)
      .setAudience(o.audience ?? audience)
      .setIssuedAt(now - 5)
      .setExpirationTime(now + (o.expiresIn ?? 600));
    if (o.notBefore !== undefined) jwt.setNotBefore(now + o.notBefore);
    return jwt.sign(key.privateKey);
  };
  return {
    issuer: base,
    jwksUrl: `${base}/jwks`,
    hits,
    sign: (claims, o) => signWith(keys[keys.length - 1]!, claims, o),
    async rotate() {
      const k = await newKey(`k${keys.length + 1}`);
      keys.push(k);
      return k.kid;
    },
    async foreignSign(claims, o) {
      foreign ??= await newKey('not-published');
      return signWith(foreign, claims, o);
    },
    close: () => served.close(200),
  };
}

/** base64url of a JSON value (for hand-made JWTs: `alg: none`, tampered payloads). */
export function b64url(v: unknown): string {
  return Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
}

/**
 * JWT authenticators, verified with `jose`: OIDC bearer tokens (kube-apiserver's `--oidc-*` semantics) and
 * the signed assertion an identity edge sets in a header. Both map claims to an Identity the same way.
 *
 * Keys: a static JWK Set, a JWKS URL, or OIDC discovery (`<issuer>/.well-known/openid-configuration`).
 * jose's remote key set caches the fetched keys and refetches on an unknown `kid` (rotation), at most once
 * per cooldown. It runs on Workers as is: it caches only resolved key sets, and on Workers it never
 * lets one request await a fetch started by another (it checks for the runtime). Discovery here follows
 * the same rule: only the resolved `jwks_uri` is kept.
 */
import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from 'jose';
// jose's sub-path entries, and its error classes by name: the worker bundles only what is used (issue 16)
import {
  JOSEAlgNotAllowed,
  JOSEError,
  JWKSNoMatchingKey,
  JWKSTimeout,
  JWSSignatureVerificationFailed,
  JWTClaimValidationFailed,
  JWTExpired,
} from 'jose/errors';
import { createLocalJWKSet } from 'jose/jwks/local';
import { createRemoteJWKSet, customFetch as customFetchKey } from 'jose/jwks/remote';
import { decodeJwt } from 'jose/jwt/decode';
import { jwtVerify } from 'jose/jwt/verify';
import type { EdgeConfig, OidcConfig } from '../config/security.ts';
import { type Identity, withAuthenticatedGroup } from './identity.ts';

export class TokenError extends Error {
  override name = 'TokenError';
}

type JwtConfig = OidcConfig | EdgeConfig;

export interface JwtVerifierOptions {
  /** fetch for JWKS and discovery documents (default: the runtime's fetch) */
  fetch?: typeof fetch;
  /** how long a fetched key set is trusted before it is fetched again (jose's default: 10 minutes) */
  cacheMaxAgeMs?: number;
  /** minimum time between two refetches triggered by unknown key ids (jose's default: 30 s) */
  cooldownMs?: number;
}

export class JwtVerifier {
  private keys?: JWTVerifyGetKey;

  constructor(
    readonly config: JwtConfig,
    private readonly opts: JwtVerifierOptions = {},
  ) {
    if (config.jwks) this.keys = createLocalJWKSet(config.jwks as unknown as JSONWebKeySet);
    else if (config.jwksUrl) this.keys = this.remote(config.jwksUrl);
  }

  private remote(url: string): JWTVerifyGetKey {
    const f = this.opts.fetch;
    return createRemoteJWKSet(new URL(url), {
      ...(this.opts.cacheMaxAgeMs !== undefined ? { cacheMaxAge: this.opts.cacheMaxAgeMs } : {}),
      cooldownDuration: this.opts.cooldownMs ?? this.config.jwksMinRefreshSeconds * 1000,
      ...(f ? { [customFetchKey]: (u: string, init: RequestInit) => f(u, init) } : {}),
    });
  }

  /** The key set; discovered on first use. Each request that finds it undiscovered fetches on its own. */
  private async keySet(): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    const base = this.config.issuer.replace(/\/+$/, '');
    const f = this.opts.fetch ?? fetch;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await f(`${base}/.well-known/openid-configuration`, {
        headers: { Accept: 'application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(5_000),
      });
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      doc = (await res.json()) as typeof doc;
    } catch (e) {
      throw new TokenError(`OIDC discovery for issuer ${this.config.issuer} failed: ${(e as Error).message}`);
    }
    if (doc.issuer !== this.config.issuer)
      throw new TokenError(
        `OIDC discovery for issuer ${this.config.issuer} names another issuer (${String(doc.issuer)})`,
      );
    if (typeof doc.jwks_uri !== 'string' || !/^https?:\/\//.test(doc.jwks_uri))
      throw new TokenError(`OIDC discovery for issuer ${this.config.issuer} has no usable jwks_uri`);
    this.keys ??= this.remote(doc.jwks_uri);
    return this.keys;
  }

  /**
   * Verifies signature, algorithm, issuer, audience and time claims; returns the payload or throws
   * TokenError. Time, as kube-apiserver's OIDC authenticator: `exp` is required (a token without one
   * would be good forever), `nbf` and `iat` are honoured when present; all three with the configured
   * clock skew. A token issued in the future (beyond the skew) is refused: no honest issuer mints one.
   */
  async verify(token: string, now: () => number = Date.now): Promise<JWTPayload> {
    const keys = await this.keySet();
    const skew = this.config.clockSkewSeconds;
    const at = new Date(now());
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.config.issuer,
        audience: this.config.audiences,
        algorithms: [...this.config.algorithms],
        clockTolerance: skew,
        requiredClaims: ['exp'],
        currentDate: at,
      }));
    } catch (e) {
      throw new TokenError(describeJoseError(e));
    }
    // jose checks that a present iat is a number, and its age only when told a maximum age
    if (typeof payload.iat === 'number' && payload.iat > Math.floor(at.getTime() / 1000) + skew)
      throw new TokenError('token was issued in the future (iat)');
    return payload;
  }
}

function describeJoseError(e: unknown): string {
  if (e instanceof JWTExpired) return 'token has expired';
  if (e instanceof JWTClaimValidationFailed)
    return e.reason === 'missing'
      ? `claim ${e.claim} is required`
      : `claim ${e.claim} is not acceptable (${e.reason})`;
  if (e instanceof JOSEAlgNotAllowed) return 'token signed with an algorithm that is not allowed';
  if (e instanceof JWSSignatureVerificationFailed) return 'signature verification failed';
  if (e instanceof JWKSNoMatchingKey) return 'no key in the key set matches the token';
  if (e instanceof JWKSTimeout) return 'timed out fetching the key set';
  if (e instanceof JOSEError) return `${e.code}: ${e.message}`;
  return (e as Error)?.message ?? String(e);
}

/** The `iss` of a compact JWT without verifying anything, or undefined when it is not one. */
export function peekIssuer(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

function stringClaim(payload: JWTPayload, claim: string): string | undefined {
  const v = payload[claim];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Claims → Identity, as kube-apiserver's OIDC authenticator maps them:
 * - username from `usernameClaim`, prefixed (`<issuer>#` by default unless the claim is `email`; `-` = none);
 *   with `email`, an `email_verified` claim that is present must be true;
 * - groups from `groupsClaim` (a string or an array of strings), each prefixed;
 * - uid from `uidClaim`; `requiredClaims` must match exactly.
 * Names under `system:` are refused: a token must never map onto the cluster's own system identities.
 */
export function mapClaims(config: JwtConfig, payload: JWTPayload): Identity {
  for (const [k, v] of Object.entries(config.requiredClaims)) {
    if (payload[k] !== v) throw new TokenError(`required claim ${k} is missing or does not match`);
  }
  const raw = stringClaim(payload, config.usernameClaim);
  if (raw === undefined) throw new TokenError(`claim ${config.usernameClaim} is missing or not a string`);
  if (config.usernameClaim === 'email' && 'email_verified' in payload && payload.email_verified !== true)
    throw new TokenError('email_verified is not true');
  const prefix =
    config.usernamePrefix === undefined
      ? config.usernameClaim === 'email'
        ? ''
        : `${config.issuer}#`
      : config.usernamePrefix === '-'
        ? ''
        : config.usernamePrefix;
  const user = prefix + raw;
  let groups: string[] = [];
  if (config.groupsClaim) {
    const g = payload[config.groupsClaim];
    if (typeof g === 'string') groups = [g];
    else if (Array.isArray(g)) {
      if (!g.every((x) => typeof x === 'string'))
        throw new TokenError(`claim ${config.groupsClaim} is not a list of strings`);
      groups = g as string[];
    } else if (g !== undefined && g !== null)
      throw new TokenError(`claim ${config.groupsClaim} is not a string or a list of strings`);
    groups = groups.map((x) => config.groupsPrefix + x);
  }
  if (user.startsWith('system:') || groups.some((g) => g.startsWith('system:')))
    throw new TokenError('claims map to a reserved system: user or group; set usernamePrefix / groupsPrefix');
  const identity: Identity = { user, groups };
  if (config.uidClaim) {
    const uid = stringClaim(payload, config.uidClaim);
    if (uid === undefined) throw new TokenError(`claim ${config.uidClaim} is missing or not a string`);
    identity.uid = uid;
  }
  return withAuthenticatedGroup(identity);
}

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
import { base64url, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
// jose's sub-path entries, and its error classes by name: the worker bundles only what is used (issue 16).
// The signature is jose's (compact JWS); the claims are checked here (checkClaims), for the few options
// the fleet uses, not by jose's JWT layer, which also parses duration strings, typ, subject and max age.
import {
  JOSEAlgNotAllowed,
  JOSEError,
  JWKSNoMatchingKey,
  JWKSTimeout,
  JWSSignatureVerificationFailed,
} from 'jose/errors';
import { createLocalJWKSet } from 'jose/jwks/local';
import { createRemoteJWKSet, customFetch as customFetchKey } from 'jose/jwks/remote';
import { compactVerify } from 'jose/jws/compact/verify';
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
    let verified: Awaited<ReturnType<typeof compactVerify>>;
    try {
      verified = await compactVerify(token, keys, { algorithms: [...this.config.algorithms] });
    } catch (e) {
      throw new TokenError(describeJoseError(e));
    }
    return checkClaims(this.config, verified, Math.floor(now() / 1000));
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

const claimRefused = (claim: string, reason: 'invalid' | 'check_failed') =>
  new TokenError(`claim ${claim} is not acceptable (${reason})`);

/** A time claim: absent, or a number (`invalid` otherwise). */
function timeClaim(payload: JWTPayload, claim: 'iat' | 'nbf' | 'exp'): number | undefined {
  const v = payload[claim];
  if (v !== undefined && typeof v !== 'number') throw claimRefused(claim, 'invalid');
  return v;
}

/**
 * A verified JWS's claims, checked as jose's jwtVerify checks them for the options the fleet gave it (in
 * its order, with its reasons): a JSON object payload, never an unencoded one; `iss`, `aud` and `exp`
 * present; `iss` the issuer, `aud` naming one of the audiences; `iat`, `nbf`, `exp` numbers; `nbf` not
 * after now and `exp` after now, both with the clock skew. And, as kube-apiserver's OIDC authenticator:
 * `exp` is required (a token without one would be good forever) and a token issued in the future
 * (beyond the skew) is refused: no honest issuer mints one.
 */
function checkClaims(
  config: JwtConfig,
  verified: { payload: Uint8Array; protectedHeader?: { b64?: unknown } },
  now: number,
): JWTPayload {
  if (verified.protectedHeader?.b64 === false)
    throw new TokenError('ERR_JWT_INVALID: JWTs MUST NOT use unencoded payload');
  let payload: unknown;
  try {
    payload = JSON.parse(strictUtf8.decode(verified.payload));
  } catch {
    payload = undefined;
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload))
    throw new TokenError('ERR_JWT_INVALID: JWT Claims Set must be a top-level JSON object');
  const p = payload as JWTPayload;
  for (const claim of ['iss', 'aud', 'exp'])
    if (!Object.hasOwn(p, claim)) throw new TokenError(`claim ${claim} is required`);
  if (p.iss !== config.issuer) throw claimRefused('iss', 'check_failed');
  const aud = p.aud;
  if (
    !(typeof aud === 'string'
      ? config.audiences.includes(aud)
      : Array.isArray(aud) && config.audiences.some((a) => aud.includes(a)))
  )
    throw claimRefused('aud', 'check_failed');
  const skew = config.clockSkewSeconds;
  const iat = timeClaim(p, 'iat');
  const nbf = timeClaim(p, 'nbf');
  if (nbf !== undefined && nbf > now + skew) throw claimRefused('nbf', 'check_failed');
  const exp = timeClaim(p, 'exp');
  if (exp !== undefined && exp <= now - skew) throw new TokenError('token has expired');
  if (iat !== undefined && iat > now + skew) throw new TokenError('token was issued in the future (iat)');
  return p;
}

function describeJoseError(e: unknown): string {
  if (e instanceof JOSEAlgNotAllowed) return 'token signed with an algorithm that is not allowed';
  if (e instanceof JWSSignatureVerificationFailed) return 'signature verification failed';
  if (e instanceof JWKSNoMatchingKey) return 'no key in the key set matches the token';
  if (e instanceof JWKSTimeout) return 'timed out fetching the key set';
  if (e instanceof JOSEError) return `${e.code}: ${e.message}`;
  return (e as Error)?.message ?? String(e);
}

/** The `iss` of a compact JWT without verifying anything, or undefined when it is not one. */
export function peekIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    // as jose's decodeJwt reads it: base64url as jose decodes it, strict UTF-8, JSON
    const iss = JSON.parse(strictUtf8.decode(base64url.decode(parts[1]!)))?.iss;
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

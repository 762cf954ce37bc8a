/**
 * The authenticator chain, as kube-apiserver builds it (pkg/kubeapiserver/authenticator/config.go):
 *
 *   front-proxy headers → x509 client certificate → edge assertion → bearer token (static tokens, OIDC)
 *   → anonymous (only when enabled, and only when no credential was presented and refused)
 *
 * Each authenticator answers "this is the caller", "not mine" or "refused". The first that knows the caller
 * wins. The client-certificate ones (front-proxy, x509: ./certificates.ts) exist only where the runtime
 * verifies client certificates: the Node server links them in ({@link useCertificateAuthn}); the worker
 * bundles none of them, and its configuration may not ask for them (config/security.ts). A presented bearer token that no token authenticator accepts is refused (kube's "invalid bearer
 * token"), so a bad token is a 401 even with anonymous access on, never a silent downgrade.
 */

import { ConfigError } from '../config/schema.ts';
import { type AuthenticationConfig, NO_AUTHENTICATOR } from '../config/security.ts';
import { TtlCache } from '../util/ttlcache.ts';
import { ANONYMOUS, type Identity } from './identity.ts';
import { JwtVerifier, type JwtVerifierOptions, mapClaims, peekIssuer, TokenError } from './jwt.ts';
import type { AuthnRequest } from './request.ts';
import { parseTokenCsv, StaticTokenAuthenticator, sha256 } from './static.ts';

export type AuthnOutcome =
  | { ok: true; identity: Identity; via: string; bearer?: string }
  | { ok: false; reason: string; tokenPresented: boolean };

/** One authenticator's answer: the caller, not mine, or refused. */
export type Step =
  | { kind: 'ok'; identity: Identity; via: string }
  | { kind: 'none' }
  | { kind: 'error'; reason: string };

/**
 * The client-certificate authenticators a configuration asks for, in kube's order (front-proxy, x509), and
 * the request headers that carry their claims (lowercased names and prefixes: never sent upstream).
 */
export type CertificateAuthn = (config: AuthenticationConfig) => {
  steps: Array<(req: AuthnRequest) => Step>;
  claimHeaders: string[];
  claimHeaderPrefixes: string[];
};

let certificateAuthn: CertificateAuthn | undefined;

/** Installed by the Node server (deploy/node/tls.ts), which verifies the client certificates. */
export function useCertificateAuthn(f: CertificateAuthn | undefined): void {
  certificateAuthn = f;
}

/** The client-certificate authenticators `config` asks for; refused where the runtime verifies none. */
function certificateSteps(config: AuthenticationConfig): ReturnType<CertificateAuthn> {
  if (!config.frontProxy && !config.x509) return { steps: [], claimHeaders: [], claimHeaderPrefixes: [] };
  if (!certificateAuthn)
    throw new ConfigError(
      `config.authentication.${config.frontProxy ? 'frontProxy' : 'x509'}: client certificates need the Node server, which verifies them`,
    );
  return certificateAuthn(config);
}

/**
 * `Authorization: Bearer <token>`, read exactly as kube's bearertoken authenticator reads it (split at the
 * first two spaces, scheme case-insensitive, an empty token is no credential), or undefined.
 */
export function bearerToken(headers: Headers): string | undefined {
  const h = headers.get('authorization')?.trim();
  if (!h) return undefined;
  const parts = h.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}

export interface Authn {
  /** the outcome, at once when no step had anything to await (no token, no assertion: anonymous, certificates) */
  authenticate(req: AuthnRequest): AuthnOutcome | Promise<AuthnOutcome>;
  /** request headers that carry identity claims in this configuration: never forwarded upstream */
  readonly credentialHeaders: ReadonlySet<string>;
  /** and header name prefixes (front-proxy extras) */
  readonly credentialHeaderPrefixes: readonly string[];
  /** true when some authenticator (or anonymous access) can let a request in */
  readonly canAdmit: boolean;
}

async function tokenDigest(token: string): Promise<string> {
  let out = '';
  for (const b of await sha256(token)) out += b.toString(16).padStart(2, '0');
  return out;
}

type OkStep = Extract<Step, { kind: 'ok' }>;

/**
 * Successful token authentications, by the token's SHA-256 (never the token itself), for `ttlMs` and never
 * past the token's own expiry, like kube-apiserver's token cache. Failures are not cached. Bounded; resolved
 * values only (Workers: no request awaits another's I/O).
 */
export class TokenCache {
  private readonly entries: TtlCache<OkStep>;

  constructor(ttlMs: number, max = 4096, now: () => number = Date.now) {
    this.entries = new TtlCache(ttlMs, max, now);
  }

  get enabled(): boolean {
    return this.entries.enabled;
  }

  get(key: string): OkStep | undefined {
    return this.entries.get(key);
  }

  put(key: string, step: OkStep, expiresAt?: number): void {
    // only what a later request needs: never the token's claims beyond the identity
    this.entries.set(key, { kind: 'ok', identity: step.identity, via: step.via }, expiresAt);
  }
}

/** One phrase per configured authenticator, in the order they are tried (for the startup log). */
export function describeAuthentication(config: AuthenticationConfig): string[] {
  const out: string[] = [];
  if (config.frontProxy) out.push('front-proxy headers (trusted client certificate)');
  if (config.x509) out.push('x509 client certificates');
  if (config.edge) out.push(`edge assertion (${config.edge.header}, issuer ${config.edge.issuer})`);
  if (config.staticTokens) out.push('static tokens');
  for (const c of config.oidc) out.push(`OIDC (issuer ${c.issuer})`);
  if (config.anonymous.enabled) out.push('anonymous (system:anonymous)');
  return out.length ? out : ['none (every request is refused)'];
}

/**
 * Refuses a configuration under which no request could ever be admitted: better a clear startup error
 * than a fleet that answers 401 to everyone.
 */
export function assertCanAdmit(authn: Pick<Authn, 'canAdmit'>): void {
  if (!authn.canAdmit) throw new ConfigError(`config.authentication: ${NO_AUTHENTICATOR}`);
}

/** Signing keys fetched over plain HTTP: anyone on the path could mint tokens. Said loudly at startup. */
function warnPlainHttpKeys(config: AuthenticationConfig): void {
  for (const [i, c] of [...config.oidc, ...(config.edge ? [config.edge] : [])].entries()) {
    const keys = c.jwksUrl ?? (c.jwks ? undefined : c.issuer);
    if (keys?.startsWith('http:'))
      console.warn(
        `fleet: WARNING: authentication ${i < config.oidc.length ? `oidc[${i}]` : 'edge'}: signing keys are fetched over plain HTTP (${keys}); anyone on the path could mint tokens: use https`,
      );
  }
}

function staticTokens(config: AuthenticationConfig): StaticTokenAuthenticator | undefined {
  if (!config.staticTokens) return undefined;
  if (config.staticTokens.csv === undefined)
    throw new ConfigError(
      'config.authentication.staticTokens.file: must be resolved to csv before the app is built',
    );
  try {
    return new StaticTokenAuthenticator(
      parseTokenCsv(config.staticTokens.csv, 'config.authentication.staticTokens'),
    );
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

export function buildAuthn(config: AuthenticationConfig, opts: JwtVerifierOptions = {}): Authn {
  warnPlainHttpKeys(config);
  const oidc = config.oidc.map((c) => new JwtVerifier(c, opts));
  const edge = config.edge ? new JwtVerifier(config.edge, opts) : undefined;
  const statics = staticTokens(config);
  const certificates = certificateSteps(config);
  // request headers that carry identity claims in this configuration: never sent upstream
  const credentialHeaders = new Set(certificates.claimHeaders);
  if (config.edge) credentialHeaders.add(config.edge.header.toLowerCase());

  const cache = new TokenCache(config.tokenCacheSeconds * 1000);

  async function tokenStep(token: string): Promise<Step> {
    const key = cache.enabled ? await tokenDigest(token) : '';
    const hit = cache.get(key);
    if (hit) return hit;
    const s = await verifyToken(token);
    if (s.kind === 'ok') cache.put(key, s, s.expiresAt);
    return s;
  }

  async function verifyToken(token: string): Promise<Step & { expiresAt?: number }> {
    if (statics) {
      const id = await statics.authenticate(token);
      if (id) return { kind: 'ok', identity: id, via: 'static-token' };
    }
    const iss = peekIssuer(token);
    if (iss === undefined) return { kind: 'none' };
    const errs: string[] = [];
    for (const v of oidc) {
      // kube's structured authentication picks the authenticator by the token's issuer
      if (v.config.issuer !== iss) continue;
      try {
        const payload = await v.verify(token);
        return {
          kind: 'ok',
          identity: mapClaims(v.config, payload),
          via: `oidc:${v.config.issuer}`,
          ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp * 1000 } : {}),
        };
      } catch (e) {
        if (!(e instanceof TokenError)) throw e;
        errs.push(`oidc ${v.config.issuer}: ${e.message}`);
      }
    }
    return errs.length ? { kind: 'error', reason: errs.join('; ') } : { kind: 'none' };
  }

  function edgeStep(req: AuthnRequest): Step | Promise<Step> {
    if (!edge || !config.edge) return NONE;
    const assertion = req.headers.get(config.edge.header)?.trim();
    if (!assertion) return NONE;
    return edgeVerify(edge, assertion);
  }

  async function edgeVerify(edge: JwtVerifier, assertion: string): Promise<Step> {
    try {
      const payload = await edge.verify(assertion);
      return { kind: 'ok', identity: mapClaims(edge.config, payload), via: `edge:${edge.config.issuer}` };
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      return { kind: 'error', reason: `edge assertion: ${e.message}` };
    }
  }

  const certs = certificates.steps;
  /**
   * The outcome from step `i` on (kube's order: certificates, edge assertion, bearer token), `known` the
   * answer of step `i` when awaited: synchronous while no step has anything to await.
   */
  function run(req: AuthnRequest, token: string | undefined, errors: string[], i = 0, known?: Step): Outcome {
    for (; i < certs.length + 2; i++) {
      const s =
        known ??
        (i < certs.length
          ? certs[i]!(req)
          : i === certs.length
            ? edgeStep(req)
            : token === undefined
              ? NONE
              : // a presented token nobody accepts is an error, never "no credential"
                tokenStep(token).then(
                  (t): Step => (t.kind === 'none' ? { kind: 'error', reason: 'invalid bearer token' } : t),
                ));
      known = undefined;
      if (s instanceof Promise) return s.then((r) => run(req, token, errors, i, r));
      if (s.kind === 'ok') {
        const byToken = s.via === 'static-token' || s.via.startsWith('oidc:');
        return { ok: true, identity: s.identity, via: s.via, ...(byToken ? { bearer: token } : {}) };
      }
      if (s.kind === 'error') errors.push(s.reason);
    }
    if (errors.length) return { ok: false, reason: errors.join('; '), tokenPresented: token !== undefined };
    if (config.anonymous.enabled) return { ok: true, identity: ANONYMOUS, via: 'anonymous' };
    return { ok: false, reason: 'no credentials', tokenPresented: false };
  }

  return {
    credentialHeaders,
    credentialHeaderPrefixes: certificates.claimHeaderPrefixes,
    canAdmit:
      oidc.length > 0 ||
      !!edge ||
      !!statics ||
      !!config.x509 ||
      !!config.frontProxy ||
      config.anonymous.enabled,
    authenticate: (req) => run(req, bearerToken(req.headers), []),
  };
}

type Outcome = AuthnOutcome | Promise<AuthnOutcome>;

const NONE: Step = Object.freeze({ kind: 'none' });

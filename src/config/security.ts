/**
 * The fleet's security configuration, validated with ./check.ts (a small zod-like checker): who may call (authentication), what identity goes
 * upstream, who may impersonate whom (`kubectl --as`), the optional fleet authorization policy, the audit log,
 * request limits and (Node only) TLS serving. Imported by ./schema.ts as sections of the fleet config.
 *
 * Names follow kube-apiserver's flags where one exists (`--oidc-username-claim` → `usernameClaim`,
 * `--requestheader-allowed-names` → `allowedNames`, `--token-auth-file` → `staticTokens.file`).
 */

import { base64Encode } from '../util/base64.ts';
import * as v from './check.ts';

/** Asymmetric JWS algorithms only: never `none`, never a shared secret (HS*) for a public issuer. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const httpUrl = v.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const headerName = v.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name');

/** Where the keys that sign tokens come from: a JWKS URL, an inline key set, or OIDC discovery. */
const keySource = {
  /** JWKS endpoint; fetched, cached and refetched on an unknown key id (rotation). Default: OIDC discovery */
  jwksUrl: httpUrl.optional(),
  /** static keys (a JWK Set document) instead of fetching them */
  jwks: v.object({ keys: v.array(v.record(v.string(), v.unknown())).min(1) }).optional(),
  /** a token with an unknown key id refetches the JWKS (key rotation), at most this often */
  jwksMinRefreshSeconds: v.number().min(0).max(3600).default(30),
};

const claimMapping = {
  /** accepted signing algorithms (`--oidc-signing-algs`) */
  algorithms: v.array(v.enum(JWT_ALGORITHMS)).min(1).default(['RS256']),
  /** tolerated clock difference for exp / nbf / iat */
  clockSkewSeconds: v.number().int().min(0).max(600).default(0),
  groupsClaim: v.string().min(1).optional(),
  groupsPrefix: v.string().default(''),
  uidClaim: v.string().min(1).optional(),
  /** claims that must be present with exactly this value (`--oidc-required-claim`) */
  requiredClaims: v.record(v.string(), v.string()).default({}),
};

function keySourceRefine(
  k: { jwksUrl?: string | undefined; jwks?: unknown; issuer: string },
  ctx: v.RefinementCtx,
): void {
  if (k.jwksUrl && k.jwks) ctx.addIssue({ code: 'custom', message: 'set jwksUrl or jwks, not both' });
  if (!k.jwksUrl && !k.jwks && !/^https?:\/\//.test(k.issuer))
    ctx.addIssue({
      code: 'custom',
      path: ['issuer'],
      message: 'without jwksUrl or jwks the keys are discovered at <issuer>/.well-known/openid-configuration',
    });
}

export const oidcSchema = v
  .object({
    /** must equal the token's `iss` exactly (`--oidc-issuer-url`) */
    issuer: v.string().min(1),
    /** the token's `aud` must contain one of these (`--oidc-client-id`) */
    audiences: v.array(v.string().min(1)).min(1),
    ...keySource,
    ...claimMapping,
    usernameClaim: v.string().min(1).default('sub'),
    /** default as kube: `<issuer>#` unless the claim is `email`; `-` disables prefixing */
    usernamePrefix: v.string().optional(),
  })
  .strict()
  .superRefine(keySourceRefine);

/** A signed identity assertion set by an access-controlling edge in front of the fleet (e.g. an access proxy). */
export const edgeSchema = v
  .object({
    /** request header that carries the assertion JWT */
    header: headerName.default('Cf-Access-Jwt-Assertion'),
    issuer: v.string().min(1),
    audiences: v.array(v.string().min(1)).min(1),
    ...keySource,
    ...claimMapping,
    usernameClaim: v.string().min(1).default('email'),
    usernamePrefix: v.string().default(''),
  })
  .strict()
  .superRefine(keySourceRefine);

const clientCA = {
  /** PEM bundle file (Node) */
  clientCA: v.string().min(1).optional(),
  /** PEM bundle, base64 (as kubeconfig's …Data fields) */
  clientCAData: v.string().min(1).optional(),
};

function oneCA(
  c: { clientCA?: string | undefined; clientCAData?: string | undefined },
  ctx: v.RefinementCtx,
) {
  if (!!c.clientCA === !!c.clientCAData)
    ctx.addIssue({ code: 'custom', message: 'set exactly one of clientCA or clientCAData' });
}

/**
 * Front-proxy headers (`--requestheader-*`): honoured only on a TLS connection whose client certificate
 * chains to `clientCA` (and, when `allowedNames` is set, whose CN is listed). Node only.
 */
export const frontProxySchema = v
  .object({
    ...clientCA,
    allowedNames: v.array(v.string().min(1)).default([]),
    usernameHeaders: v.array(headerName).min(1).default(['X-Remote-User']),
    uidHeaders: v.array(headerName).default(['X-Remote-Uid']),
    groupHeaders: v.array(headerName).default(['X-Remote-Group']),
    extraHeaderPrefixes: v.array(headerName).default(['X-Remote-Extra-']),
  })
  .strict()
  .superRefine(oneCA);

/** x509 client certificates (`--client-ca-file`): CN is the user, O the groups. Node only. */
export const x509Schema = v
  .object({ ...clientCA })
  .strict()
  .superRefine(oneCA);

/** Static bearer tokens in kube's `--token-auth-file` CSV format: `token,user,uid,"group1,group2"`. */
export const staticTokensSchema = v
  .object({ file: v.string().min(1).optional(), csv: v.string().optional() })
  .strict()
  .refine((s) => (s.file === undefined) !== (s.csv === undefined), {
    message: 'set exactly one of file or csv',
  });

export const authenticationSchema = v
  .object({
    oidc: v.array(oidcSchema).default([]),
    edge: edgeSchema.optional(),
    frontProxy: frontProxySchema.optional(),
    x509: x509Schema.optional(),
    staticTokens: staticTokensSchema.optional(),
    /**
     * how long a bearer token's successful authentication is reused (never past the token's expiry), as
     * kube-apiserver's token cache (10 s); 0 verifies every request
     */
    tokenCacheSeconds: v.number().min(0).max(300).default(10),
    /** requests no authenticator claims act as system:anonymous (each cluster's RBAC still decides) */
    anonymous: v
      .object({ enabled: v.boolean().default(false) })
      .strict()
      .prefault({}),
  })
  .strict()
  // in the same round as every other problem of the file, not after it is fixed
  .superRefine((a, ctx) => {
    if (a.oidc.length || a.edge || a.frontProxy || a.x509 || a.staticTokens || a.anonymous.enabled) return;
    ctx.addIssue({ code: 'custom', message: NO_AUTHENTICATOR });
  })
  .prefault({});

export const NO_AUTHENTICATOR =
  'no authenticator is configured and anonymous access is off, so every request would be refused; configure oidc, edge, staticTokens, x509 or frontProxy, or set anonymous.enabled: true (callers then act as system:anonymous in every cluster)';

export const upstreamIdentitySchema = v
  .object({
    /**
     * impersonate: the fleet's credential plus Impersonate-* for the caller (every cluster trusts the fleet);
     * passthrough: the caller's own bearer token, no impersonation (every cluster trusts the caller's issuer)
     */
    mode: v.enum(['impersonate', 'passthrough']).default('impersonate'),
  })
  .strict()
  .prefault({});

/** The caller's own impersonation (`kubectl --as`, `--as-group`, `--as-uid`). */
export const callerImpersonationSchema = v
  .object({
    /** false: any Impersonate-* header from a caller is refused with 403 */
    enabled: v.boolean().default(true),
    /** where the SubjectAccessReview runs: the control plane, or the request's single target cluster */
    reviewOn: v.enum(['controlPlane', 'target']).default('controlPlane'),
    /** how long a review's answer is reused for the same caller and request */
    cacheSeconds: v.number().min(0).max(600).default(10),
  })
  .strict()
  .prefault({});

const policyRuleSchema = v
  .object({
    users: v.array(v.string().min(1)).optional(),
    groups: v.array(v.string().min(1)).optional(),
    /** `all`, `karmada`, member names, or `*` */
    clusterspaces: v.array(v.string().min(1)).min(1).default(['*']),
    /** Kubernetes verbs (get, list, watch, create, update, patch, delete, deletecollection, …) or `*` */
    verbs: v.array(v.string().min(1)).min(1).default(['*']),
  })
  .strict()
  .refine((r) => (r.users?.length ?? 0) + (r.groups?.length ?? 0) > 0, {
    message: 'a rule needs users or groups (use group system:authenticated for everyone signed in)',
  });

/** Optional fleet-level policy; absent: allow, and let each cluster's RBAC decide. */
export const authorizationSchema = v.object({ rules: v.array(policyRuleSchema) }).strict();

export const auditSchema = v
  .object({ enabled: v.boolean().default(false) })
  .strict()
  .prefault({});

export const limitsSchema = v
  .object({
    /** kube-apiserver's own limit for a request body is 3 MiB */
    maxBodyBytes: v
      .number()
      .int()
      .min(1024)
      .max(1024 ** 3)
      .default(3 * 1024 * 1024),
    /** Workers refuse URLs over 16 KiB */
    maxUrlBytes: v
      .number()
      .int()
      .min(256)
      .max(1024 * 1024)
      .default(16 * 1024),
    maxHeaderBytes: v
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(32 * 1024),
    maxHeaderCount: v.number().int().min(8).max(10_000).default(128),
  })
  .strict()
  .prefault({});

/** TLS for the Node server (`--tls-cert-file`, `--tls-private-key-file`); Workers terminate TLS at the edge. */
export const servingSchema = v
  .object({
    certFile: v.string().min(1).optional(),
    keyFile: v.string().min(1).optional(),
    certData: v.string().min(1).optional(),
    keyData: v.string().min(1).optional(),
  })
  .strict()
  .refine((s) => !!(s.certFile || s.certData) && !!(s.keyFile || s.keyData), {
    message: 'needs a certificate (certFile or certData) and its key (keyFile or keyData)',
  });

export type AuthenticationConfig = v.output<typeof authenticationSchema>;
export type OidcConfig = v.output<typeof oidcSchema>;
export type EdgeConfig = v.output<typeof edgeSchema>;
export type FrontProxyConfig = v.output<typeof frontProxySchema>;
export type PolicyConfig = v.output<typeof authorizationSchema>;
export type LimitsConfig = v.output<typeof limitsSchema>;
export type CallerImpersonationConfig = v.output<typeof callerImpersonationSchema>;
export type UpstreamIdentityConfig = v.output<typeof upstreamIdentitySchema>;

/**
 * Turns the security section's file references into inline data (token CSV, client CA bundles, serving
 * certificate), with the platform's file reader, and refuses what the runtime cannot do: client
 * certificates (x509, front-proxy) and TLS serving need the Node server; Workers terminate TLS at the edge.
 */
export function resolveSecurityFiles<
  C extends {
    authentication: AuthenticationConfig;
    serving?: v.output<typeof servingSchema> | undefined;
  },
>(
  config: C,
  platform: { name: string; files: { readText(path: string, field: string): string } },
  fail: (message: string) => Error,
): C {
  const a = config.authentication;
  if (platform.name !== 'node') {
    if (a.x509)
      throw fail(
        'config.authentication.x509: client certificates need the Node server; on Workers let the edge authenticate and use authentication.edge',
      );
    if (a.frontProxy)
      throw fail(
        'config.authentication.frontProxy: front-proxy headers need a client certificate (Node only)',
      );
    if (config.serving) throw fail('config.serving: Workers terminate TLS themselves; remove serving');
  }
  const out = { ...config, authentication: { ...a } };
  if (a.staticTokens?.file !== undefined)
    out.authentication.staticTokens = {
      csv: platform.files.readText(a.staticTokens.file, 'config.authentication.staticTokens.file'),
    };
  if (a.x509?.clientCA)
    out.authentication.x509 = {
      clientCAData: base64Encode(
        platform.files.readText(a.x509.clientCA, 'config.authentication.x509.clientCA'),
      ),
    };
  if (a.frontProxy?.clientCA) {
    const { clientCA, ...rest } = a.frontProxy;
    out.authentication.frontProxy = {
      ...rest,
      clientCAData: base64Encode(
        platform.files.readText(clientCA, 'config.authentication.frontProxy.clientCA'),
      ),
    };
  }
  if (config.serving && (config.serving.certFile || config.serving.keyFile)) {
    const s = config.serving;
    out.serving = {
      certData: s.certData ?? base64Encode(platform.files.readText(s.certFile!, 'config.serving.certFile')),
      keyData: s.keyData ?? base64Encode(platform.files.readText(s.keyFile!, 'config.serving.keyFile')),
    };
  }
  return out;
}

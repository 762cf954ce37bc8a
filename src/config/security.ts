/**
 * The fleet's security configuration, validated with zod: who may call (authentication), what identity
 * goes upstream, who may impersonate whom (`kubectl --as`), the optional fleet authorization policy, the
 * audit log, request limits and (Node only) TLS serving. Imported by ./schema.ts as sections of the fleet
 * config.
 *
 * Names follow kube-apiserver's flags where one exists (`--oidc-username-claim` → `usernameClaim`,
 * `--requestheader-allowed-names` → `allowedNames`, `--token-auth-file` → `staticTokens.file`).
 */

// a namespace import: `import { z }` would bundle every locale zod ships (≈ 250 KiB), this only the English one
import * as z from 'zod';
import { base64Encode } from '../util/base64.ts';

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

function parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * an absolute URL whose scheme is http or https, written with `//` (`https:host` is refused), spaces at
 * its ends and the tabs and newlines the URL parser would drop removed
 */
export const httpUrl = (message: string) =>
  z
    .string()
    .trim()
    .refine((s) => /^https?:\/\//i.test(s) && parses(s), message)
    .transform((s) => s.replace(/[\t\n\r]/g, ''));

/**
 * A credential's own rules, wherever one is written (an endpoint, a ClusterProfile access provider):
 * one token source, and a client certificate with its key.
 */
export function credentialRefine(
  c: {
    token?: string | undefined;
    tokenFile?: string | undefined;
    clientCertificate?: string | undefined;
    clientCertificateData?: string | undefined;
    clientKey?: string | undefined;
    clientKeyData?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (c.token && c.tokenFile) ctx.addIssue({ code: 'custom', message: 'set token or tokenFile, not both' });
  const cert = c.clientCertificate || c.clientCertificateData;
  const key = c.clientKey || c.clientKeyData;
  if (!!cert !== !!key)
    ctx.addIssue({
      code: 'custom',
      message: 'a client certificate needs its key (and a key its certificate)',
    });
}

const url = httpUrl('must be an http(s) URL');
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name');
const nonEmpty = z.string().min(1);

/** Where the keys that sign tokens come from: a JWKS URL, an inline key set, or OIDC discovery. */
const keySource = {
  /** JWKS endpoint; fetched, cached and refetched on an unknown key id (rotation). Default: OIDC discovery */
  jwksUrl: url.optional(),
  /** static keys (a JWK Set document, its other members kept as they are) instead of fetching them */
  jwks: z.looseObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }).optional(),
  /** a token with an unknown key id refetches the JWKS (key rotation), at most this often */
  jwksMinRefreshSeconds: z.number().gte(0).lte(3600).default(30),
};

const claimMapping = {
  /** accepted signing algorithms (`--oidc-signing-algs`) */
  algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1).prefault(['RS256']),
  /** tolerated clock difference for exp / nbf / iat */
  clockSkewSeconds: z.number().int().gte(0).lte(600).default(0),
  groupsClaim: nonEmpty.optional(),
  groupsPrefix: z.string().default(''),
  uidClaim: nonEmpty.optional(),
  /** claims that must be present with exactly this value (`--oidc-required-claim`) */
  requiredClaims: z.record(z.string(), z.string()).prefault({}),
};

function keySourceRefine(
  k: { jwksUrl?: string | undefined; jwks?: unknown; issuer: string },
  ctx: z.RefinementCtx,
): void {
  if (k.jwksUrl && k.jwks) ctx.addIssue({ code: 'custom', message: 'set jwksUrl or jwks, not both' });
  if (!k.jwksUrl && !k.jwks && !/^https?:\/\//.test(k.issuer))
    ctx.addIssue({
      code: 'custom',
      path: ['issuer'],
      message: 'without jwksUrl or jwks the keys are discovered at <issuer>/.well-known/openid-configuration',
    });
}

export const oidcSchema = z
  .strictObject({
    /** must equal the token's `iss` exactly (`--oidc-issuer-url`) */
    issuer: nonEmpty,
    /** the token's `aud` must contain one of these (`--oidc-client-id`) */
    audiences: z.array(nonEmpty).min(1),
    ...keySource,
    ...claimMapping,
    usernameClaim: nonEmpty.default('sub'),
    /** default as kube: `<issuer>#` unless the claim is `email`; `-` disables prefixing */
    usernamePrefix: z.string().optional(),
  })
  .superRefine(keySourceRefine);

/** A signed identity assertion set by an access-controlling edge in front of the fleet (e.g. an access proxy). */
export const edgeSchema = z
  .strictObject({
    /** request header that carries the assertion JWT */
    header: headerName.default('Cf-Access-Jwt-Assertion'),
    issuer: nonEmpty,
    audiences: z.array(nonEmpty).min(1),
    ...keySource,
    ...claimMapping,
    usernameClaim: nonEmpty.default('email'),
    usernamePrefix: z.string().default(''),
  })
  .superRefine(keySourceRefine);

const clientCA = {
  /** PEM bundle file (Node) */
  clientCA: nonEmpty.optional(),
  /** PEM bundle, base64 (as kubeconfig's …Data fields) */
  clientCAData: nonEmpty.optional(),
};

function oneCA(
  c: { clientCA?: string | undefined; clientCAData?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if (!!c.clientCA === !!c.clientCAData)
    ctx.addIssue({ code: 'custom', message: 'set exactly one of clientCA or clientCAData' });
}

/**
 * Front-proxy headers (`--requestheader-*`): honoured only on a TLS connection whose client certificate
 * chains to `clientCA` (and, when `allowedNames` is set, whose CN is listed). Node only.
 */
export const frontProxySchema = z
  .strictObject({
    ...clientCA,
    allowedNames: z.array(nonEmpty).prefault([]),
    usernameHeaders: z.array(headerName).min(1).prefault(['X-Remote-User']),
    uidHeaders: z.array(headerName).prefault(['X-Remote-Uid']),
    groupHeaders: z.array(headerName).prefault(['X-Remote-Group']),
    extraHeaderPrefixes: z.array(headerName).prefault(['X-Remote-Extra-']),
  })
  .superRefine(oneCA);

/** x509 client certificates (`--client-ca-file`): CN is the user, O the groups. Node only. */
export const x509Schema = z.strictObject({ ...clientCA }).superRefine(oneCA);

/** Static bearer tokens in kube's `--token-auth-file` CSV format: `token,user,uid,"group1,group2"`. */
export const staticTokensSchema = z
  .strictObject({ file: nonEmpty.optional(), csv: z.string().optional() })
  .refine((s) => (s.file === undefined) !== (s.csv === undefined), 'set exactly one of file or csv');

export const NO_AUTHENTICATOR =
  'no authenticator is configured and anonymous access is off, so every request would be refused; configure oidc, edge, staticTokens, x509 or frontProxy, or set anonymous.enabled: true (callers then act as system:anonymous in every cluster)';

export const authenticationSchema = z
  .strictObject({
    oidc: z.array(oidcSchema).prefault([]),
    edge: edgeSchema.optional(),
    frontProxy: frontProxySchema.optional(),
    x509: x509Schema.optional(),
    staticTokens: staticTokensSchema.optional(),
    /**
     * how long a bearer token's successful authentication is reused (never past the token's expiry), as
     * kube-apiserver's token cache (10 s); 0 verifies every request
     */
    tokenCacheSeconds: z.number().gte(0).lte(300).default(10),
    /** requests no authenticator claims act as system:anonymous (each cluster's RBAC still decides) */
    anonymous: z.strictObject({ enabled: z.boolean().default(false) }).prefault({}),
  })
  // in the same round as every other problem of the file, not after it is fixed
  .superRefine((a, ctx) => {
    if (a.oidc.length || a.edge || a.frontProxy || a.x509 || a.staticTokens || a.anonymous.enabled) return;
    ctx.addIssue({ code: 'custom', message: NO_AUTHENTICATOR });
  })
  .prefault({});

export const upstreamIdentitySchema = z
  .strictObject({
    /**
     * impersonate: the fleet's credential plus Impersonate-* for the caller (every cluster trusts the fleet);
     * passthrough: the caller's own bearer token, no impersonation (every cluster trusts the caller's issuer)
     */
    mode: z.enum(['impersonate', 'passthrough']).default('impersonate'),
  })
  .prefault({});

/** The caller's own impersonation (`kubectl --as`, `--as-group`, `--as-uid`). */
export const callerImpersonationSchema = z
  .strictObject({
    /** false: any Impersonate-* header from a caller is refused with 403 */
    enabled: z.boolean().default(true),
    /** where the SubjectAccessReview runs: the control plane, or the request's single target cluster */
    reviewOn: z.enum(['controlPlane', 'target']).default('controlPlane'),
    /** how long a review's answer is reused for the same caller and request */
    cacheSeconds: z.number().gte(0).lte(600).default(10),
  })
  .prefault({});

const policyRuleSchema = z
  .strictObject({
    users: z.array(nonEmpty).optional(),
    groups: z.array(nonEmpty).optional(),
    /** `all`, `karmada`, member names, or `*` */
    clusterspaces: z.array(nonEmpty).min(1).prefault(['*']),
    /** Kubernetes verbs (get, list, watch, create, update, patch, delete, deletecollection, …) or `*` */
    verbs: z.array(nonEmpty).min(1).prefault(['*']),
  })
  .refine(
    (r) => (r.users?.length ?? 0) + (r.groups?.length ?? 0) > 0,
    'a rule needs users or groups (use group system:authenticated for everyone signed in)',
  );

/** Optional fleet-level policy; absent: allow, and let each cluster's RBAC decide. */
export const authorizationSchema = z.strictObject({ rules: z.array(policyRuleSchema) });

export const auditSchema = z.strictObject({ enabled: z.boolean().default(false) }).prefault({});

export const limitsSchema = z
  .strictObject({
    /** kube-apiserver's own limit for a request body is 3 MiB */
    maxBodyBytes: z
      .number()
      .int()
      .gte(1024)
      .lte(1024 ** 3)
      .default(3 * 1024 * 1024),
    /** Workers refuse URLs over 16 KiB */
    maxUrlBytes: z
      .number()
      .int()
      .gte(256)
      .lte(1024 * 1024)
      .default(16 * 1024),
    maxHeaderBytes: z
      .number()
      .int()
      .gte(1024)
      .lte(1024 * 1024)
      .default(32 * 1024),
    maxHeaderCount: z.number().int().gte(8).lte(10_000).default(128),
  })
  .prefault({});

/** TLS for the Node server (`--tls-cert-file`, `--tls-private-key-file`); Workers terminate TLS at the edge. */
export const servingSchema = z
  .strictObject({
    certFile: nonEmpty.optional(),
    keyFile: nonEmpty.optional(),
    certData: nonEmpty.optional(),
    keyData: nonEmpty.optional(),
  })
  .refine(
    (s) => !!(s.certFile || s.certData) && !!(s.keyFile || s.keyData),
    'needs a certificate (certFile or certData) and its key (keyFile or keyData)',
  );

export type AuthenticationConfig = z.output<typeof authenticationSchema>;
export type OidcConfig = z.output<typeof oidcSchema>;
export type EdgeConfig = z.output<typeof edgeSchema>;
export type FrontProxyConfig = z.output<typeof frontProxySchema>;
export type PolicyConfig = z.output<typeof authorizationSchema>;
export type LimitsConfig = z.output<typeof limitsSchema>;
export type CallerImpersonationConfig = z.output<typeof callerImpersonationSchema>;
export type UpstreamIdentityConfig = z.output<typeof upstreamIdentitySchema>;

/**
 * Turns the security section's file references into inline data (token CSV, client CA bundles, serving
 * certificate), with the platform's file reader, and refuses what the runtime cannot do: client
 * certificates (x509, front-proxy) and TLS serving need the Node server; Workers terminate TLS at the edge.
 */
export function resolveSecurityFiles<
  C extends {
    authentication: AuthenticationConfig;
    serving?: z.output<typeof servingSchema> | undefined;
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

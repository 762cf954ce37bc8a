/**
 * The fleet's security configuration, validated with valibot (./valibot.ts): who may call (authentication), what identity goes
 * upstream, who may impersonate whom (`kubectl --as`), the optional fleet authorization policy, the audit log,
 * request limits and (Node only) TLS serving. Imported by ./schema.ts as sections of the fleet config.
 *
 * Names follow kube-apiserver's flags where one exists (`--oidc-username-claim` → `usernameClaim`,
 * `--requestheader-allowed-names` → `allowedNames`, `--token-auth-file` → `staticTokens.file`).
 */

import { base64Encode } from '../util/base64.ts';
import * as v from './valibot.ts';
import {
  gte,
  httpUrl,
  int,
  lte,
  minLength,
  parsing,
  type RefinementCtx,
  refine,
  regex,
  strict,
  superRefine,
} from './valibot.ts';

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

const url = httpUrl('must be an http(s) URL');
const headerName = v.pipe(v.string(), regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name'));

/** Where the keys that sign tokens come from: a JWKS URL, an inline key set, or OIDC discovery. */
const keySource = {
  /** JWKS endpoint; fetched, cached and refetched on an unknown key id (rotation). Default: OIDC discovery */
  jwksUrl: v.optional(url),
  /** static keys (a JWK Set document, its other members kept as they are) instead of fetching them */
  jwks: v.optional(v.loose({ keys: v.pipe(v.array(v.record(v.unknown())), minLength(1)) })),
  /** a token with an unknown key id refetches the JWKS (key rotation), at most this often */
  jwksMinRefreshSeconds: v.optional(v.pipe(v.number(), gte(0), lte(3600)), 30),
};

const claimMapping = {
  /** accepted signing algorithms (`--oidc-signing-algs`) */
  algorithms: v.optional(v.pipe(v.array(v.picklist(JWT_ALGORITHMS)), minLength(1)), ['RS256']),
  /** tolerated clock difference for exp / nbf / iat */
  clockSkewSeconds: v.optional(v.pipe(v.number(), int(), gte(0), lte(600)), 0),
  groupsClaim: v.optional(v.pipe(v.string(), minLength(1))),
  groupsPrefix: v.optional(v.string(), ''),
  uidClaim: v.optional(v.pipe(v.string(), minLength(1))),
  /** claims that must be present with exactly this value (`--oidc-required-claim`) */
  requiredClaims: v.optional(v.record(v.string()), {}),
};

function keySourceRefine(
  k: { jwksUrl?: string | undefined; jwks?: unknown; issuer: string },
  ctx: RefinementCtx,
): void {
  if (k.jwksUrl && k.jwks) ctx.addIssue({ message: 'set jwksUrl or jwks, not both' });
  if (!k.jwksUrl && !k.jwks && !/^https?:\/\//.test(k.issuer))
    ctx.addIssue({
      path: ['issuer'],
      message: 'without jwksUrl or jwks the keys are discovered at <issuer>/.well-known/openid-configuration',
    });
}

export const oidcSchema = parsing(
  v.pipe(
    strict({
      /** must equal the token's `iss` exactly (`--oidc-issuer-url`) */
      issuer: v.pipe(v.string(), minLength(1)),
      /** the token's `aud` must contain one of these (`--oidc-client-id`) */
      audiences: v.pipe(v.array(v.pipe(v.string(), minLength(1))), minLength(1)),
      ...keySource,
      ...claimMapping,
      usernameClaim: v.optional(v.pipe(v.string(), minLength(1)), 'sub'),
      /** default as kube: `<issuer>#` unless the claim is `email`; `-` disables prefixing */
      usernamePrefix: v.optional(v.string()),
    }),
    superRefine(keySourceRefine),
  ),
);

/** A signed identity assertion set by an access-controlling edge in front of the fleet (e.g. an access proxy). */
export const edgeSchema = parsing(
  v.pipe(
    strict({
      /** request header that carries the assertion JWT */
      header: v.optional(headerName, 'Cf-Access-Jwt-Assertion'),
      issuer: v.pipe(v.string(), minLength(1)),
      audiences: v.pipe(v.array(v.pipe(v.string(), minLength(1))), minLength(1)),
      ...keySource,
      ...claimMapping,
      usernameClaim: v.optional(v.pipe(v.string(), minLength(1)), 'email'),
      usernamePrefix: v.optional(v.string(), ''),
    }),
    superRefine(keySourceRefine),
  ),
);

const clientCA = {
  /** PEM bundle file (Node) */
  clientCA: v.optional(v.pipe(v.string(), minLength(1))),
  /** PEM bundle, base64 (as kubeconfig's …Data fields) */
  clientCAData: v.optional(v.pipe(v.string(), minLength(1))),
};

function oneCA(c: { clientCA?: string | undefined; clientCAData?: string | undefined }, ctx: RefinementCtx) {
  if (!!c.clientCA === !!c.clientCAData)
    ctx.addIssue({ message: 'set exactly one of clientCA or clientCAData' });
}

/**
 * Front-proxy headers (`--requestheader-*`): honoured only on a TLS connection whose client certificate
 * chains to `clientCA` (and, when `allowedNames` is set, whose CN is listed). Node only.
 */
export const frontProxySchema = v.pipe(
  strict({
    ...clientCA,
    allowedNames: v.optional(v.array(v.pipe(v.string(), minLength(1))), []),
    usernameHeaders: v.optional(v.pipe(v.array(headerName), minLength(1)), ['X-Remote-User']),
    uidHeaders: v.optional(v.array(headerName), ['X-Remote-Uid']),
    groupHeaders: v.optional(v.array(headerName), ['X-Remote-Group']),
    extraHeaderPrefixes: v.optional(v.array(headerName), ['X-Remote-Extra-']),
  }),
  superRefine(oneCA),
);

/** x509 client certificates (`--client-ca-file`): CN is the user, O the groups. Node only. */
export const x509Schema = v.pipe(strict({ ...clientCA }), superRefine(oneCA));

/** Static bearer tokens in kube's `--token-auth-file` CSV format: `token,user,uid,"group1,group2"`. */
export const staticTokensSchema = v.pipe(
  strict({ file: v.optional(v.pipe(v.string(), minLength(1))), csv: v.optional(v.string()) }),
  refine(
    (s: { file?: string; csv?: string }) => (s.file === undefined) !== (s.csv === undefined),
    'set exactly one of file or csv',
  ),
);

export const authenticationSchema = parsing(
  v.optional(
    v.pipe(
      strict({
        oidc: v.optional(v.array(oidcSchema), []),
        edge: v.optional(edgeSchema),
        frontProxy: v.optional(frontProxySchema),
        x509: v.optional(x509Schema),
        staticTokens: v.optional(staticTokensSchema),
        /**
         * how long a bearer token's successful authentication is reused (never past the token's expiry), as
         * kube-apiserver's token cache (10 s); 0 verifies every request
         */
        tokenCacheSeconds: v.optional(v.pipe(v.number(), gte(0), lte(300)), 10),
        /** requests no authenticator claims act as system:anonymous (each cluster's RBAC still decides) */
        anonymous: v.optional(strict({ enabled: v.optional(v.boolean(), false) }), {}),
      }),
      // in the same round as every other problem of the file, not after it is fixed
      superRefine(
        (a: { oidc: unknown[]; anonymous: { enabled: boolean } } & Record<string, unknown>, ctx) => {
          if (a.oidc.length || a.edge || a.frontProxy || a.x509 || a.staticTokens || a.anonymous.enabled)
            return;
          ctx.addIssue({ message: NO_AUTHENTICATOR });
        },
      ),
    ),
    {},
  ),
);

export const NO_AUTHENTICATOR =
  'no authenticator is configured and anonymous access is off, so every request would be refused; configure oidc, edge, staticTokens, x509 or frontProxy, or set anonymous.enabled: true (callers then act as system:anonymous in every cluster)';

export const upstreamIdentitySchema = v.optional(
  strict({
    /**
     * impersonate: the fleet's credential plus Impersonate-* for the caller (every cluster trusts the fleet);
     * passthrough: the caller's own bearer token, no impersonation (every cluster trusts the caller's issuer)
     */
    mode: v.optional(v.picklist(['impersonate', 'passthrough']), 'impersonate'),
  }),
  {},
);

/** The caller's own impersonation (`kubectl --as`, `--as-group`, `--as-uid`). */
export const callerImpersonationSchema = v.optional(
  strict({
    /** false: any Impersonate-* header from a caller is refused with 403 */
    enabled: v.optional(v.boolean(), true),
    /** where the SubjectAccessReview runs: the control plane, or the request's single target cluster */
    reviewOn: v.optional(v.picklist(['controlPlane', 'target']), 'controlPlane'),
    /** how long a review's answer is reused for the same caller and request */
    cacheSeconds: v.optional(v.pipe(v.number(), gte(0), lte(600)), 10),
  }),
  {},
);

const policyRuleSchema = v.pipe(
  strict({
    users: v.optional(v.array(v.pipe(v.string(), minLength(1)))),
    groups: v.optional(v.array(v.pipe(v.string(), minLength(1)))),
    /** `all`, `karmada`, member names, or `*` */
    clusterspaces: v.optional(v.pipe(v.array(v.pipe(v.string(), minLength(1))), minLength(1)), ['*']),
    /** Kubernetes verbs (get, list, watch, create, update, patch, delete, deletecollection, …) or `*` */
    verbs: v.optional(v.pipe(v.array(v.pipe(v.string(), minLength(1))), minLength(1)), ['*']),
  }),
  refine(
    (r) => (r.users?.length ?? 0) + (r.groups?.length ?? 0) > 0,
    'a rule needs users or groups (use group system:authenticated for everyone signed in)',
  ),
);

/** Optional fleet-level policy; absent: allow, and let each cluster's RBAC decide. */
export const authorizationSchema = parsing(strict({ rules: v.array(policyRuleSchema) }));

export const auditSchema = v.optional(strict({ enabled: v.optional(v.boolean(), false) }), {});

export const limitsSchema = parsing(
  v.optional(
    strict({
      /** kube-apiserver's own limit for a request body is 3 MiB */
      maxBodyBytes: v.optional(v.pipe(v.number(), int(), gte(1024), lte(1024 ** 3)), 3 * 1024 * 1024),
      /** Workers refuse URLs over 16 KiB */
      maxUrlBytes: v.optional(v.pipe(v.number(), int(), gte(256), lte(1024 * 1024)), 16 * 1024),
      maxHeaderBytes: v.optional(v.pipe(v.number(), int(), gte(1024), lte(1024 * 1024)), 32 * 1024),
      maxHeaderCount: v.optional(v.pipe(v.number(), int(), gte(8), lte(10_000)), 128),
    }),
    {},
  ),
);

/** TLS for the Node server (`--tls-cert-file`, `--tls-private-key-file`); Workers terminate TLS at the edge. */
export const servingSchema = v.pipe(
  strict({
    certFile: v.optional(v.pipe(v.string(), minLength(1))),
    keyFile: v.optional(v.pipe(v.string(), minLength(1))),
    certData: v.optional(v.pipe(v.string(), minLength(1))),
    keyData: v.optional(v.pipe(v.string(), minLength(1))),
  }),
  refine(
    (s) => !!(s.certFile || s.certData) && !!(s.keyFile || s.keyData),
    'needs a certificate (certFile or certData) and its key (keyFile or keyData)',
  ),
);

export type AuthenticationConfig = v.InferOutput<typeof authenticationSchema>;
export type OidcConfig = v.InferOutput<typeof oidcSchema>;
export type EdgeConfig = v.InferOutput<typeof edgeSchema>;
export type FrontProxyConfig = v.InferOutput<typeof frontProxySchema>;
export type PolicyConfig = v.InferOutput<typeof authorizationSchema>;
export type LimitsConfig = v.InferOutput<typeof limitsSchema>;
export type CallerImpersonationConfig = v.InferOutput<typeof callerImpersonationSchema>;
export type UpstreamIdentityConfig = v.InferOutput<typeof upstreamIdentitySchema>;

/**
 * Turns the security section's file references into inline data (token CSV, client CA bundles, serving
 * certificate), with the platform's file reader, and refuses what the runtime cannot do: client
 * certificates (x509, front-proxy) and TLS serving need the Node server; Workers terminate TLS at the edge.
 */
export function resolveSecurityFiles<
  C extends {
    authentication: AuthenticationConfig;
    serving?: v.InferOutput<typeof servingSchema> | undefined;
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

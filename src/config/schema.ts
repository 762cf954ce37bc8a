/**
 * The fleet's configuration, validated with valibot (./valibot.ts: the fleet's conventions and messages).
 *
 * The same schema serves both runtimes: Node reads it from a YAML/JSON file (deploy/node), the worker
 * from an env binding (src/worker.ts). File references (kubeconfig path, certificate files, tokenFile)
 * are resolved to inline data by the platform before validation of the resolved form, so everything
 * below `ResolvedConfig` is plain data that both runtimes can use.
 */
import {
  auditSchema,
  authenticationSchema,
  authorizationSchema,
  callerImpersonationSchema,
  limitsSchema,
  servingSchema,
  upstreamIdentitySchema,
} from './security.ts';
import * as v from './valibot.ts';
import {
  flattenIssues,
  gte,
  httpUrl,
  int,
  lte,
  maxLength,
  minLength,
  parsing,
  positive,
  type RefinementCtx,
  refine,
  regex,
  strict,
  superRefine,
} from './valibot.ts';

const RESERVED = new Set(['all', 'karmada']);

/** Karmada cluster names are DNS-1123 labels; `all` and `karmada` are clusterspaces, never members. */
export const clusterName = v.pipe(
  v.string(),
  minLength(1),
  maxLength(63),
  regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label (lowercase letters, digits, -)'),
  refine((n: string) => !RESERVED.has(n), '"all" and "karmada" are reserved clusterspace names'),
);

/**
 * How to reach one API server. Field names follow kubeconfig's `cluster` and `user` entries
 * (camelCase), so a kubeconfig maps onto it one to one.
 */
const endpointShape = {
  server: httpUrl('must be an http(s) URL'),
  certificateAuthority: v.optional(v.string()),
  certificateAuthorityData: v.optional(v.string()),
  clientCertificate: v.optional(v.string()),
  clientCertificateData: v.optional(v.string()),
  clientKey: v.optional(v.string()),
  clientKeyData: v.optional(v.string()),
  token: v.optional(v.string()),
  tokenFile: v.optional(v.string()),
  insecureSkipTLSVerify: v.optional(v.boolean()),
  /** worker runtime: name of an `mtls_certificates` binding to present as client certificate */
  mtlsCertificateBinding: v.optional(v.string()),
  timeoutSeconds: v.optional(v.pipe(v.number(), positive(), lte(3600))),
};

function endpointRefine(
  e: v.InferOutput<ReturnType<typeof strict<typeof endpointShape>>>,
  ctx: RefinementCtx,
): void {
  if (e.certificateAuthority && e.certificateAuthorityData)
    ctx.addIssue({
      message: 'set certificateAuthority or certificateAuthorityData, not both',
    });
  if (e.token && e.tokenFile) ctx.addIssue({ message: 'set token or tokenFile, not both' });
  const cert = e.clientCertificate || e.clientCertificateData;
  const key = e.clientKey || e.clientKeyData;
  if (!!cert !== !!key)
    ctx.addIssue({
      message: 'a client certificate needs its key (and a key its certificate)',
    });
}

export const endpointSchema = parsing(v.pipe(strict(endpointShape), superRefine(endpointRefine)));

export const kubeconfigRefSchema = v.pipe(
  strict({
    /** path to a kubeconfig file (Node only) */
    path: v.optional(v.string()),
    /** the kubeconfig document itself, YAML or JSON (both runtimes) */
    inline: v.optional(v.string()),
    /** context to use; default: current-context */
    context: v.optional(v.string()),
  }),
  refine(
    (k: { path?: string; inline?: string }) => !!k.path !== !!k.inline,
    'set exactly one of path or inline',
  ),
);

export const controlPlaneSchema = v.union([
  strict({
    kubeconfig: kubeconfigRefSchema,
    timeoutSeconds: v.optional(v.pipe(v.number(), positive(), lte(3600))),
  }),
  endpointSchema,
]);

/** a static member: an endpoint and its name (one object, so an unknown key is one issue) */
export const staticMemberSchema = parsing(
  v.pipe(strict({ ...endpointShape, name: clusterName }), superRefine(endpointRefine)),
);

/**
 * Shared reads (src/upstreams/cache/): what Kubernetes itself answers from a cache (`resourceVersion=0`
 * lists and gets, discovery, OpenAPI) may be coalesced and kept; nothing else ever is.
 */
export const cacheSchema = parsing(
  strict({
    /**
     * how long a kept answer is served (0: nothing is kept). Off by default: a kept RV=0 list may be up to
     * this much older than the cluster's own watch cache would answer, which kube allows but an operator
     * should choose
     */
    ttlSeconds: v.optional(v.pipe(v.number(), int(), gte(0), lte(3600)), 0),
    /** kept answers' bytes together, per process (Node) or isolate (Workers); one answer ≤ a quarter */
    maxBytes: v.optional(v.pipe(v.number(), int(), gte(1024), lte(4 * 1024 * 1024 * 1024)), 64 * 1024 * 1024),
    /**
     * identical concurrent any-version reads share one upstream call (on by default: a read joining one
     * in flight gets nothing older than the call it joined, which "any version" allows)
     */
    coalesce: v.optional(v.boolean(), true),
    /** a reader of a shared answer this many bytes behind the fastest is detached (it re-reads alone) */
    lagBytes: v.optional(v.pipe(v.number(), int(), gte(64 * 1024))),
    /**
     * ask discovery and OpenAPI as this identity for every caller (impersonate mode only), so that one
     * kept answer serves all: for clusters where every caller sees the same discovery, as kube's own
     * system:discovery and system:public-info-viewer roles for system:authenticated give
     */
    publicIdentity: v.optional(
      strict({
        user: v.pipe(v.string(), minLength(1)),
        groups: v.optional(v.array(v.pipe(v.string(), minLength(1)))),
      }),
    ),
  }),
);
export type CacheConfig = v.InferOutput<typeof cacheSchema>;

export const configSchema = parsing(
  strict({
    controlPlane: controlPlaneSchema,
    members: v.optional(
      v.variant('mode', [
        v.strictOption({
          mode: v.literal('karmada'),
          /** how long a Cluster list is trusted before it is fetched again */
          refreshSeconds: v.optional(v.pipe(v.number(), gte(0), lte(3600)), 10),
        }),
        v.strictOption({
          mode: v.literal('static'),
          clusters: v.pipe(v.array(v.loose({ name: clusterName })), minLength(1)),
        }),
      ]),
      { mode: 'karmada', refreshSeconds: 10 },
    ),
    /** on: the control plane is one more cluster (`karmada`) and plain names mean it */
    federation: v.optional(v.boolean(), true),
    /** partial failures: false = answer with the rest and a Warning header, true = 503 */
    strict: v.optional(v.boolean(), false),
    timeouts: v.optional(
      strict({
        /** time to response headers from an upstream; streams (watch, logs) are not cut by it */
        requestSeconds: v.optional(v.pipe(v.number(), positive(), lte(3600)), 30),
        /**
         * longest silence inside a list body before the fleet re-reads that cluster's list at the same
         * resourceVersion; well under kubectl's own 32 s request timeout, so a stalled member costs a
         * re-read, not the client's whole request
         */
        bodyIdleSeconds: v.optional(v.pipe(v.number(), positive(), lte(3600)), 10),
      }),
      { requestSeconds: 30, bodyIdleSeconds: 10 },
    ),
    /** per-request upstream connection budget (6 on Workers); wider fan-outs are split */
    maxConnectionsPerRequest: v.optional(v.pipe(v.number(), int(), gte(1), lte(1000))),
    /**
     * HTTP/2 to the clusters, Node only (the Workers runtime's fetch chooses its own protocol): `alpn`
     * offers h2 to TLS upstreams and falls back to HTTP/1.1 where the server does not take it, `h2c` also
     * speaks h2 with prior knowledge to plain-HTTP ones, `off` is HTTP/1.1 (one connection per upstream
     * request). The environment variable FLEET_UPSTREAM_HTTP2, when set, overrides it.
     */
    upstreamHttp2: v.optional(v.picklist(['off', 'alpn', 'h2c']), 'off'),
    // identity and hardening (src/config/security.ts; README "Security")
    authentication: authenticationSchema,
    upstreamIdentity: upstreamIdentitySchema,
    callerImpersonation: callerImpersonationSchema,
    authorization: v.optional(authorizationSchema),
    audit: auditSchema,
    limits: limitsSchema,
    serving: v.optional(servingSchema),
    /** shared reads: coalescing and the short-lived cache (cacheSchema above) */
    cache: v.optional(cacheSchema, {}),
    /**
     * /metrics, protected like kube-apiserver's (nonResourceURLs: ["/metrics"], verb get): `authorized`
     * asks the control plane whether the caller may (a SelfSubjectAccessReview sent as the caller);
     * `authenticated` lets any authenticated caller read them; `off` serves none
     */
    metrics: v.optional(
      strict({ access: v.optional(v.picklist(['authorized', 'authenticated', 'off']), 'authorized') }),
      {},
    ),
  }),
);

export type FleetConfigInput = v.InferInput<typeof configSchema>;
export type FleetConfig = v.InferOutput<typeof configSchema>;
export type Endpoint = v.InferOutput<typeof endpointSchema>;

/** Thrown for any invalid configuration; the message names every offending field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * One line per problem. `where` is `config` (then `config.members.clusters[0].name: …`) or the file the
 * configuration came from (then `fleet.yaml: members.clusters[0].name: …`, the file named first).
 */
export function formatConfigError(
  err: { issues: Parameters<typeof flattenIssues>[0] },
  where = 'config',
): string {
  const named = where === 'config' || where.startsWith('config.');
  return flattenIssues(err.issues)
    .map((i) => {
      const path = i.path.length
        ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')
        : '';
      if (named || !path) return `${where}${path}: ${i.message}`;
      return `${where}: ${path.slice(1)}: ${i.message}`;
    })
    .join('\n');
}

export function parseConfig(input: unknown, where = 'config'): FleetConfig {
  const r = configSchema.safeParse(input);
  if (!r.success) throw new ConfigError(formatConfigError(r.error, where));
  // static members are validated in full here, so errors name the member's index
  if (r.data.members.mode === 'static') {
    const seen = new Set<string>();
    r.data.members.clusters.forEach((m, i) => {
      const e = staticMemberSchema.safeParse(m);
      if (!e.success) throw new ConfigError(formatConfigError(e.error, `${where}.members.clusters[${i}]`));
      if (seen.has(m.name))
        throw new ConfigError(`${where}.members.clusters[${i}].name: duplicate member "${m.name}"`);
      seen.add(m.name);
    });
  }
  return r.data;
}

/**
 * The fleet's configuration, validated with zod/mini (./zod.ts: the fleet's conventions and messages).
 *
 * The same schema serves both runtimes: Node reads it from a YAML/JSON file (deploy/node), the worker
 * from an env binding (src/worker.ts). File references (kubeconfig path, certificate files, tokenFile)
 * are resolved to inline data by the platform before validation of the resolved form, so everything
 * below `ResolvedConfig` is plain data that both runtimes can use.
 */
import * as z from 'zod/mini';
import {
  auditSchema,
  authenticationSchema,
  authorizationSchema,
  callerImpersonationSchema,
  limitsSchema,
  servingSchema,
  upstreamIdentitySchema,
} from './security.ts';
import {
  flattenIssues,
  gte,
  httpUrl,
  int,
  lte,
  maxLength,
  minLength,
  positive,
  type RefinementCtx,
  refine,
  regex,
  superRefine,
} from './zod.ts';

const RESERVED = new Set(['all', 'karmada']);

/** Karmada cluster names are DNS-1123 labels; `all` and `karmada` are clusterspaces, never members. */
export const clusterName = z.string().check(
  minLength(1),
  maxLength(63),
  regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label (lowercase letters, digits, -)'),
  refine((n) => !RESERVED.has(n), '"all" and "karmada" are reserved clusterspace names'),
);

/**
 * How to reach one API server. Field names follow kubeconfig's `cluster` and `user` entries
 * (camelCase), so a kubeconfig maps onto it one to one.
 */
const endpointShape = {
  server: httpUrl('must be an http(s) URL'),
  certificateAuthority: z.optional(z.string()),
  certificateAuthorityData: z.optional(z.string()),
  clientCertificate: z.optional(z.string()),
  clientCertificateData: z.optional(z.string()),
  clientKey: z.optional(z.string()),
  clientKeyData: z.optional(z.string()),
  token: z.optional(z.string()),
  tokenFile: z.optional(z.string()),
  insecureSkipTLSVerify: z.optional(z.boolean()),
  /** worker runtime: name of an `mtls_certificates` binding to present as client certificate */
  mtlsCertificateBinding: z.optional(z.string()),
  timeoutSeconds: z.optional(z.number().check(positive(), lte(3600))),
};

function endpointRefine(
  e: z.output<ReturnType<typeof z.strictObject<typeof endpointShape>>>,
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

export const endpointSchema = z.strictObject(endpointShape).check(superRefine(endpointRefine));

export const kubeconfigRefSchema = z
  .strictObject({
    /** path to a kubeconfig file (Node only) */
    path: z.optional(z.string()),
    /** the kubeconfig document itself, YAML or JSON (both runtimes) */
    inline: z.optional(z.string()),
    /** context to use; default: current-context */
    context: z.optional(z.string()),
  })
  .check(refine((k) => !!k.path !== !!k.inline, 'set exactly one of path or inline'));

export const controlPlaneSchema = z.union([
  z.strictObject({
    kubeconfig: kubeconfigRefSchema,
    timeoutSeconds: z.optional(z.number().check(positive(), lte(3600))),
  }),
  endpointSchema,
]);

/** a static member: an endpoint and its name (one object, so an unknown key is one issue) */
export const staticMemberSchema = z
  .strictObject({ ...endpointShape, name: clusterName })
  .check(superRefine(endpointRefine));

/**
 * Shared reads (src/upstreams/cache/): what Kubernetes itself answers from a cache (`resourceVersion=0`
 * lists and gets, discovery, OpenAPI) may be coalesced and kept; nothing else ever is.
 */
export const cacheSchema = z.strictObject({
  /**
   * how long a kept answer is served (0: nothing is kept). Off by default: a kept RV=0 list may be up to
   * this much older than the cluster's own watch cache would answer, which kube allows but an operator
   * should choose
   */
  ttlSeconds: z._default(z.number().check(int(), gte(0), lte(3600)), 0),
  /** kept answers' bytes together, per process (Node) or isolate (Workers); one answer ≤ a quarter */
  maxBytes: z._default(z.number().check(int(), gte(1024), lte(4 * 1024 * 1024 * 1024)), 64 * 1024 * 1024),
  /**
   * identical concurrent any-version reads share one upstream call (on by default: a read joining one
   * in flight gets nothing older than the call it joined, which "any version" allows)
   */
  coalesce: z._default(z.boolean(), true),
  /** a reader of a shared answer this many bytes behind the fastest is detached (it re-reads alone) */
  lagBytes: z.optional(z.number().check(int(), gte(64 * 1024))),
  /**
   * ask discovery and OpenAPI as this identity for every caller (impersonate mode only), so that one
   * kept answer serves all: for clusters where every caller sees the same discovery, as kube's own
   * system:discovery and system:public-info-viewer roles for system:authenticated give
   */
  publicIdentity: z.optional(
    z.strictObject({
      user: z.string().check(minLength(1)),
      groups: z.optional(z.array(z.string().check(minLength(1)))),
    }),
  ),
});
export type CacheConfig = z.output<typeof cacheSchema>;

export const configSchema = z.strictObject({
  controlPlane: controlPlaneSchema,
  members: z._default(
    z.discriminatedUnion('mode', [
      z.strictObject({
        mode: z.literal('karmada'),
        /** how long a Cluster list is trusted before it is fetched again */
        refreshSeconds: z._default(z.number().check(gte(0), lte(3600)), 10),
      }),
      z.strictObject({
        mode: z.literal('static'),
        clusters: z.array(z.looseObject({ name: clusterName })).check(minLength(1)),
      }),
    ]),
    { mode: 'karmada', refreshSeconds: 10 },
  ),
  /** on: the control plane is one more cluster (`karmada`) and plain names mean it */
  federation: z._default(z.boolean(), true),
  /** partial failures: false = answer with the rest and a Warning header, true = 503 */
  strict: z._default(z.boolean(), false),
  timeouts: z._default(
    z.strictObject({
      /** time to response headers from an upstream; streams (watch, logs) are not cut by it */
      requestSeconds: z._default(z.number().check(positive(), lte(3600)), 30),
      /**
       * longest silence inside a list body before the fleet re-reads that cluster's list at the same
       * resourceVersion; well under kubectl's own 32 s request timeout, so a stalled member costs a
       * re-read, not the client's whole request
       */
      bodyIdleSeconds: z._default(z.number().check(positive(), lte(3600)), 10),
    }),
    { requestSeconds: 30, bodyIdleSeconds: 10 },
  ),
  /** per-request upstream connection budget (6 on Workers); wider fan-outs are split */
  maxConnectionsPerRequest: z.optional(z.number().check(int(), gte(1), lte(1000))),
  // identity and hardening (src/config/security.ts; README "Security")
  authentication: authenticationSchema,
  upstreamIdentity: upstreamIdentitySchema,
  callerImpersonation: callerImpersonationSchema,
  authorization: z.optional(authorizationSchema),
  audit: auditSchema,
  limits: limitsSchema,
  serving: z.optional(servingSchema),
  /** shared reads: coalescing and the short-lived cache (cacheSchema above) */
  cache: z.prefault(cacheSchema, {}),
  /**
   * /metrics, protected like kube-apiserver's (nonResourceURLs: ["/metrics"], verb get): `authorized`
   * asks the control plane whether the caller may (a SelfSubjectAccessReview sent as the caller);
   * `authenticated` lets any authenticated caller read them; `off` serves none
   */
  metrics: z.prefault(
    z.strictObject({ access: z._default(z.enum(['authorized', 'authenticated', 'off']), 'authorized') }),
    {},
  ),
});

export type FleetConfigInput = z.input<typeof configSchema>;
export type FleetConfig = z.output<typeof configSchema>;
export type Endpoint = z.output<typeof endpointSchema>;

/** Thrown for any invalid configuration; the message names every offending field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * One line per problem. `where` is `config` (then `config.members.clusters[0].name: …`) or the file the
 * configuration came from (then `fleet.yaml: members.clusters[0].name: …`, the file named first).
 */
export function formatConfigError(err: z.core.$ZodError, where = 'config'): string {
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

/** the name src/fleet.ts formats a kubeconfig's endpoint errors with */
export const formatZodError = formatConfigError;

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

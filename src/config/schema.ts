/**
 * The fleet's configuration, validated with ./check.ts (a small zod-like checker).
 *
 * The same schema serves both runtimes: Node reads it from a YAML/JSON file (deploy/node), the worker
 * from an env binding (src/worker.ts). File references (kubeconfig path, certificate files, tokenFile)
 * are resolved to inline data by the platform before validation of the resolved form, so everything
 * below `ResolvedConfig` is plain data that both runtimes can use.
 */
import * as v from './check.ts';
import {
  auditSchema,
  authenticationSchema,
  authorizationSchema,
  callerImpersonationSchema,
  limitsSchema,
  servingSchema,
  upstreamIdentitySchema,
} from './security.ts';

const RESERVED = new Set(['all', 'karmada']);

/** Karmada cluster names are DNS-1123 labels; `all` and `karmada` are clusterspaces, never members. */
export const clusterName = v
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label (lowercase letters, digits, -)')
  .refine((n) => !RESERVED.has(n), { message: '"all" and "karmada" are reserved clusterspace names' });

/**
 * How to reach one API server. Field names follow kubeconfig's `cluster` and `user` entries
 * (camelCase), so a kubeconfig maps onto it one to one.
 */
const endpointShape = {
  server: v.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  certificateAuthority: v.string().optional(),
  certificateAuthorityData: v.string().optional(),
  clientCertificate: v.string().optional(),
  clientCertificateData: v.string().optional(),
  clientKey: v.string().optional(),
  clientKeyData: v.string().optional(),
  token: v.string().optional(),
  tokenFile: v.string().optional(),
  insecureSkipTLSVerify: v.boolean().optional(),
  /** worker runtime: name of an `mtls_certificates` binding to present as client certificate */
  mtlsCertificateBinding: v.string().optional(),
  timeoutSeconds: v.number().positive().max(3600).optional(),
};

function endpointRefine(e: v.output<v.ObjectSchema<typeof endpointShape>>, ctx: v.RefinementCtx): void {
  if (e.certificateAuthority && e.certificateAuthorityData)
    ctx.addIssue({
      code: 'custom',
      message: 'set certificateAuthority or certificateAuthorityData, not both',
    });
  if (e.token && e.tokenFile) ctx.addIssue({ code: 'custom', message: 'set token or tokenFile, not both' });
  const cert = e.clientCertificate || e.clientCertificateData;
  const key = e.clientKey || e.clientKeyData;
  if (!!cert !== !!key)
    ctx.addIssue({
      code: 'custom',
      message: 'a client certificate needs its key (and a key its certificate)',
    });
}

export const endpointSchema = v.object(endpointShape).strict().superRefine(endpointRefine);

export const kubeconfigRefSchema = v
  .object({
    /** path to a kubeconfig file (Node only) */
    path: v.string().optional(),
    /** the kubeconfig document itself, YAML or JSON (both runtimes) */
    inline: v.string().optional(),
    /** context to use; default: current-context */
    context: v.string().optional(),
  })
  .strict()
  .refine((k) => !!k.path !== !!k.inline, { message: 'set exactly one of path or inline' });

export const controlPlaneSchema = v.union([
  v
    .object({ kubeconfig: kubeconfigRefSchema, timeoutSeconds: v.number().positive().max(3600).optional() })
    .strict(),
  endpointSchema,
]);

/** a static member: an endpoint and its name (one object, so an unknown key is one issue) */
export const staticMemberSchema = v
  .object({ ...endpointShape, name: clusterName })
  .strict()
  .superRefine(endpointRefine);

/**
 * Shared reads (src/upstreams/cache/): what Kubernetes itself answers from a cache (`resourceVersion=0`
 * lists and gets, discovery, OpenAPI) may be coalesced and kept; nothing else ever is.
 */
export const cacheSchema = v
  .object({
    /**
     * how long a kept answer is served (0: nothing is kept). Off by default: a kept RV=0 list may be up to
     * this much older than the cluster's own watch cache would answer, which kube allows but an operator
     * should choose
     */
    ttlSeconds: v.number().int().min(0).max(3600).default(0),
    /** kept answers' bytes together, per process (Node) or isolate (Workers); one answer ≤ a quarter */
    maxBytes: v
      .number()
      .int()
      .min(1024)
      .max(4 * 1024 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    /**
     * identical concurrent any-version reads share one upstream call (on by default: a read joining one
     * in flight gets nothing older than the call it joined, which "any version" allows)
     */
    coalesce: v.boolean().default(true),
    /** a reader of a shared answer this many bytes behind the fastest is detached (it re-reads alone) */
    lagBytes: v
      .number()
      .int()
      .min(64 * 1024)
      .optional(),
    /**
     * ask discovery and OpenAPI as this identity for every caller (impersonate mode only), so that one
     * kept answer serves all: for clusters where every caller sees the same discovery, as kube's own
     * system:discovery and system:public-info-viewer roles for system:authenticated give
     */
    publicIdentity: v
      .object({ user: v.string().min(1), groups: v.array(v.string().min(1)).optional() })
      .strict()
      .optional(),
  })
  .strict();
export type CacheConfig = v.output<typeof cacheSchema>;

export const configSchema = v
  .object({
    controlPlane: controlPlaneSchema,
    members: v
      .discriminatedUnion('mode', [
        v
          .object({
            mode: v.literal('karmada'),
            /** how long a Cluster list is trusted before it is fetched again */
            refreshSeconds: v.number().min(0).max(3600).default(10),
          })
          .strict(),
        v
          .object({
            mode: v.literal('static'),
            clusters: v.array(v.object({ name: clusterName }).passthrough()).min(1),
          })
          .strict(),
      ])
      .default({ mode: 'karmada', refreshSeconds: 10 }),
    /** on: the control plane is one more cluster (`karmada`) and plain names mean it */
    federation: v.boolean().default(true),
    /** partial failures: false = answer with the rest and a Warning header, true = 503 */
    strict: v.boolean().default(false),
    timeouts: v
      .object({
        /** time to response headers from an upstream; streams (watch, logs) are not cut by it */
        requestSeconds: v.number().positive().max(3600).default(30),
        /**
         * longest silence inside a list body before the fleet re-reads that cluster's list at the same
         * resourceVersion; well under kubectl's own 32 s request timeout, so a stalled member costs a
         * re-read, not the client's whole request
         */
        bodyIdleSeconds: v.number().positive().max(3600).default(10),
      })
      .strict()
      .default({ requestSeconds: 30, bodyIdleSeconds: 10 }),
    /** per-request upstream connection budget (6 on Workers); wider fan-outs are split */
    maxConnectionsPerRequest: v.number().int().min(1).max(1000).optional(),
    // identity and hardening (src/config/security.ts; README "Security")
    authentication: authenticationSchema,
    upstreamIdentity: upstreamIdentitySchema,
    callerImpersonation: callerImpersonationSchema,
    authorization: authorizationSchema.optional(),
    audit: auditSchema,
    limits: limitsSchema,
    serving: servingSchema.optional(),
    /** shared reads: coalescing and the short-lived cache (cacheSchema above) */
    cache: cacheSchema.prefault({}),
    /**
     * /metrics, protected like kube-apiserver's (nonResourceURLs: ["/metrics"], verb get): `authorized`
     * asks the control plane whether the caller may (a SelfSubjectAccessReview sent as the caller);
     * `authenticated` lets any authenticated caller read them; `off` serves none
     */
    metrics: v
      .object({ access: v.enum(['authorized', 'authenticated', 'off']).default('authorized') })
      .strict()
      .prefault({}),
  })
  .strict();

export type FleetConfigInput = v.input<typeof configSchema>;
export type FleetConfig = v.output<typeof configSchema>;
export type Endpoint = v.output<typeof endpointSchema>;

/** Thrown for any invalid configuration; the message names every offending field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * One line per problem. `where` is `config` (then `config.members.clusters[0].name: …`) or the file the
 * configuration came from (then `fleet.yaml: members.clusters[0].name: …`, the file named first).
 */
export function formatConfigError(err: v.CheckError, where = 'config'): string {
  const named = where === 'config' || where.startsWith('config.');
  return err.issues
    .map((i) => {
      const path = i.path.length
        ? i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')
        : '';
      if (named || !path) return `${where}${path}: ${i.message}`;
      return `${where}: ${path.slice(1)}: ${i.message}`;
    })
    .join('\n');
}

/** the former name (from when the checker was zod) */
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

/**
 * The fleet's configuration, validated with zod. Every problem of a document is reported in one round,
 * each with its path (`fleet.yaml: members.clusters[1].name: …`), static members and the missing
 * authenticator included.
 *
 * The same schema serves both runtimes: Node reads it from a YAML/JSON file (deploy/node), the worker
 * from an env binding (src/worker.ts). File references (kubeconfig path, certificate files, tokenFile)
 * are resolved to inline data by the platform before validation of the resolved form, so everything
 * below `ResolvedConfig` is plain data that both runtimes can use.
 */
// a namespace import: `import { z }` would bundle every locale zod ships (≈ 250 KiB), this only the English one
import * as z from 'zod';
import { clusterProfilesSchema } from './clusterprofiles.ts';
import {
  auditSchema,
  authenticationSchema,
  authorizationSchema,
  callerImpersonationSchema,
  credentialRefine,
  httpUrl,
  limitsSchema,
  servingSchema,
  upstreamIdentitySchema,
} from './security.ts';

const RESERVED = new Set(['all', 'karmada']);

/**
 * The longest member name: Karmada's own limit on Cluster names (karmada-io/karmada
 * pkg/apis/cluster/validation/validation.go, `clusterNameMaxLength = 48`: 15 characters are kept for the
 * `karmada-es-` execution namespace), which is also the longest cluster the fleet-name codec
 * (src/merge/names/index.ts) decodes from `<name>.clusterspace.<cluster>`.
 */
export const MEMBER_NAME_MAX_LENGTH = 48;

/** Karmada cluster names are DNS-1123 labels; `all` and `karmada` are clusterspaces, never members. */
export const clusterName = z
  .string()
  .min(1, { abort: true })
  .max(MEMBER_NAME_MAX_LENGTH, {
    abort: true,
    message: `must be at most ${MEMBER_NAME_MAX_LENGTH} characters, as Karmada's Cluster names (the fleet could not tell <name>.clusterspace.<cluster> apart otherwise)`,
  })
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    abort: true,
    message: 'must be a DNS-1123 label (lowercase letters, digits, -)',
  })
  .refine((n) => !RESERVED.has(n), '"all" and "karmada" are reserved clusterspace names');

/**
 * How to reach one API server. Field names follow kubeconfig's `cluster` and `user` entries
 * (camelCase), so a kubeconfig maps onto it one to one.
 */
const endpointShape = {
  server: httpUrl('must be an http(s) URL'),
  certificateAuthority: z.string().optional(),
  certificateAuthorityData: z.string().optional(),
  clientCertificate: z.string().optional(),
  clientCertificateData: z.string().optional(),
  clientKey: z.string().optional(),
  clientKeyData: z.string().optional(),
  token: z.string().optional(),
  tokenFile: z.string().optional(),
  insecureSkipTLSVerify: z.boolean().optional(),
  /** worker runtime: name of an `mtls_certificates` binding to present as client certificate */
  mtlsCertificateBinding: z.string().optional(),
  timeoutSeconds: z.number().positive().lte(3600).optional(),
};

type EndpointFields = {
  certificateAuthority?: string | undefined;
  certificateAuthorityData?: string | undefined;
  clientCertificate?: string | undefined;
  clientCertificateData?: string | undefined;
  clientKey?: string | undefined;
  clientKeyData?: string | undefined;
  token?: string | undefined;
  tokenFile?: string | undefined;
};

function endpointRefine(e: EndpointFields, ctx: z.RefinementCtx): void {
  if (e.certificateAuthority && e.certificateAuthorityData)
    ctx.addIssue({
      code: 'custom',
      message: 'set certificateAuthority or certificateAuthorityData, not both',
    });
  credentialRefine(e, ctx);
}

export const endpointSchema = z.strictObject(endpointShape).superRefine(endpointRefine);

export const kubeconfigRefSchema = z
  .strictObject({
    /** path to a kubeconfig file (Node only) */
    path: z.string().optional(),
    /** the kubeconfig document itself, YAML or JSON (both runtimes) */
    inline: z.string().optional(),
    /** context to use; default: current-context */
    context: z.string().optional(),
  })
  .refine((k) => !!k.path !== !!k.inline, 'set exactly one of path or inline');

export const controlPlaneSchema = z.union([
  z.strictObject({
    kubeconfig: kubeconfigRefSchema,
    timeoutSeconds: z.number().positive().lte(3600).optional(),
  }),
  endpointSchema,
]);

/** a static member: an endpoint and its name (one object, so an unknown key is one issue) */
export const staticMemberSchema = z
  .strictObject({ ...endpointShape, name: clusterName })
  .superRefine(endpointRefine);

/** static members, each checked whole, and no name twice: every problem of the list in one round */
const staticMembersSchema = z
  .array(staticMemberSchema)
  .min(1)
  .superRefine((members, ctx) => {
    const seen = new Set<string>();
    members.forEach((m, i) => {
      if (seen.has(m.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate member "${m.name}"` });
      seen.add(m.name);
    });
  });

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
  ttlSeconds: z.number().int().gte(0).lte(3600).default(0),
  /** kept answers' bytes together, per process (Node) or isolate (Workers); one answer ≤ a quarter */
  maxBytes: z
    .number()
    .int()
    .gte(1024)
    .lte(4 * 1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
  /**
   * identical concurrent any-version reads share one upstream call (on by default: a read joining one
   * in flight gets nothing older than the call it joined, which "any version" allows)
   */
  coalesce: z.boolean().default(true),
  /** a reader of a shared answer this many bytes behind the fastest is detached (it re-reads alone) */
  lagBytes: z
    .number()
    .int()
    .gte(64 * 1024)
    .optional(),
  /**
   * ask discovery and OpenAPI as this identity for every caller (impersonate mode only), so that one
   * kept answer serves all: for clusters where every caller sees the same discovery, as kube's own
   * system:discovery and system:public-info-viewer roles for system:authenticated give
   */
  publicIdentity: z
    .strictObject({ user: z.string().min(1), groups: z.array(z.string().min(1)).optional() })
    .optional(),
});
export type CacheConfig = z.output<typeof cacheSchema>;

export const configSchema = z.strictObject({
  controlPlane: controlPlaneSchema,
  members: z
    .discriminatedUnion('mode', [
      z.strictObject({
        mode: z.literal('karmada'),
        /** how long a Cluster list is trusted before it is fetched again */
        refreshSeconds: z.number().gte(0).lte(3600).default(10),
      }),
      z.strictObject({ mode: z.literal('static'), clusters: staticMembersSchema }),
      // ClusterProfiles of a hub (KEP-4322), reached by their access providers (config/clusterprofiles.ts)
      clusterProfilesSchema(endpointSchema),
    ])
    .prefault({ mode: 'karmada' }),
  /** on: the control plane is one more cluster (`karmada`) and plain names mean it */
  federation: z.boolean().default(true),
  /** partial failures: false = answer with the rest and a Warning header, true = 503 */
  strict: z.boolean().default(false),
  timeouts: z
    .strictObject({
      /** time to response headers from an upstream; streams (watch, logs) are not cut by it */
      requestSeconds: z.number().positive().lte(3600).default(30),
      /**
       * longest silence inside a list body before the fleet re-reads that cluster's list at the same
       * resourceVersion; well under kubectl's own 32 s request timeout, so a stalled member costs a
       * re-read, not the client's whole request
       */
      bodyIdleSeconds: z.number().positive().lte(3600).default(10),
    })
    .prefault({}),
  /** per-request upstream connection budget (6 on Workers); wider fan-outs are split */
  maxConnectionsPerRequest: z.number().int().gte(1).lte(1000).optional(),
  /** clusters one request may ask at most (Workers 1000, Node unbounded); a wider one is refused (503) */
  maxClustersPerRequest: z.number().int().gte(1).optional(),
  /**
   * HTTP/2 to the clusters, Node only (the Workers runtime's fetch chooses its own protocol): `alpn`
   * offers h2 to TLS upstreams and falls back to HTTP/1.1 where the server does not take it, `h2c` also
   * speaks h2 with prior knowledge to plain-HTTP ones, `off` is HTTP/1.1 (one connection per upstream
   * request). The environment variable FLEET_UPSTREAM_HTTP2, when set, overrides it.
   */
  upstreamHttp2: z.enum(['off', 'alpn', 'h2c']).default('off'),
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
  metrics: z
    .strictObject({ access: z.enum(['authorized', 'authenticated', 'off']).default('authorized') })
    .prefault({}),
});

export type FleetConfigInput = z.input<typeof configSchema>;
export type FleetConfig = z.output<typeof configSchema>;
export type Endpoint = z.output<typeof endpointSchema>;

/** Thrown for any invalid configuration; the message names every offending field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface Issue {
  path: PropertyKey[];
  message: string;
}

/**
 * The issues as paths and messages. A value no option of a union accepts is told the issues of the
 * option that came closest (fewest issues, the first of a tie), so `controlPlane: {server: 'ftp://…'}`
 * hears about its server, not about a missing kubeconfig.
 */
export function flattenIssues(issues: readonly z.core.$ZodIssue[], at: PropertyKey[] = []): Issue[] {
  return issues.flatMap((i) => {
    const path = [...at, ...i.path];
    if (i.code === 'invalid_union' && i.errors.length) {
      const closest = i.errors.reduce((a, b) => (b.length < a.length ? b : a));
      return flattenIssues(closest, path);
    }
    return [{ path, message: i.message }];
  });
}

/**
 * One line per problem. `where` is `config` (then `config.members.clusters[0].name: …`) or the file the
 * configuration came from (then `fleet.yaml: members.clusters[0].name: …`, the file named first).
 */
export function formatConfigError(err: { issues: readonly z.core.$ZodIssue[] }, where = 'config'): string {
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
  return r.data;
}

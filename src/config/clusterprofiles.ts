/**
 * `members.mode: clusterProfiles`: the members are the ClusterProfile objects (multicluster.x-k8s.io,
 * KEP-4322) of a hub, each reached at the server of one of its access providers (KEP-5339) with the
 * credential the fleet's configuration names for that provider. docs/clusterprofile.md has the design.
 */
// a namespace import: `import { z }` would bundle every locale zod ships (≈ 250 KiB), this only the English one
import * as z from 'zod';
import { credentialRefine } from './security.ts';

/** a Kubernetes object name of the hub (namespace, Secret): a DNS-1123 label */
const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label (lowercase letters, digits, -)');

/**
 * One access provider the fleet can use, by the name profiles list it under
 * (`status.accessProviders[].name`). The provider's cluster entry gives server and CA; the credential
 * comes from here: the Secret the KEP-5339 `secretreader` plugin reads (`secretReader`), or a fixed one.
 * None: the call carries no fleet credential (upstreamIdentity passthrough forwards the caller's token).
 */
export const accessProviderSchema = z
  .strictObject({
    name: z.string().min(1).max(253),
    /**
     * the secretreader plugin's convention: the token is key `token` of the hub's Secret
     * `<namespace>/<clusterName>`, clusterName from the provider's `client.authentication.k8s.io/exec`
     * extension (the profile's name when it has none)
     */
    secretReader: z.strictObject({ namespace: dnsLabel }).optional(),
    token: z.string().min(1).optional(),
    tokenFile: z.string().min(1).optional(),
    clientCertificate: z.string().optional(),
    clientCertificateData: z.string().optional(),
    clientKey: z.string().optional(),
    clientKeyData: z.string().optional(),
    /** worker runtime: name of an `mtls_certificates` binding to present as client certificate */
    mtlsCertificateBinding: z.string().optional(),
  })
  .superRefine((p, ctx) => {
    const fixed = [
      p.token,
      p.tokenFile,
      p.clientCertificate,
      p.clientCertificateData,
      p.clientKey,
      p.clientKeyData,
      p.mtlsCertificateBinding,
    ].some((v) => v !== undefined);
    if (p.secretReader && fixed)
      ctx.addIssue({
        code: 'custom',
        message: 'secretReader reads the credential from the hub: set it or a fixed credential, not both',
      });
    credentialRefine(p, ctx);
  });
export type AccessProviderConfig = z.output<typeof accessProviderSchema>;

/** the members section in clusterProfiles mode; `hub` is checked with the endpoint schema by the caller */
export function clusterProfilesSchema<H extends z.ZodType>(hub: H) {
  return z.strictObject({
    mode: z.literal('clusterProfiles'),
    /** the cluster holding the ClusterProfiles; default: the control plane */
    hub: hub.optional(),
    /** the profiles' namespace (a ClusterSet, by the KEP); default: every namespace */
    namespace: dnsLabel.optional(),
    /** only profiles labelled `x-k8s.io/cluster-manager=<this>` (one manager's clusters) */
    clusterManager: z.string().min(1).max(63).optional(),
    /** the providers the fleet can use, in order of preference: a profile is reached by the first it lists */
    accessProviders: z
      .array(accessProviderSchema)
      .min(1)
      .superRefine((ps, ctx) => {
        const seen = new Set<string>();
        ps.forEach((p, i) => {
          if (seen.has(p.name))
            ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate provider "${p.name}"` });
          seen.add(p.name);
        });
      }),
    /** how long a profile list is trusted before it is fetched again */
    refreshSeconds: z.number().gte(0).lte(3600).default(10),
  });
}

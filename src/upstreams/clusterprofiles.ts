/**
 * Members from ClusterProfiles (multicluster.x-k8s.io/v1alpha1, KEP-4322) in a hub: each profile's
 * metadata.name is a member, reached at the server and CA of the first access provider (KEP-5339) it
 * lists that the fleet is configured for, with that provider's credential. What is pure (choosing the
 * provider, readiness, the endpoint) is apart from the one I/O step (listing, reading Secrets) so the unit
 * tests check it without a hub. docs/clusterprofile.md has the design and the conventions followed.
 */
import { clusterName } from '../config/schema.ts';
import { base64Decode } from '../util/base64.ts';
import type { UpstreamClient } from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';

export const CLUSTER_PROFILES = 'multicluster.x-k8s.io/v1alpha1';
/** the label a cluster manager puts on its profiles (cluster-inventory-api LabelClusterManagerKey) */
export const CLUSTER_MANAGER_LABEL = 'x-k8s.io/cluster-manager';
/** the extension whose `extension` an exec plugin receives as its cluster config (client-go, KEP-5339) */
export const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

/** one configured provider, its fixed credential resolved to data (or read per profile from the hub) */
export interface ProviderCredential {
  name: string;
  secretReader?: { namespace: string };
  certPem?: string;
  keyPem?: string;
  token?: () => string | undefined;
  mtlsBinding?: string;
}

export interface ClusterProfileSource {
  mode: 'clusterProfiles';
  refreshMs: number;
  hub: ResolvedEndpoint;
  namespace?: string;
  clusterManager?: string;
  providers: ProviderCredential[];
  /** time allowed until response headers, for the members */
  timeoutMs: number;
  /** what the runtime refuses of an endpoint (a private CA on Workers) throws: such a profile is left out */
  check?: (ep: ResolvedEndpoint, where: string) => void;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** the kubeconfig `cluster` entry of an access provider (clientcmd v1 field names) */
export interface ProviderCluster {
  server?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'proxy-url'?: string;
  extensions?: Array<{ name?: string; extension?: unknown }>;
}

export interface ClusterProfile {
  metadata?: { name?: string; namespace?: string };
  status?: {
    conditions?: Condition[];
    accessProviders?: Array<{ name?: string; cluster?: ProviderCluster }>;
    /** deprecated name of accessProviders; accessProviders wins for the same name (as the access library) */
    credentialProviders?: Array<{ name?: string; cluster?: ProviderCluster }>;
  };
}

/** A profile the fleet can address, before its credential is known. */
export interface ProfileAccess {
  name: string;
  namespace: string;
  provider: ProviderCredential;
  cluster: ProviderCluster;
  ready: boolean;
  reason?: string;
}

/** the list URL path of the source's profiles */
export function profilesPath(source: Pick<ClusterProfileSource, 'namespace' | 'clusterManager'>): string {
  const ns = source.namespace ? `/namespaces/${encodeURIComponent(source.namespace)}` : '';
  const q = source.clusterManager
    ? `?labelSelector=${encodeURIComponent(`${CLUSTER_MANAGER_LABEL}=${source.clusterManager}`)}`
    : '';
  return `/apis/${CLUSTER_PROFILES}${ns}/clusterprofiles${q}`;
}

/**
 * Ready as the KEP's conditions tell it: ControlPlaneHealthy True (the manager sees the cluster's API
 * server healthy) and not Joined False (a cluster leaving or not yet joined). A profile without
 * ControlPlaneHealthy is not ready, as a Karmada Cluster without Ready.
 */
export function profileReadiness(p: ClusterProfile): { ready: boolean; reason?: string } {
  const conds = p.status?.conditions ?? [];
  const healthy = conds.find((c) => c.type === 'ControlPlaneHealthy');
  const joined = conds.find((c) => c.type === 'Joined');
  if (healthy?.status !== 'True')
    return {
      ready: false,
      reason: healthy?.message || healthy?.reason || 'no ControlPlaneHealthy condition',
    };
  if (joined?.status === 'False')
    return { ready: false, reason: joined.message || joined.reason || 'not joined' };
  return { ready: true };
}

/** The first configured provider the profile lists (configuration order is preference, as the access library). */
export function chooseProvider(
  p: ClusterProfile,
  providers: readonly ProviderCredential[],
): { provider: ProviderCredential; cluster: ProviderCluster } | undefined {
  const offered = new Map<string, ProviderCluster>();
  for (const a of p.status?.credentialProviders ?? []) if (a.name) offered.set(a.name, a.cluster ?? {});
  for (const a of p.status?.accessProviders ?? []) if (a.name) offered.set(a.name, a.cluster ?? {});
  for (const provider of providers) {
    const cluster = offered.get(provider.name);
    if (cluster) return { provider, cluster };
  }
  return undefined;
}

/** the clusterName the secretreader plugin reads its Secret by (its exec extension), else the profile's name */
export function secretName(name: string, cluster: ProviderCluster): string {
  const ext = cluster.extensions?.find((e) => e.name === EXEC_EXTENSION)?.extension;
  const n = (ext as { clusterName?: unknown } | undefined)?.clusterName;
  return typeof n === 'string' && n ? n : name;
}

/**
 * The profiles the fleet can address, by name: a profile whose name is no valid member name, that
 * offers none of the configured providers, or whose provider gives no server is left out with a warning
 * (it could not be reached). The same name in two namespaces: the first namespace's, in name order.
 */
export function addressableProfiles(
  items: readonly ClusterProfile[],
  providers: readonly ProviderCredential[],
  warn: (m: string) => void = console.warn,
): ProfileAccess[] {
  const out = new Map<string, ProfileAccess>();
  const sorted = [...items].sort((a, b) => {
    const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
    const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  for (const p of sorted) {
    const name = p.metadata?.name ?? '';
    const namespace = p.metadata?.namespace ?? '';
    const where = `ClusterProfile ${namespace}/${name}`;
    const valid = clusterName.safeParse(name);
    if (!valid.success) {
      warn(`fleet: ignoring ${where}: its name ${valid.error.issues[0]?.message ?? 'is not valid'}`);
      continue;
    }
    if (out.has(name)) {
      warn(`fleet: ignoring ${where}: ${out.get(name)!.namespace}/${name} has the same member name`);
      continue;
    }
    const chosen = chooseProvider(p, providers);
    if (!chosen) {
      warn(
        `fleet: ignoring ${where}: it lists none of the configured access providers (${providers.map((x) => x.name).join(', ')})`,
      );
      continue;
    }
    if (!chosen.cluster.server || !/^https?:\/\//i.test(chosen.cluster.server)) {
      warn(`fleet: ignoring ${where}: access provider ${chosen.provider.name} gives no http(s) server`);
      continue;
    }
    if (chosen.cluster['proxy-url'])
      warn(
        `fleet: ${where}: access provider ${chosen.provider.name}'s proxy-url is not supported; dialling the server directly`,
      );
    out.set(name, { name, namespace, ...chosen, ...profileReadiness(p) });
  }
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const utf8 = new TextDecoder();

/** a short digest of a string (32-bit FNV-1a, hex): enough to tell one CA from the next */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}

/** A member's endpoint: the provider's server and CA, the credential given (a token read from the hub, or the provider's fixed one). */
export function profileEndpoint(a: ProfileAccess, timeoutMs: number, token?: string): ResolvedEndpoint {
  const server = a.cluster.server!.replace(/\/+$/, '');
  const caData = a.cluster['certificate-authority-data'];
  const fixedToken = a.provider.token;
  return {
    name: a.name,
    server,
    caPem: caData ? utf8.decode(base64Decode(caData)) : undefined,
    certPem: a.provider.certPem,
    keyPem: a.provider.keyPem,
    insecureSkipTLSVerify: a.cluster['insecure-skip-tls-verify'] ?? false,
    token: token !== undefined ? () => token : fixedToken,
    mtlsBinding: a.provider.mtlsBinding,
    timeoutMs,
    // a pool per member, as for static members; keyed by the CA too, so that a CA the manager rotates
    // gets a connection pool that trusts it
    poolKey: `${a.name}:${new URL(server).origin}:${fnv1a(caData ?? '')}`,
  };
}

export class ClusterProfileError extends Error {
  override name = 'ClusterProfileError';
}

async function failure(res: Response, what: string): Promise<ClusterProfileError> {
  const body = await res.text().catch(() => '');
  let message = body.slice(0, 200);
  try {
    message = JSON.parse(body).message ?? message;
  } catch {
    // not a Status; keep the text
  }
  return new ClusterProfileError(`${what} failed: ${res.status} ${message}`);
}

/** The secretreader token of one profile, read from the hub (undefined and a reason when it cannot be). */
async function readToken(
  client: Pick<UpstreamClient, 'send'>,
  hub: ResolvedEndpoint,
  namespace: string,
  name: string,
  signal?: AbortSignal,
): Promise<{ token?: string; reason?: string }> {
  const res = await client.send(hub, {
    method: 'GET',
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
    headers: new Headers({ Accept: 'application/json' }),
    signal,
  });
  if (!res.ok) return { reason: (await failure(res, `reading Secret ${namespace}/${name}`)).message };
  const secret = (await res.json()) as { data?: Record<string, string> };
  const data = secret.data?.token;
  if (!data) return { reason: `Secret ${namespace}/${name} has no "token" key` };
  try {
    return { token: utf8.decode(base64Decode(data)).trim() };
  } catch {
    return { reason: `Secret ${namespace}/${name}: "token" is not base64` };
  }
}

export interface ProfileMember {
  name: string;
  ready: boolean;
  reason?: string;
  endpoint: ResolvedEndpoint;
}

/** Lists the hub's profiles and makes each addressable one a member (the Secrets read side by side). */
export async function listProfileMembers(
  client: Pick<UpstreamClient, 'send'>,
  source: ClusterProfileSource,
  signal?: AbortSignal,
  warn: (m: string) => void = console.warn,
): Promise<ProfileMember[]> {
  const res = await client.send(source.hub, {
    method: 'GET',
    path: profilesPath(source),
    headers: new Headers({ Accept: 'application/json' }),
    signal,
  });
  if (!res.ok) throw await failure(res, 'listing ClusterProfiles');
  const list = (await res.json()) as { items?: ClusterProfile[] };
  const access = addressableProfiles(list.items ?? [], source.providers, warn);
  const members = await Promise.all(
    access.map(async (a): Promise<ProfileMember | undefined> => {
      let reason = a.reason;
      let token: string | undefined;
      const reader = a.provider.secretReader;
      if (reader) {
        const got = await readToken(
          client,
          source.hub,
          reader.namespace,
          secretName(a.name, a.cluster),
          signal,
        );
        token = got.token;
        // no credential: still a member (its calls answer 401 and say so), not ready, with why
        if (got.reason) reason = got.reason;
      }
      const endpoint = profileEndpoint(a, source.timeoutMs, token);
      // the manager says the cluster is down: not dialled, as a Karmada Cluster not Ready (a missing
      // credential is still dialled: the member answers 401 and says so)
      if (!a.ready) endpoint.notReady = `not ready in ClusterProfile ${a.namespace}/${a.name}: ${a.reason}`;
      try {
        source.check?.(endpoint, `ClusterProfile ${a.namespace}/${a.name}`);
      } catch (e) {
        warn(`fleet: ignoring ${(e as Error).message}`);
        return undefined;
      }
      return { name: a.name, ready: a.ready && !reason, reason, endpoint };
    }),
  );
  return members.filter((m): m is ProfileMember => m !== undefined);
}

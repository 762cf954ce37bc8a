/**
 * The kubeconfig the `fleet-apiserver kubeconfig` command writes, as pure functions: which contexts
 * (the fleet root, the control plane, one per member cluster, each a `/clusterspaces/<c>` server URL), and
 * how they merge into an existing kubeconfig the way `kubectl config set-*` does: entries of the same
 * name are replaced, everything else (other clusters, users, contexts, preferences, extensions) is kept.
 */

export interface AuthChoice {
  /** a bearer token written into the user entry */
  token?: string;
  /** an exec credential plugin (client.authentication.k8s.io), e.g. kubelogin */
  exec?: { command: string; args: string[]; apiVersion: string; env?: { name: string; value: string }[] };
  /** client certificate and key, embedded as data */
  clientCertificateData?: string;
  clientKeyData?: string;
  /** reference a user entry that already exists in the file instead of writing one */
  existingUser?: string;
}

export interface TlsChoice {
  /** base64 PEM of the CA that signed the fleet's serving certificate */
  certificateAuthorityData?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
}

export interface FleetKubeconfigInput {
  server: string;
  /** member cluster names, as the fleet sees them (without `karmada`) */
  members: string[];
  /** include a `karmada` context for the control plane (federation on) */
  controlPlane: boolean;
  auth: AuthChoice;
  tls: TlsChoice;
  /** name prefix of the cluster/user entries written (contexts are `fleet`, `karmada`, `<member>`) */
  prefix: string;
  namespace?: string;
}

type Named<T> = { name: string } & T;
export interface Kubeconfig {
  apiVersion: string;
  kind: string;
  clusters: Named<{ cluster: Record<string, unknown> }>[];
  users: Named<{ user: Record<string, unknown> }>[];
  contexts: Named<{ context: Record<string, unknown> }>[];
  'current-context'?: string;
  [k: string]: unknown;
}

export function buildFleetKubeconfig(input: FleetKubeconfigInput): Kubeconfig {
  const base = input.server.replace(/\/+$/, '');
  const userName = input.auth.existingUser ?? `${input.prefix}user`;
  const cluster = (server: string) => ({
    server,
    ...(input.tls.certificateAuthorityData
      ? { 'certificate-authority-data': input.tls.certificateAuthorityData }
      : {}),
    ...(input.tls.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(input.tls.tlsServerName ? { 'tls-server-name': input.tls.tlsServerName } : {}),
  });
  const targets: { context: string; cluster: string; server: string }[] = [
    { context: 'fleet', cluster: `${input.prefix}root`, server: base },
  ];
  if (input.controlPlane)
    targets.push({
      context: 'karmada',
      cluster: `${input.prefix}karmada`,
      server: `${base}/clusterspaces/karmada`,
    });
  for (const m of [...input.members].sort())
    targets.push({ context: m, cluster: `${input.prefix}${m}`, server: `${base}/clusterspaces/${m}` });
  const users: Kubeconfig['users'] = [];
  if (!input.auth.existingUser) users.push({ name: userName, user: userEntry(input.auth) });
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: targets.map((t) => ({ name: t.cluster, cluster: cluster(t.server) })),
    users,
    contexts: targets.map((t) => ({
      name: t.context,
      context: {
        cluster: t.cluster,
        user: userName,
        ...(input.namespace ? { namespace: input.namespace } : {}),
      },
    })),
  };
}

function userEntry(auth: AuthChoice): Record<string, unknown> {
  if (auth.token) return { token: auth.token };
  if (auth.exec)
    return {
      exec: {
        apiVersion: auth.exec.apiVersion,
        command: auth.exec.command,
        args: auth.exec.args,
        ...(auth.exec.env?.length ? { env: auth.exec.env } : {}),
        interactiveMode: 'IfAvailable',
        provideClusterInfo: false,
      },
    };
  if (auth.clientCertificateData)
    return { 'client-certificate-data': auth.clientCertificateData, 'client-key-data': auth.clientKeyData };
  return {};
}

/** Merges `add` into `existing` as `kubectl config set-cluster/set-credentials/set-context` would. */
export function mergeKubeconfig(
  existing: Partial<Kubeconfig> | undefined,
  add: Kubeconfig,
  setCurrent: boolean,
) {
  const out: Kubeconfig = {
    ...(existing ?? {}),
    apiVersion: existing?.apiVersion ?? 'v1',
    kind: existing?.kind ?? 'Config',
    clusters: mergeNamed(existing?.clusters, add.clusters),
    users: mergeNamed(existing?.users, add.users),
    contexts: mergeNamed(existing?.contexts, add.contexts),
  };
  if (setCurrent || !out['current-context']) out['current-context'] = 'fleet';
  return out;
}

function mergeNamed<T extends { name: string }>(old: T[] | undefined | null, add: T[]): T[] {
  const byName = new Map((old ?? []).map((e) => [e.name, e]));
  for (const e of add) byName.set(e.name, e);
  return [...byName.values()];
}

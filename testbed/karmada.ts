/**
 * Karmada's control plane on loopback, beside a karmada-apiserver the bed started (testbed/kube.ts, with
 * the front-proxy flags aggregation needs), and the Push-mode join of member clusters: what `karmadactl
 * init` and `karmadactl join` do, step for step, with the binaries built from the Karmada module
 * (testbed/go/karmada) and the CRDs and webhook configuration read from that module.
 *
 * startKarmada():
 *   0. a kube-controller-manager for karmada-apiserver with the controllers Karmada's own manifest
 *      (artifacts/deploy/kube-controller-manager.yaml) runs there: namespaces can be deleted, deleted
 *      templates' bindings and Works are collected, service-account tokens, aggregated view/edit/admin;
 *   1. namespace karmada-system; Karmada's CRDs from the module's charts/karmada/_crds/bases (server-side
 *      apply, then Established). The CRD patches (conversion webhooks for the bindings) are not applied:
 *      they only matter when a v1alpha1 binding is read, which nothing here does;
 *   2. karmada-aggregated-apiserver: Cluster objects in the karmada-apiserver's etcd under its prefix (as
 *      Karmada's own manifests do: one etcd, one prefix), authentication and authorization delegated to
 *      karmada-apiserver (requestheader/front-proxy read from kube-system/extension-apiserver-authentication);
 *      its Service (ExternalName; on loopback the name is the address 127.0.0.1) and the APIService
 *      v1alpha1.cluster.karmada.io, waited Available;
 *   3. karmada-webhook and the webhook configurations of the module's artifacts/deploy/webhook-configuration.yaml,
 *      pointed at its loopback port (it labels each PropagationPolicy with the permanent id that the
 *      detector claims resources with);
 *   4. karmadactl init's grant: ClusterRole cluster-proxy-admin (clusters/proxy) bound to system:admin;
 *   5. karmada-scheduler and karmada-controller-manager.
 * joinMember(): see its comment.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { moduleDir } from './build.ts';
import {
  type Apiserver,
  applyObject,
  type Etcd,
  ensureObject,
  freshDir,
  must,
  startControllerManager,
} from './kube.ts';
import { createCA } from './pki.ts';
import {
  binary,
  freePort,
  httpsRequest,
  type Proc,
  startProcess,
  waitHealthy,
  waitUntil,
} from './process.ts';

export const KARMADA_MODULE = 'github.com/karmada-io/karmada';
const SYSTEM_NAMESPACE = 'karmada-system';
/** karmadactl join's default --cluster-namespace */
const CLUSTER_NAMESPACE = 'karmada-cluster';
/** the label karmadactl puts on what it creates (pkg/util KarmadaSystemLabel) */
const SYSTEM_LABEL = { 'karmada.io/system': 'true' };

export interface Karmada {
  apiserver: Apiserver;
  /** the aggregated apiserver's own loopback URL (karmada-apiserver reaches it through the APIService) */
  aggregatedUrl: string;
  /** every Karmada process, by component name */
  procs: Record<string, Proc>;
  /** members joined so far */
  members: string[];
  stop(): Promise<void>;
}

/** What a member offers to be joined: karmadactl join's cluster name and --cluster-kubeconfig identity. */
export interface JoinableMember {
  name: string;
  apiserver: Apiserver;
}

// ——— the module's files ———

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return yamlFiles(p);
      return f.endsWith('.yaml') ? [p] : [];
    });
}

function yamlDocs(file: string, rewrite: (text: string) => string = (t) => t): any[] {
  return parseAllDocuments(rewrite(readFileSync(file, 'utf8')))
    .map((d) => d.toJSON())
    .filter((d) => d && typeof d === 'object');
}

async function installCrds(api: Apiserver, module: string): Promise<void> {
  const names: string[] = [];
  for (const file of yamlFiles(join(module, 'charts/karmada/_crds/bases'))) {
    for (const crd of yamlDocs(file)) {
      if (crd.kind !== 'CustomResourceDefinition') continue;
      await applyObject(
        api,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        crd,
      );
      names.push(crd.metadata.name);
    }
  }
  await waitUntil(undefined, `${names.length} Karmada CRDs Established`, async () => {
    const list = await must(api, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
    const established = new Set(
      (list.items as any[])
        .filter((c) =>
          c.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True'),
        )
        .map((c) => c.metadata.name),
    );
    return names.every((n) => established.has(n));
  });
}

// ——— the control plane ———

export async function startKarmada(opts: {
  apiserver: Apiserver;
  etcd: Etcd;
  verbosity?: number;
}): Promise<Karmada> {
  const { apiserver, etcd } = opts;
  const module = moduleDir('karmada', KARMADA_MODULE);
  const dir = freshDir('karmada');
  // the components' serving certificates (the APIService's and webhooks' caBundle)
  const ca = createCA(join(dir, 'pki'), 'karmada-components-ca', { days: 30 });
  const caBundle = ca.certData;
  const kubeconfig = apiserver.adminKubeconfig;
  const v = `--v=${opts.verbosity ?? 2}`;
  const procs: Record<string, Proc> = {};
  const stop = async () => {
    for (const p of Object.values(procs).reverse()) await p.stop().catch(() => {});
  };
  const start = (name: string, args: string[]) => {
    const p = startProcess({ name, bin: binary(name), dir: join(dir, name), args: [...args, v] });
    procs[name] = p;
    return p;
  };
  try {
    procs['karmada-apiserver/kube-controller-manager'] = await startControllerManager(apiserver, [
      '--controllers=namespace,garbagecollector,serviceaccount-token,ttl-after-finished,bootstrapsigner,tokencleaner,csrcleaner,csrsigning,clusterrole-aggregation',
    ]);
    await ensureObject(apiserver, '/api/v1/namespaces', { metadata: { name: SYSTEM_NAMESPACE } });
    await installCrds(apiserver, module);

    // karmada-aggregated-apiserver: the Cluster API and the cluster proxy
    const service = `karmada-aggregated-apiserver.${SYSTEM_NAMESPACE}.svc`;
    const aaCert = ca.serving('karmada-aggregated-apiserver', {
      cn: 'karmada-aggregated-apiserver',
      dns: [service, 'localhost'],
    });
    const aaPort = await freePort();
    const aggregatedUrl = `https://127.0.0.1:${aaPort}`;
    const aa = start('karmada-aggregated-apiserver', [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--etcd-servers=${etcd.url}`,
      `--etcd-prefix=${apiserver.etcdPrefix}`,
      `--tls-cert-file=${aaCert.certFile}`,
      `--tls-private-key-file=${aaCert.keyFile}`,
      '--tls-min-version=VersionTLS13',
      '--bind-address=127.0.0.1',
      `--secure-port=${aaPort}`,
      `--cert-dir=${join(dir, 'karmada-aggregated-apiserver', 'cert-dir')}`,
    ]);
    await waitHealthy(aa, `${aggregatedUrl}/readyz`, { ca: ca.cert });
    await ensureObject(apiserver, `/api/v1/namespaces/${SYSTEM_NAMESPACE}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'karmada-aggregated-apiserver', namespace: SYSTEM_NAMESPACE },
      spec: { type: 'ExternalName', externalName: '127.0.0.1' },
    });
    const apiService = '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.cluster.karmada.io';
    await applyObject(apiserver, apiService, {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: {
        name: 'v1alpha1.cluster.karmada.io',
        labels: { app: 'karmada-aggregated-apiserver', apiserver: 'true' },
      },
      spec: {
        caBundle,
        group: 'cluster.karmada.io',
        groupPriorityMinimum: 2000,
        service: { name: 'karmada-aggregated-apiserver', namespace: SYSTEM_NAMESPACE, port: aaPort },
        version: 'v1alpha1',
        versionPriority: 10,
      },
    });
    await waitUntil(aa, 'APIService v1alpha1.cluster.karmada.io Available', async () => {
      const s = await must(apiserver, apiService);
      return s.status?.conditions?.some((c: any) => c.type === 'Available' && c.status === 'True') ?? false;
    });

    // karmadactl init: clusters/proxy for system:admin
    await applyObject(apiserver, '/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-proxy-admin', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'cluster-proxy-admin' },
      rules: [{ apiGroups: ['cluster.karmada.io'], resources: ['clusters/proxy'], verbs: ['*'] }],
    });
    await applyObject(
      apiserver,
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-proxy-admin',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'cluster-proxy-admin' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-proxy-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:admin' }],
      },
    );

    // karmada-webhook (controller-runtime's webhook server: no health check of its own, so ready is
    // "answers TLS on its port")
    // its serving certificate, written as <ca dir>/karmada-webhook.crt/.key (the flags below name them)
    ca.serving('karmada-webhook', { cn: 'karmada-webhook' });
    const whPort = await freePort();
    const wh = start('karmada-webhook', [
      `--kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${whPort}`,
      `--cert-dir=${ca.dir}`,
      '--tls-cert-file-name=karmada-webhook.crt',
      '--tls-private-key-file-name=karmada-webhook.key',
      '--metrics-bind-address=0',
      `--health-probe-bind-address=127.0.0.1:${await freePort()}`,
    ]);
    await waitUntil(wh, 'karmada-webhook serving', async () => {
      const r = await httpsRequest(`https://127.0.0.1:${whPort}/readyz`, { ca: ca.cert });
      return r.status > 0;
    });
    for (const c of yamlDocs(join(module, 'artifacts/deploy/webhook-configuration.yaml'), (t) =>
      t
        .replaceAll('{{caBundle}}', caBundle)
        .replaceAll('karmada-webhook.karmada-system.svc:443', `127.0.0.1:${whPort}`),
    )) {
      const plural = `${c.kind.toLowerCase()}s`;
      await applyObject(apiserver, `/apis/admissionregistration.k8s.io/v1/${plural}/${c.metadata.name}`, c);
    }

    // karmada-scheduler and karmada-controller-manager
    for (const [name, extra] of [
      ['karmada-scheduler', []],
      // Karmada's manifests set the same 10 s status frequency
      ['karmada-controller-manager', ['--cluster-status-update-frequency=10s']],
    ] as const) {
      const probe = await freePort();
      const p = start(name, [
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=0',
        `--health-probe-bind-address=127.0.0.1:${probe}`,
        ...extra,
      ]);
      await waitHealthy(p, `http://127.0.0.1:${probe}/healthz`, {});
    }
    return { apiserver, aggregatedUrl, procs, members: [], stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

// ——— karmadactl join ———

/** Asks the token controller for a service account's token Secret and waits for it (karmadactl's wait, 30 s). */
async function serviceAccountToken(api: Apiserver, sa: string): Promise<{ token: string; ca: string }> {
  const secrets = `/api/v1/namespaces/${CLUSTER_NAMESPACE}/secrets`;
  await ensureObject(api, secrets, {
    metadata: { name: sa, annotations: { 'kubernetes.io/service-account.name': sa } },
    type: 'kubernetes.io/service-account-token',
  });
  let out: { token: string; ca: string } | undefined;
  await waitUntil(
    undefined,
    `${api.name}: the token of service account ${CLUSTER_NAMESPACE}/${sa}`,
    async () => {
      const s = await must(api, `${secrets}/${sa}`);
      if (s.data?.token) out = { token: s.data.token, ca: s.data['ca.crt'] ?? '' };
      return out !== undefined;
    },
    30_000,
  );
  return out!;
}

/**
 * Joins a member in Push mode as `karmadactl join <name> --cluster-kubeconfig=<member admin>` does
 * (pkg/karmadactl/join and pkg/util/credential.go of the pinned module):
 *   on the member: namespace karmada-cluster (label karmada.io/system=true); service account
 *   karmada-impersonator and its token Secret; service account karmada-<name> and its token Secret,
 *   with ClusterRole and ClusterRoleBinding karmada-controller-manager:karmada-<name> (every verb on every
 *   resource, get on every non-resource URL);
 *   on the control plane: namespace karmada-cluster; Secret <name>-impersonator {token}; Secret <name>
 *   {caBundle, token}; the Cluster (syncMode Push, apiEndpoint, id = the member's kube-system uid,
 *   secretRef, impersonatorSecretRef); then both Secrets owned by the Cluster.
 * What the impersonator may impersonate on the member is written later by karmada-controller-manager
 * (unified auth): exactly the subjects bound to clusters/proxy on the control plane.
 */
export async function joinMember(karmada: Karmada, member: JoinableMember): Promise<void> {
  const m = member.apiserver;
  const cp = karmada.apiserver;
  const name = member.name;
  const id = (await must(m, '/api/v1/namespaces/kube-system')).metadata.uid as string;
  await ensureObject(m, '/api/v1/namespaces', {
    metadata: { name: CLUSTER_NAMESPACE, labels: SYSTEM_LABEL },
  });
  const sas = `/api/v1/namespaces/${CLUSTER_NAMESPACE}/serviceaccounts`;
  await ensureObject(m, sas, { metadata: { name: 'karmada-impersonator', labels: SYSTEM_LABEL } });
  const impersonator = await serviceAccountToken(m, 'karmada-impersonator');
  const sa = `karmada-${name}`;
  const role = `karmada-controller-manager:${sa}`;
  await ensureObject(m, sas, { metadata: { name: sa, labels: SYSTEM_LABEL } });
  await ensureObject(m, '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: role, labels: SYSTEM_LABEL },
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['get'] },
    ],
  });
  await ensureObject(m, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: role, labels: SYSTEM_LABEL },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: CLUSTER_NAMESPACE }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  });
  const credential = await serviceAccountToken(m, sa);

  await ensureObject(cp, '/api/v1/namespaces', {
    metadata: { name: CLUSTER_NAMESPACE, labels: SYSTEM_LABEL },
  });
  const secrets = `/api/v1/namespaces/${CLUSTER_NAMESPACE}/secrets`;
  const impersonatorSecret = `${name}-impersonator`;
  await ensureObject(cp, secrets, {
    metadata: { name: impersonatorSecret, labels: SYSTEM_LABEL },
    data: { token: impersonator.token },
  });
  await ensureObject(cp, secrets, {
    metadata: { name, labels: SYSTEM_LABEL },
    data: { caBundle: credential.ca, token: credential.token },
  });
  const cluster = await must(cp, '/apis/cluster.karmada.io/v1alpha1/clusters', {
    method: 'POST',
    body: {
      apiVersion: 'cluster.karmada.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name },
      spec: {
        syncMode: 'Push',
        apiEndpoint: m.url,
        id,
        secretRef: { namespace: CLUSTER_NAMESPACE, name },
        impersonatorSecretRef: { namespace: CLUSTER_NAMESPACE, name: impersonatorSecret },
        insecureSkipTLSVerification: false,
      },
    },
  });
  const owner = {
    metadata: {
      ownerReferences: [
        {
          apiVersion: 'cluster.karmada.io/v1alpha1',
          kind: 'Cluster',
          name,
          uid: cluster.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  };
  for (const s of [impersonatorSecret, name])
    await must(cp, `${secrets}/${s}`, {
      method: 'PATCH',
      body: owner,
      contentType: 'application/merge-patch+json',
    });
  karmada.members.push(name);
}

/** The Cluster as Karmada's controllers wrote it, once its Ready condition is True. */
export async function waitClusterReady(karmada: Karmada, name: string, timeoutMs = 120_000): Promise<any> {
  let cluster: any;
  await waitUntil(
    karmada.procs['karmada-controller-manager'],
    `Cluster ${name} Ready`,
    async () => {
      cluster = await must(karmada.apiserver, `/apis/cluster.karmada.io/v1alpha1/clusters/${name}`);
      return cluster.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    timeoutMs,
  );
  return cluster;
}

/**
 * Whether the rules of a member's karmada-impersonator ClusterRole (written by karmada-controller-manager's
 * unified auth) let Karmada impersonate `name` there, as a user or as a group.
 */
export function impersonatorMay(
  role: { rules?: { resources?: string[]; resourceNames?: string[] }[] } | undefined,
  resource: 'users' | 'groups',
  name: string,
): boolean {
  return (role?.rules ?? []).some((x) => x.resources?.includes(resource) && x.resourceNames?.includes(name));
}

/**
 * Lets `user` reach the members through the cluster proxy: a ClusterRoleBinding to cluster-proxy-admin
 * (clusters/proxy) on the control plane, then the wait until karmada-controller-manager's unified auth has
 * written the user into every member's karmada-impersonator ClusterRole. Karmada impersonates the caller's
 * user name on the member, so a user who holds clusters/proxy only through a group (system:masters
 * included) is refused there: the binding has to name the user.
 */
export async function grantClusterProxy(karmada: Karmada, members: Apiserver[], user: string): Promise<void> {
  const name = `cluster-proxy:${user}`;
  await applyObject(karmada.apiserver, `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-proxy-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  for (const m of members)
    await waitUntil(
      karmada.procs['karmada-controller-manager'],
      `${m.name}: karmada-impersonator may impersonate ${user}`,
      async () => {
        const r = await m.request('/apis/rbac.authorization.k8s.io/v1/clusterroles/karmada-impersonator');
        return r.status === 200 && impersonatorMay(JSON.parse(r.body), 'users', user);
      },
    );
}

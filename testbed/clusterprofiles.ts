/**
 * A cluster inventory (KEP-4322) on the bed, as a cluster manager such as OCM publishes it: the
 * ClusterProfile CRD from sigs.k8s.io/cluster-inventory-api installed into a hub (karmada-apiserver), one
 * profile per member in namespace `fleet` whose `secretreader` access provider (KEP-5339) gives the
 * member's server and CA, and the provider's token in the hub's Secret `fleet-system/<clusterName>`: a
 * TokenRequest token of a member ServiceAccount bound to the fleet's ClusterRole. The fleet's user on the
 * hub may list profiles and read those Secrets, nothing more. docs/clusterprofile.md tells the same to users.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { moduleDir } from './build.ts';
import { type Apiserver, applyObject, ensureObject, must } from './kube.ts';
import { b64 } from './pki.ts';
import { waitUntil } from './process.ts';

/** the cluster-inventory-api release whose CRD the bed installs */
export const INVENTORY_MODULE = 'sigs.k8s.io/cluster-inventory-api@v0.1.0';
export const PROFILE_NAMESPACE = 'fleet';
export const SECRET_NAMESPACE = 'fleet-system';
export const PROVIDER = 'secretreader';
const GROUP_PATH = '/apis/multicluster.x-k8s.io/v1alpha1';
const CRD_NAME = 'clusterprofiles.multicluster.x-k8s.io';
/** the member ServiceAccount whose token the profiles' provider hands out */
const SA = { namespace: 'kube-system', name: 'fleet-apiserver' };

/** Installs the CRD into the hub and waits for it to be Established. */
export async function installClusterProfileCrd(hub: Apiserver): Promise<void> {
  const dir = moduleDir('kube', INVENTORY_MODULE);
  const crd = parse(
    readFileSync(join(dir, 'config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml'), 'utf8'),
  );
  await applyObject(hub, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`, crd);
  await waitUntil(undefined, 'the ClusterProfile CRD Established', async () => {
    const c = await must(hub, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`);
    return c.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True');
  });
}

/** The profiles' and the token Secrets' namespaces in the hub. */
async function ensureNamespaces(hub: Apiserver): Promise<void> {
  for (const ns of [PROFILE_NAMESPACE, SECRET_NAMESPACE])
    await ensureObject(hub, '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
}

/** The fleet user's rights on the hub: list the profiles, read the provider's token Secrets. */
export async function grantInventoryReader(hub: Apiserver, user: string): Promise<void> {
  await ensureNamespaces(hub);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }];
  await ensureObject(hub, `${rbac}/clusterroles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'fleet-apiserver-inventory' },
    rules: [
      {
        apiGroups: ['multicluster.x-k8s.io'],
        resources: ['clusterprofiles'],
        verbs: ['get', 'list', 'watch'],
      },
    ],
  });
  await ensureObject(hub, `${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'fleet-apiserver-inventory' },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'fleet-apiserver-inventory',
    },
    subjects,
  });
  // the secretreader plugin's Role (its README): get Secrets in the consumer's namespace
  await ensureObject(hub, `${rbac}/namespaces/${SECRET_NAMESPACE}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'secretreader', namespace: SECRET_NAMESPACE },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  });
  await ensureObject(hub, `${rbac}/namespaces/${SECRET_NAMESPACE}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'secretreader', namespace: SECRET_NAMESPACE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secretreader' },
    subjects,
  });
}

/** A day-long token of the member's fleet ServiceAccount, bound to the fleet's ClusterRole (grantFleet). */
async function memberToken(member: Apiserver): Promise<string> {
  await ensureObject(member, `/api/v1/namespaces/${SA.namespace}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: SA.name, namespace: SA.namespace },
  });
  await ensureObject(member, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'fleet-apiserver-serviceaccount' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'fleet-apiserver' },
    subjects: [{ kind: 'ServiceAccount', name: SA.name, namespace: SA.namespace }],
  });
  const tr = await must(member, `/api/v1/namespaces/${SA.namespace}/serviceaccounts/${SA.name}/token`, {
    method: 'POST',
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86_400 },
    },
  });
  return tr.status.token as string;
}

/** One member's profile (and its token Secret) in the hub, its conditions as a cluster manager reports them. */
export async function publishProfile(hub: Apiserver, member: Apiserver): Promise<void> {
  await ensureNamespaces(hub);
  const clusterName = `${member.name}-spoke`;
  await applyObject(hub, `/api/v1/namespaces/${SECRET_NAMESPACE}/secrets/${clusterName}`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: clusterName, namespace: SECRET_NAMESPACE },
    data: { token: b64(await memberToken(member)) },
  });
  const path = `${GROUP_PATH}/namespaces/${PROFILE_NAMESPACE}/clusterprofiles/${member.name}`;
  const meta = {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: {
      name: member.name,
      namespace: PROFILE_NAMESPACE,
      labels: { 'x-k8s.io/cluster-manager': 'fleet-testbed' },
    },
  };
  await applyObject(hub, path, {
    ...meta,
    spec: { displayName: member.name, clusterManager: { name: 'fleet-testbed' } },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    message: `${member.name} ${reason}`,
    lastTransitionTime: now,
  });
  // status is a subresource: written there, as the manager's status controller does
  await applyObject(hub, `${path}/status`, {
    ...meta,
    status: {
      conditions: [condition('ControlPlaneHealthy', 'Healthy'), condition('Joined', 'Joined')],
      version: { kubernetes: 'v1.35' },
      accessProviders: [
        {
          name: PROVIDER,
          cluster: {
            server: member.url,
            'certificate-authority-data': b64(member.ca),
            extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName } }],
          },
        },
      ],
    },
  });
}

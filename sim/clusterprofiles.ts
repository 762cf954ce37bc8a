/**
 * SimProfileHub: a cluster-inventory hub (KEP-4322). A SimCluster serving ClusterProfiles
 * (multicluster.x-k8s.io/v1alpha1) with one profile per member, as a cluster manager writes it: the
 * manager's label and spec, an access provider (KEP-5339) whose cluster entry gives the member's server,
 * and, for the secretreader provider, the token Secret `<secretNamespace>/<clusterName>` the plugin reads.
 * ControlPlaneHealthy follows the member's `faults.down`, as Cluster Ready does in SimKarmada.
 */

import type { KubeObject } from './catalog/types.ts';
import { SimCluster, type SimClusterOptions } from './cluster.ts';
import { timestamp } from './objects.ts';
import { grKey, objectKey } from './store.ts';

export const CLUSTER_PROFILES = {
  group: 'multicluster.x-k8s.io',
  version: 'v1alpha1',
  resource: 'clusterprofiles',
};
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };

export interface ProfileOptions {
  /** the profiles' namespace (default `fleet`) */
  namespace?: string;
  /** the access provider's name (default `secretreader`) */
  provider?: string;
  /** secretreader: where the token Secret lives (default `fleet-system`), and the token (default `<name>-token`) */
  secretNamespace?: string;
  token?: string;
  /** the cluster manager (spec.clusterManager.name and the x-k8s.io/cluster-manager label; default `sim-manager`) */
  manager?: string;
  /** base64 PEM of the CA the provider's cluster entry carries */
  caData?: string;
}

export class SimProfileHub extends SimCluster {
  private readonly profiled = new Map<string, { member: SimCluster; namespace: string }>();

  constructor(opts: Omit<SimClusterOptions, 'clusterInventory'> & { statusIntervalMs?: number }) {
    const { statusIntervalMs, ...rest } = opts;
    super({ seed: false, ...rest, clusterInventory: true });
    this.timer(() => this.syncProfiles(), statusIntervalMs ?? 200, true);
  }

  private ensureNamespace(name: string): void {
    if (!this.get(NAMESPACES, undefined, name)) this.create(NAMESPACES, { metadata: { name } });
  }

  /** A member's profile (and its Secret, for the secretreader provider), reached at `server`. */
  addProfile(name: string, member: SimCluster, server: string, o: ProfileOptions = {}): KubeObject {
    const namespace = o.namespace ?? 'fleet';
    const provider = o.provider ?? 'secretreader';
    const manager = o.manager ?? 'sim-manager';
    this.ensureNamespace(namespace);
    const cluster: Record<string, unknown> = { server };
    if (o.caData) cluster['certificate-authority-data'] = o.caData;
    if (provider === 'secretreader') {
      const secretNamespace = o.secretNamespace ?? 'fleet-system';
      const clusterName = `${name}-spoke`;
      cluster.extensions = [{ name: 'client.authentication.k8s.io/exec', extension: { clusterName } }];
      this.ensureNamespace(secretNamespace);
      if (!this.get(SECRETS, secretNamespace, clusterName))
        this.create(SECRETS, {
          metadata: { name: clusterName, namespace: secretNamespace },
          type: 'Opaque',
          data: { token: btoa(o.token ?? `${name}-token`) },
        } as KubeObject);
    }
    const profile = this.create(CLUSTER_PROFILES, {
      metadata: { name, namespace, labels: { 'x-k8s.io/cluster-manager': manager } },
      spec: { displayName: name, clusterManager: { name: manager } },
      status: {
        conditions: [],
        version: { kubernetes: member.options.kubernetesVersion },
        accessProviders: [{ name: provider, cluster }],
      },
    } as KubeObject);
    this.profiled.set(name, { member, namespace });
    this.syncProfiles();
    return profile;
  }

  /** The profile goes (a member leaving the inventory). */
  removeProfile(name: string): void {
    const p = this.profiled.get(name);
    if (!p) return;
    this.profiled.delete(name);
    this.remove(CLUSTER_PROFILES, p.namespace, name);
  }

  /** a read of the profiles sees the members as they are now (the timer alone would lag by its period) */
  protected override handle(req: Request, url: URL): Promise<Response> {
    if (url.pathname.includes('multicluster.x-k8s.io')) this.syncProfiles();
    return super.handle(req, url);
  }

  /** ControlPlaneHealthy and Joined follow each member, as a cluster manager's status controller writes them. */
  syncProfiles(): void {
    const gr = grKey(CLUSTER_PROFILES.group, CLUSTER_PROFILES.resource);
    for (const [name, { member, namespace }] of this.profiled) {
      const key = objectKey(namespace, name);
      const p = this.store.get(gr, key) as (KubeObject & Record<string, any>) | undefined;
      if (!p) continue;
      const healthy = !member.faults.down;
      const conds: any[] = p.status?.conditions ?? [];
      const prev = conds.find((c) => c.type === 'ControlPlaneHealthy');
      if (prev && (prev.status === 'True') === healthy) continue;
      const at = timestamp(this.clock());
      p.status = {
        ...p.status,
        conditions: [
          {
            type: 'ControlPlaneHealthy',
            status: healthy ? 'True' : 'False',
            reason: healthy ? 'Healthy' : 'Unreachable',
            message: healthy
              ? 'the cluster API server is healthy'
              : 'the cluster API server cannot be reached',
            lastTransitionTime: at,
          },
          { type: 'Joined', status: 'True', reason: 'Joined', message: 'joined', lastTransitionTime: at },
        ],
      };
      this.store.put(gr, key, p);
    }
  }
}

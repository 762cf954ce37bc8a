/**
 * SimKarmada: a karmada-apiserver. It is a SimCluster (role karmada) whose store holds one
 * cluster.karmada.io/v1alpha1 Cluster per member, kept in step with the member (Ready follows
 * `faults.down`), and which serves Karmada's cluster proxy
 * `/apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy/<rest>` by calling the member's fetch with
 * `/<rest>`, streaming the answer through (watches and log follows stay live).
 *
 * A member that cannot be reached answers like the real proxy: the UpgradeAwareHandler hands the dial
 * error to the REST responder, which writes it as a non-API error: HTTP 500, Status without a reason,
 * message `dial tcp <ip>:6443: connect: connection refused`.
 */

import { clusterNumber, karmadaClusterObject } from './catalog/samples.ts';
import type { KubeObject } from './catalog/types.ts';
import { SimCluster, type SimClusterOptions } from './cluster.ts';
import { timestamp } from './objects.ts';
import { notFound, type Status, statusResponse } from './status.ts';
import { grKey, objectKey } from './store.ts';

const CLUSTERS = { group: 'cluster.karmada.io', version: 'v1alpha1', resource: 'clusters' };
const PROXY_PATH = /^\/apis\/cluster\.karmada\.io\/v1alpha1\/clusters\/([^/]+)\/proxy(\/.*)?$/;

export interface SimKarmadaOptions extends Omit<SimClusterOptions, 'role'> {
  members: Map<string, SimCluster>;
  /** how often Cluster status follows the members (the cluster-status-controller's period); default 200 ms */
  clusterStatusIntervalMs?: number;
}

export function memberEndpoint(name: string): string {
  return `https://${name}.local:6443`;
}

function memberIp(name: string): string {
  return `172.18.0.${(clusterNumber(name) % 250) + 2}`;
}

export class SimKarmada extends SimCluster {
  readonly members: Map<string, SimCluster>;
  /**
   * how long a member must be down before its Cluster turns not Ready (karmada-controller-manager's
   * --cluster-failure-threshold, 30 s by default; here 0): while it lasts the proxy still dials the member
   */
  failureThresholdMs = 0;
  private readonly downSince = new Map<string, number>();

  constructor(opts: SimKarmadaOptions) {
    const { members, clusterStatusIntervalMs, ...rest } = opts;
    super({ ...rest, role: 'karmada' });
    this.members = members;
    for (const [name, m] of members) this.addMember(name, m);
    this.timer(() => this.syncClusters(), clusterStatusIntervalMs ?? 200, true);
  }

  /** Register a member (also for tests that grow the fleet): a Cluster object plus the proxy target. */
  addMember(name: string, member: SimCluster): void {
    this.members.set(name, member);
    if (this.get(CLUSTERS, undefined, name)) return;
    this.create(CLUSTERS, karmadaClusterObject(name, member.options.kubernetesVersion, memberEndpoint(name)));
    this.syncClusters();
  }

  /** Drop a member: its Cluster object goes (a DELETED event for watchers of clusters). */
  removeMember(name: string): void {
    this.members.delete(name);
    this.remove(CLUSTERS, undefined, name);
  }

  /** Ready condition and version follow each member, as karmada's cluster status controller does. */
  syncClusters(): void {
    const gr = grKey(CLUSTERS.group, CLUSTERS.resource);
    for (const [name, m] of this.members) {
      const c = this.store.get(gr, objectKey(undefined, name)) as
        | (KubeObject & Record<string, any>)
        | undefined;
      if (!c) continue;
      if (!m.faults.down) this.downSince.delete(name);
      else if (!this.downSince.has(name)) this.downSince.set(name, Date.now());
      const ready = !m.faults.down || Date.now() - this.downSince.get(name)! < this.failureThresholdMs;
      const conds: any[] = c.status?.conditions ?? [];
      const prev = conds.find((x) => x.type === 'Ready');
      const version = m.options.kubernetesVersion;
      if ((prev?.status === 'True') === ready && c.status?.kubernetesVersion === version) continue;
      const cond = ready
        ? {
            type: 'Ready',
            status: 'True',
            reason: 'ClusterReady',
            message: 'cluster is healthy and ready to accept workloads',
          }
        : {
            type: 'Ready',
            status: 'False',
            reason: 'ClusterNotReachable',
            message: 'cluster is not reachable',
          };
      c.status = {
        ...(c.status ?? {}),
        kubernetesVersion: version,
        conditions: [
          ...conds.filter((x) => x.type !== 'Ready'),
          {
            ...cond,
            lastTransitionTime:
              (prev?.status === 'True') === ready ? prev.lastTransitionTime : timestamp(this.clock()),
          },
        ],
      };
      this.store.put(gr, objectKey(undefined, name), c);
    }
  }

  protected override async handle(req: Request, url: URL): Promise<Response> {
    const m = PROXY_PATH.exec(url.pathname);
    if (!m) {
      if (url.pathname.includes('cluster.karmada.io')) this.syncClusters();
      return super.handle(req, url);
    }
    const name = decodeURIComponent(m[1]!);
    const rest = m[2] ?? '/';
    if (!this.get(CLUSTERS, undefined, name)) {
      return statusResponse(notFound(CLUSTERS.resource, CLUSTERS.group, name));
    }
    const member = this.members.get(name);
    const target = new URL(`${rest}${url.search}`, `https://${name}.local:6443`);
    const init: RequestInit = { method: req.method, headers: req.headers, signal: req.signal };
    if (req.method !== 'GET' && req.method !== 'HEAD') init.body = await req.arrayBuffer();
    try {
      if (!member) throw new TypeError('no such member');
      const res = await member.fetch(new Request(target, init));
      return new Response(res.body, {
        status: res.status,
        statusText: res.statusText,
        headers: new Headers(res.headers),
      });
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      const status: Status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `dial tcp ${memberIp(name)}:6443: connect: connection refused`,
        code: 500,
      };
      return statusResponse(status);
    }
  }
}

/** A karmada control plane plus members, wired together: the default demo and test fleet. */
export function createSimFleet(opts?: { members?: string[]; crdMembers?: string[]; seed?: boolean }): {
  karmada: SimKarmada;
  members: Map<string, SimCluster>;
} {
  const names = opts?.members ?? ['member1', 'member2', 'member3'];
  const crd = new Set(opts?.crdMembers ?? ['member2']);
  const members = new Map<string, SimCluster>();
  for (const name of names) {
    const m = new SimCluster({
      name,
      crds: crd.has(name),
      ...(opts?.seed !== undefined ? { seed: opts.seed } : {}),
    });
    members.set(name, m);
  }
  const karmada = new SimKarmada({
    name: 'karmada',
    members,
    crds: crd.size > 0,
    ...(opts?.seed !== undefined ? { seed: opts.seed } : {}),
  });
  return { karmada, members };
}

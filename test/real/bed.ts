/**
 * What the suites against the real bed know about it (provided by test/real/global-setup.ts), and kubectl
 * bound to a fleet or to one member directly.
 */
import { inject } from 'vitest';
import { Kubectl } from '../helpers/kubectl.ts';

export interface ClusterInfo {
  name: string;
  url: string;
  /** the cluster CA, PEM */
  ca: string;
  /** a system:masters kubeconfig for this cluster itself (not through any fleet), and its certificate */
  kubeconfig: string;
  admin: { cert: string; key: string };
  /** the line every container's log holds in this cluster (kwok's ClusterLogs) */
  logLine: string;
}

export interface FleetInfo {
  name: string;
  url: string;
  kubeconfig: string;
}

export interface BedInfo {
  fleets: { direct: FleetInfo; karmada?: FleetInfo };
  /** the CA of the fleets' serving certificates and of their users' client certificates, PEM */
  fleetCA: string;
  /** the bed's admin user (CN bed-admin, O system:masters), accepted by every fleet */
  admin: { cert: string; key: string };
  members: ClusterInfo[];
  karmadaApiserver: ClusterInfo;
}

declare module 'vitest' {
  export interface ProvidedContext {
    bed: BedInfo;
  }
}

export function bed(): BedInfo {
  return inject('bed');
}

/** kubectl through one of the bed's fleets, as the bed's admin user. */
export function fleetKubectl(fleet: FleetInfo): Kubectl {
  const b = bed();
  return new Kubectl(fleet.url, { caPem: b.fleetCA, clientCert: b.admin.cert, clientKey: b.admin.key });
}

/** kubectl straight to one cluster with its admin kubeconfig (to arrange and check what the fleet did). */
export function clusterKubectl(cluster: ClusterInfo): Kubectl {
  return new Kubectl(cluster.url, {
    caPem: cluster.ca,
    clientCert: cluster.admin.cert,
    clientKey: cluster.admin.key,
  });
}

/**
 * Which clusters of a clusterspace a collection request (list, watch, deletecollection) asks, and the
 * selectors each of them gets. The fleet owns two things in the selectors a client sends:
 * - label terms on `fleet.karmada.io/cluster` (the cluster label every object shows in the fleet view)
 *   choose clusters and are never forwarded;
 * - fleet names (`<name>.clusterspace.<cluster>`) in name field selectors (`metadata.name`,
 *   `involvedObject.name`) pin a cluster (`=`) or apply to one cluster only (`!=`), and go upstream as the
 *   plain name.
 * Pure: no I/O, no framework; a bad selector is a 400 Status returned, never thrown.
 */
import { CLUSTER_LABEL, SelectorError, splitClusterSelector } from '../kube/selectors.ts';
import type { Status } from '../kube/status.ts';
import { rewriteFieldSelectorNames } from '../merge/fieldnames.ts';

/** A label selector no object matches: asks a cluster for a collection's kind and columns, and no items. */
export const MATCHES_NOTHING = `${CLUSTER_LABEL},!${CLUSTER_LABEL}`;

export interface ClusterChoice<T extends { cluster: string }> {
  /** the targets to ask, in the order given (fleet order) */
  chosen: T[];
  /** the label selector every chosen cluster gets (cluster-label terms removed; '' for none) */
  labelForward: string;
  /** the field selector `cluster` gets (fleet names as plain names, terms about other clusters dropped) */
  fieldFor(cluster: string): string;
}

export interface ClusterChoiceInput<T extends { cluster: string }> {
  /** the client's `labelSelector` (absent: null or undefined) */
  labelSelector: string | null | undefined;
  /** the client's `fieldSelector` */
  fieldSelector: string | null | undefined;
  /** the clusters of the clusterspace, in fleet order */
  targets: readonly T[];
  /** the cluster a plain (suffix-less) name means here, if any (see plan/owner.ts `plainNameCluster`) */
  plainNameCluster: string | undefined;
}

/**
 * Splits the fleet's part off the client's selectors: the clusters they allow (`chosen`, possibly none)
 * and what goes upstream. Field terms pinning two different clusters choose nothing. Answers a 400 Status
 * for a selector that does not parse.
 */
export function chooseClusters<T extends { cluster: string }>(
  input: ClusterChoiceInput<T>,
): ClusterChoice<T> | Status {
  try {
    const split = splitClusterSelector(
      input.labelSelector,
      input.targets.map((t) => t.cluster),
    );
    const names = rewriteFieldSelectorNames(input.fieldSelector, {
      plainNameCluster: input.plainNameCluster,
    });
    if (names.matchesNothing) return { chosen: [], labelForward: split.forward, fieldFor: () => '' };
    const allowed = new Set(split.clusters);
    return {
      chosen: input.targets.filter(
        (t) => allowed.has(t.cluster) && (names.cluster === undefined || names.cluster === t.cluster),
      ),
      labelForward: split.forward,
      fieldFor: (cluster) => names.forwardFor(cluster),
    };
  } catch (e) {
    if (e instanceof SelectorError) return e.status;
    throw e;
  }
}

/**
 * Resources a leader election locks with (coordination.k8s.io Leases, and the LeaseCandidates of
 * coordinated leader election): at the fleet view their plain names mean the control plane in every
 * federation mode, as they do with federation on. A lock must be one object in one place: looked up in
 * every member (federation off) a plain name could be in several or in none, and two candidates would
 * each create their own and both lead. The members' own Leases (node heartbeats, their controllers')
 * stay theirs, by fleet name (`<name>.clusterspace.<member>`), and a list shows them beside the control
 * plane's.
 */
export function isElectionLock(info: { apiGroup: string; resource: string }): boolean {
  return (
    info.apiGroup === 'coordination.k8s.io' &&
    (info.resource === 'leases' || info.resource === 'leasecandidates')
  );
}

/**
 * Which one cluster a write goes to, when it is not the owner of a named object (src/plan/owner.ts):
 * - create: the cluster of the fleet name in `metadata.name` (or `generateName`, or `metadata.namespace`), else the URL's
 *   clusterspace, else (plain name, `all`) the plain-name cluster (the control plane with federation on),
 *   and a 400 saying how to name the cluster with federation off;
 * - deletecollection: only with a clusterspace naming one cluster (in-path form, or `karmada`); across
 *   the fleet it is a 405. Its selectors are the fleet's: the cluster label and fleet names are resolved
 *   for that cluster (src/plan/targets.ts).
 * Pure: every refusal is a Status returned.
 */
import { badRequest, failure, qualified, type Status } from '../kube/status.ts';
import { decodeName, isShortenedName, unresolvedMessage } from '../merge/names/index.ts';
import type { RequestInfo } from '../request/info.ts';
import { chooseClusters, MATCHES_NOTHING } from './targets.ts';

function nameTheCluster(
  info: Pick<RequestInfo, 'resource' | 'apiGroup'>,
  name: string,
  generate: boolean,
  targets: readonly { cluster: string }[],
): Status {
  const clusters = targets.map((t) => t.cluster).join(', ');
  const what = generate ? `generateName "${name}"` : `the name "${name}"`;
  const example = generate ? `${name}.clusterspace.<cluster>` : `${name || '<name>'}.clusterspace.<cluster>`;
  return badRequest(
    `${what} does not say which cluster to create the ${qualified(info.resource, info.apiGroup)} in (federation is off): ` +
      `set metadata.${generate ? 'generateName' : 'name'} to "${example}" (clusters: ${clusters}), ` +
      `or create it through /clusterspaces/<cluster>/… or …/clusterspaces/<cluster>/${info.resource}`,
  );
}

/**
 * The refusal of a name whose cluster is not in the fleet. When the cluster is a member's name with a
 * suffix (`member3-bdg947hgcc`), a generator appended it to a fleet name (kustomize's configMapGenerator
 * and secretGenerator hash the name they are given, after the cluster): the message says how to give
 * the generator the plain name instead, so the suffix stays in the name.
 */
function notInFleet(
  info: { namespace?: string },
  given: string,
  named: string,
  targets: readonly { cluster: string }[],
): string {
  const clusters = targets.map((t) => t.cluster);
  const base = `the name "${given}" names cluster "${named}", which is not in the fleet (clusters: ${clusters.join(', ')})`;
  const member = clusters.find((c) => named.startsWith(`${c}-`));
  if (member === undefined) return base;
  const plain = decodeName(given).name;
  const ns = decodeName(info.namespace || '<namespace>').name;
  return (
    `${base}; a suffix after the cluster (a generator's hash, as kustomize's configMapGenerator adds) cannot name one: ` +
    `generate the plain name "${plain}" in a namespace by fleet name (-n ${ns}.clusterspace.${member}, or ` +
    `namespace: ${ns}.clusterspace.${member} in the kustomization), or apply it through a per-cluster context ` +
    `(server <fleet URL>/clusterspaces/${member})`
  );
}

/** The cluster a create goes to, from the names in its body, the clusterspace and the plain-name cluster. */
export function createTarget<T extends { cluster: string }>(
  info: Pick<RequestInfo, 'resource' | 'apiGroup' | 'clusterspace'> & { namespace?: string },
  names: { name: string; generateName: string; namespace?: string },
  targets: readonly T[],
  plainNameCluster: string | undefined,
): T | Status {
  const given = names.name || names.generateName;
  // a shortened name stands for an object that exists: the same create would work or not by replica
  if (isShortenedName(given))
    return badRequest(
      unresolvedMessage(
        names.name ? 'metadata.name' : 'metadata.generateName',
        given,
        decodeName(given).cluster!,
        true,
      ),
    );
  const byName = decodeName(given).cluster;
  // a fleet-named metadata.namespace (src/plan/namespace.ts) says the cluster as well as a fleet name does
  const byNamespace = names.namespace ? decodeName(names.namespace).cluster : undefined;
  if (byName !== undefined && byNamespace !== undefined && byName !== byNamespace)
    return badRequest(
      `the name "${given}" names cluster "${byName}", which contradicts metadata.namespace "${names.namespace}"`,
    );
  const named = byName ?? byNamespace;
  const cs = info.clusterspace ?? 'all';
  const csCluster = cs !== 'all' ? targets[0]?.cluster : undefined;
  if (named !== undefined) {
    if (csCluster !== undefined && named !== csCluster)
      return badRequest(
        byName !== undefined
          ? `the name "${given}" names cluster "${named}", which contradicts the clusterspace "${cs}"`
          : `metadata.namespace "${names.namespace}" names cluster "${named}", which contradicts the clusterspace "${cs}"`,
      );
    const target = targets.find((t) => t.cluster === named);
    return target ?? badRequest(notInFleet(info, given, named, targets));
  }
  const cluster = csCluster ?? plainNameCluster;
  const target = cluster === undefined ? undefined : targets.find((t) => t.cluster === cluster);
  return target ?? nameTheCluster(info, given, !names.name && !!names.generateName, targets);
}

/** The one cluster a deletecollection may go to, or the 405 that says to name one. */
export function deleteCollectionTarget<T extends { cluster: string }>(
  info: Pick<RequestInfo, 'resource' | 'apiGroup' | 'clusterspace'>,
  targets: readonly T[],
): T | Status {
  const cs = info.clusterspace ?? 'all';
  if (cs !== 'all' && targets.length === 1) return targets[0]!;
  return failure(
    405,
    'MethodNotAllowed',
    `deletecollection is not supported on resources of kind "${qualified(info.resource, info.apiGroup)}" across the fleet; ` +
      `address one cluster: /clusterspaces/<cluster>/… or …/clusterspaces/<cluster>/${info.resource}`,
    { ...(info.apiGroup ? { group: info.apiGroup } : {}), kind: info.resource },
  );
}

/**
 * `query` with the fleet's selectors resolved for `cluster` (the only one asked): cluster-label terms
 * and fleet names removed or rewritten; selectors that leave this cluster out match nothing, so nothing
 * is deleted. Changes `query` in place.
 */
export function selectorsForCluster(query: URLSearchParams, cluster: string): URLSearchParams | Status {
  const choice = chooseClusters({
    labelSelector: query.get('labelSelector'),
    fieldSelector: query.get('fieldSelector'),
    targets: [{ cluster }],
    plainNameCluster: cluster,
  });
  if ('code' in choice) return choice;
  const label = choice.chosen.length === 0 ? MATCHES_NOTHING : choice.labelForward;
  if (label) query.set('labelSelector', label);
  else query.delete('labelSelector');
  const field = choice.fieldFor(cluster);
  if (field) query.set('fieldSelector', field);
  else query.delete('fieldSelector');
  return query;
}

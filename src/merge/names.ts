/**
 * The fleet name codec: `<name>.clusterspace.<cluster>` is how the fleet shows an object named `<name>`
 * that lives in member cluster `<cluster>`.
 *
 * Where to split. Karmada validates Cluster names as DNS-1123 labels of at most 48 characters
 * (karmada-io/karmada `pkg/apis/cluster/validation`: `ValidateClusterName`, `clusterNameMaxLength = 48`,
 * `IsDNS1123Label`): `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, no dots. So the cluster is everything after the LAST
 * `.clusterspace.`: splitting at an earlier occurrence would leave dots in the cluster part, which no
 * cluster name can have. Kubernetes names never contain `.clusterspace.` on their own, so in practice there
 * is exactly one occurrence; a name whose suffix is not a possible cluster name (`x.clusterspace.Bad_`,
 * `x.clusterspace.all`) or whose name part is empty is treated as a plain name.
 *
 * Reserved: `all` and `karmada` are clusterspaces, never member names. `<name>.clusterspace.karmada`
 * decodes to cluster `karmada` (the control plane, explicitly); `.clusterspace.all` does not decode.
 */

import type { Status } from '../kube/status.ts';

export const CLUSTERSPACE_SEPARATOR = '.clusterspace.';
/** Karmada's limit on Cluster names. */
export const CLUSTER_NAME_MAX_LENGTH = 48;
export const RESERVED_CLUSTERSPACES: ReadonlySet<string> = new Set(['all', 'karmada']);

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A name a member cluster may have: a DNS-1123 label of at most 48 characters, not `all` or `karmada`. */
export function isValidClusterName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= CLUSTER_NAME_MAX_LENGTH &&
    DNS1123_LABEL.test(name) &&
    !RESERVED_CLUSTERSPACES.has(name)
  );
}

/** `all`, `karmada`, or a valid member cluster name. */
export function isValidClusterspace(cs: string): boolean {
  return RESERVED_CLUSTERSPACES.has(cs) || isValidClusterName(cs);
}

/** `<name>.clusterspace.<cluster>`. */
export function encodeName(name: string, cluster: string): string {
  return name + CLUSTERSPACE_SEPARATOR + cluster;
}

export type DecodedName = { name: string; cluster: string } | { name: string; cluster: undefined };

/**
 * Splits a fleet name. A plain name (or anything that is not a well-formed fleet name) comes back whole
 * with `cluster: undefined`. Never throws.
 */
export function decodeName(fleetName: string): DecodedName {
  if (typeof fleetName !== 'string') return { name: String(fleetName), cluster: undefined };
  const at = fleetName.lastIndexOf(CLUSTERSPACE_SEPARATOR);
  if (at > 0) {
    const cluster = fleetName.slice(at + CLUSTERSPACE_SEPARATOR.length);
    if (cluster === 'karmada' || isValidClusterName(cluster)) {
      return { name: fleetName.slice(0, at), cluster };
    }
  }
  return { name: fleetName, cluster: undefined };
}

/**
 * Rewrites the quoted occurrences of `name` in an upstream message to `fleetName`:
 * `pods "web" not found` → `pods "web.clusterspace.member1" not found`. Only whole quoted tokens change
 * (`"web-1"` or `web` unquoted stay as they are).
 */
export function rewriteStatusMessage(message: string, name: string, fleetName: string): string {
  if (!name || name === fleetName) return message;
  const quoted = `"${name}"`;
  if (!message.includes(quoted)) return message;
  return message.split(quoted).join(`"${fleetName}"`);
}

/**
 * An upstream Status with the object's name shown as its fleet name: message and `details.name`.
 * Returns a new Status; the input is not changed.
 */
export function rewriteStatusNames(status: Status, name: string, fleetName: string): Status {
  const out: Status = { ...status };
  if (typeof status.message === 'string') out.message = rewriteStatusMessage(status.message, name, fleetName);
  if (status.details && status.details.name === name) out.details = { ...status.details, name: fleetName };
  if (status.details?.causes) {
    out.details = {
      ...(out.details ?? status.details),
      causes: status.details.causes.map((c) =>
        c.message ? { ...c, message: rewriteStatusMessage(c.message, name, fleetName) } : c,
      ),
    };
  }
  return out;
}
